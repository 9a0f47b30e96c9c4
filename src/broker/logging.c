/* logging.c — see logging.h. */
#include "broker/logging.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static enum kaas_log_level min_level = KAAS_LOG_INFO;

void kaas_log_set_level(enum kaas_log_level l)
{
	min_level = l;
}

int kaas_log_parse_level(const char *s, enum kaas_log_level *out)
{
	static const char *names[] = { "debug", "info", "warn", "error" };
	for (int i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0) {
			*out = (enum kaas_log_level)i;
			return 0;
		}
	if (strcmp(s, "warning") == 0) {
		*out = KAAS_LOG_WARN;
		return 0;
	}
	return -EINVAL;
}

int kaas_log_enabled(enum kaas_log_level l)
{
	return l >= min_level;
}

void kaas_log(enum kaas_log_level l, const char *fmt, ...)
{
	static const char *tags[] = { "DEBUG", "INFO", "WARN", "ERROR" };
	if (l < min_level)
		return;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (char *p = msg; *p; p++)
		if (*p == '\n')
			*p = ' ';
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	fprintf(stderr, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s kaasd: %s\n", tm.tm_year + 1900,
		tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000,
		tags[l], msg);
}
