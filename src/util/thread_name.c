/* thread_name.c — see thread_name.h. */
#include "util/thread_name.h"

#include <assert.h>
#include <pthread.h>
#include <string.h>

void kaas_thread_name(const char *name)
{
	assert(name && strlen(name) <= 15);
	(void)pthread_setname_np(pthread_self(), name);
}
