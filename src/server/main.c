/* main.c — kaasd: the kaas broker (configuration, volumes, then the server). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/log.h"
#include "kafka/batch.h"
#include "kafka/protocol.h"
#include "server/server.h"
#include "substrate/metered.h"
#include "util/logger.h"
#include "util/status.h"

/* A missing local data directory (a plain path or file:// URL) is created:
 * the parent is opened as a substrate and the last component made in it. */
static int create_local_root(const char *url)
{
	if (strstr(url, "://") && strncmp(url, "file://", 7) != 0)
		return -ENOENT;
	char *copy = strdup(url);
	if (!copy)
		return -ENOMEM;
	size_t n = strlen(copy);
	while (n > 1 && copy[n - 1] == '/')
		copy[--n] = '\0';
	char *slash = strrchr(copy, '/');
	const char *name = copy;
	const char *parent = ".";
	if (slash && slash > copy + (strncmp(copy, "file://", 7) == 0 ? 7 : 0)) {
		*slash = '\0';
		parent = copy;
		name = slash + 1;
	} else if (slash) {
		free(copy);
		return -ENOENT;
	}
	struct kaas_substrate *p = NULL;
	int rc = kaas_substrate_open(parent, &p);
	if (rc == -ENOENT && strcmp(parent, ".") != 0 && create_local_root(parent) == 0)
		rc = kaas_substrate_open(parent, &p);
	if (rc >= 0) {
		rc = kaas_sub_mkdirs(p, name, 0755);
		kaas_substrate_close(p);
	}
	free(copy);
	return rc < 0 ? rc : 0;
}

static int metered(struct kaas_substrate **sub)
{
	struct kaas_substrate *m = NULL;
	int rc = kaas_metered_wrap(*sub, &m);
	if (rc == 0)
		*sub = m;
	return rc;
}

int main(int argc, char **argv)
{
	static struct kaas_broker b;
	if (argc == 2 && strcmp(argv[1], "--api-versions") == 0) {
		kaas_api_table_print(stdout); /* the README's list (kafka/api_table.c) */
		return 0;
	}
	int rc = kaas_config_load(&b.cfg, argc, argv);
	if (rc == 1)
		return 0;
	if (rc < 0)
		return 2;
	kaas_logger_set_level((enum kaas_logger_level)b.cfg.log_level);
	/* Ctrl-C or SIGTERM during start-up: a clean stop once it is done. */
	kaas_early_signals_catch();
	signal(SIGPIPE, SIG_IGN);
	/* Fetch reads, metadata and admin work run on libuv's work queue and may
	 * wait on the volume: more than libuv's default 4 threads, unless the
	 * operator chose a size. */
	setenv("UV_THREADPOOL_SIZE", "16", 0);
	/* Every partition log shares one I/O pool and one open-file cache. */
	kaas_log_io_configure(b.cfg.log_io_threads, b.cfg.max_open_files);
	/* The log cleaner reads keys inside compressed batches (issue 21). */
	kaas_log_set_decompressor(kaas_batch_decompress);
	snprintf(b.cluster_id, sizeof(b.cluster_id), "kaas-cluster");
	rc = kaas_substrate_open(b.cfg.data_url, &b.data);
	if (rc == -ENOENT && create_local_root(b.cfg.data_url) == 0)
		rc = kaas_substrate_open(b.cfg.data_url, &b.data);
	if (rc < 0) {
		kaas_error("cannot open data volume %s: %s (%s)", b.cfg.data_url, kaas_strerror(rc),
			   kaas_sub_errdetail());
		return 1;
	}
	if (b.cfg.cluster_url) {
		rc = kaas_substrate_open(b.cfg.cluster_url, &b.cluster);
		if (rc < 0) {
			kaas_error("cannot open cluster volume %s: %s (%s)", b.cfg.cluster_url,
				   kaas_strerror(rc), kaas_sub_errdetail());
			kaas_substrate_close(b.data);
			return 1;
		}
	} else {
		/* <data>/__cluster on the same volume: a second view of it. */
		rc = kaas_sub_mkdirs(b.data, "__cluster", 0755);
		char *url = kaas_url_subdir(b.cfg.data_url, "__cluster");
		if (rc >= 0 && url) {
			rc = kaas_substrate_open(url, &b.cluster);
		} else if (rc >= 0) {
			rc = -ENOMEM;
		}
		free(url);
		if (rc < 0) {
			kaas_error("cannot open cluster directory %s/__cluster: %s (%s)",
				   b.cfg.data_url, kaas_strerror(rc), kaas_sub_errdetail());
			kaas_substrate_close(b.data);
			return 1;
		}
	}
	/* With the metrics endpoint on, every volume op is counted and timed. */
	if (b.cfg.http_host[0] && (metered(&b.data) < 0 || metered(&b.cluster) < 0)) {
		kaas_error("out of memory");
		kaas_substrate_close(b.cluster);
		kaas_substrate_close(b.data);
		return 1;
	}
	b.loop = uv_default_loop();
	kaas_info("starting: pid %ld, data %s, cluster %s%s", (long)getpid(), b.cfg.data_url,
		  b.cfg.cluster_url ? b.cfg.cluster_url : b.cfg.data_url,
		  b.cfg.cluster_url ? "" : "/__cluster");
	rc = kaas_server_run(&b);
	kaas_topics_close(b.topics);
	kaas_sweeper_free(&b.sweeper);
	b.topics = NULL;
	uv_loop_close(b.loop);
	kaas_substrate_close(b.cluster);
	kaas_substrate_close(b.data);
	kaas_config_free(&b.cfg);
	if (rc < 0) {
		kaas_error("stopped: %s", b.stop_why ? b.stop_why : kaas_strerror(rc));
		return 1;
	}
	kaas_info("stopped cleanly");
	return 0;
}
