/* errdetail.c — the thread-local detail text behind a -errno. */
#include "substrate/substrate.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static _Thread_local char detail[1024];

int kaas_sub_fail(int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	return err > 0 ? -err : err;
}

const char *kaas_sub_errdetail(void)
{
	return detail;
}

void kaas_sub_clear_error(void)
{
	detail[0] = '\0';
}
