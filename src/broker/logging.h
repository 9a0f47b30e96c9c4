/*
 * logging.h — leveled, one-line-per-event logs on stderr.
 *
 * Each line: "<UTC time> <LEVEL> kaasd: <message>".  Thread-safe (one
 * write(2)-sized fprintf per line).
 */
#ifndef KAAS_BROKER_LOGGING_H
#define KAAS_BROKER_LOGGING_H

enum kaas_log_level { KAAS_LOG_DEBUG = 0, KAAS_LOG_INFO, KAAS_LOG_WARN, KAAS_LOG_ERROR };

/* Set the lowest level printed (default INFO). */
void kaas_log_set_level(enum kaas_log_level l);
/* Parse "debug", "info", "warn", "error": 0 and *out, or -EINVAL. */
int kaas_log_parse_level(const char *s, enum kaas_log_level *out);
int kaas_log_enabled(enum kaas_log_level l);
void kaas_log(enum kaas_log_level l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define kaas_debug(...) kaas_log(KAAS_LOG_DEBUG, __VA_ARGS__)
#define kaas_info(...) kaas_log(KAAS_LOG_INFO, __VA_ARGS__)
#define kaas_warn(...) kaas_log(KAAS_LOG_WARN, __VA_ARGS__)
#define kaas_error(...) kaas_log(KAAS_LOG_ERROR, __VA_ARGS__)

#endif
