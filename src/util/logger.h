/*
 * logger.h — leveled, one-line-per-event logs on stderr.
 *
 * Each line: "<UTC time> <LEVEL> kaasd: <message>".  Thread-safe (one
 * write(2)-sized fprintf per line).
 */
#ifndef KAAS_UTIL_LOGGER_H
#define KAAS_UTIL_LOGGER_H

enum kaas_logger_level { KAAS_LOGGER_DEBUG = 0, KAAS_LOGGER_INFO, KAAS_LOGGER_WARN, KAAS_LOGGER_ERROR };

/* Set the lowest level printed (default INFO). */
void kaas_logger_set_level(enum kaas_logger_level l);
/* Parse "debug", "info", "warn", "error": 0 and *out, or -EINVAL. */
int kaas_logger_parse_level(const char *s, enum kaas_logger_level *out);
int kaas_logger_enabled(enum kaas_logger_level l);
void kaas_logger_write(enum kaas_logger_level l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define kaas_debug(...) kaas_logger_write(KAAS_LOGGER_DEBUG, __VA_ARGS__)
#define kaas_info(...) kaas_logger_write(KAAS_LOGGER_INFO, __VA_ARGS__)
#define kaas_warn(...) kaas_logger_write(KAAS_LOGGER_WARN, __VA_ARGS__)
#define kaas_error(...) kaas_logger_write(KAAS_LOGGER_ERROR, __VA_ARGS__)

#endif
