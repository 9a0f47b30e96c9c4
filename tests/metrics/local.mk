# tests/metrics: the metrics registry, the /metrics, /healthz, /readyz
# endpoint and a Prometheus server scraping kaasd (issue 18).
check_PROGRAMS += tests/metrics/test_metrics
tests_metrics_test_metrics_SOURCES = tests/metrics/test_metrics.c
TESTS += tests/metrics/test_metrics tests/metrics/readyz.sh tests/metrics/many_fds.sh
# the status page, curl and headless Chromium (issue 39; both suites)
TESTS += tests/metrics/status_page.sh tests/metrics/status_failover.sh
EXTRA_DIST += tests/metrics/status_page.sh tests/metrics/status_page.mjs \
	tests/metrics/playwright-lib.sh tests/metrics/status_failover.sh
# A Prometheus server scraping for half a minute: the normal suite only (the
# sanitizer suite covers the registry and the endpoint with the two above).
if !SANITIZERS
TESTS += tests/metrics/prometheus.sh
endif
EXTRA_DIST += tests/metrics/metrics-lib.sh tests/metrics/prometheus.sh tests/metrics/readyz.sh \
	tests/metrics/many_fds.sh
