/* logger.c — see logger.h. */
#include "util/logger.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static enum kaas_logger_level min_level = KAAS_LOGGER_INFO;

void kaas_logger_set_level(enum kaas_logger_level l)
{
	min_level = l;
}

int kaas_logger_parse_level(const char *s, enum kaas_logger_level *out)
{
	static const char *names[] = { "debug", "info", "warn", "error" };
	for (int i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0) {
			*out = (enum kaas_logger_level)i;
			return 0;
		}
	if (strcmp(s, "warning") == 0) {
		*out = KAAS_LOGGER_WARN;
		return 0;
	}
	return -EINVAL;
}

int kaas_logger_enabled(enum kaas_logger_level l)
{
	return l >= min_level;
}

void kaas_logger_write(enum kaas_logger_level l, const char *fmt, ...)
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
