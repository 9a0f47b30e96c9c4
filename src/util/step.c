/* step.c — named pause points for targeted interleavings (see step.h). */
#include "util/step.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_STEPS 16

struct step_rule {
	char name[96];
	long ms;	/* < 0: SIGSTOP */
	atomic_int done;
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct step_rule rules[MAX_STEPS];
static int nrules;
static int repeat;
static atomic_int armed;	/* rules parsed and non-empty, or a hook set */
static _Atomic(kaas_step_hook) hook;
static void *_Atomic hook_arg;

static void parse_env(void)
{
	const char *env = getenv("KAAS_PAUSE_AT");
	const char *rep = getenv("KAAS_PAUSE_REPEAT");
	repeat = rep && *rep == '1';
	if (!env || !*env)
		return;
	char *copy = strdup(env), *save = NULL;
	if (!copy)
		return;
	for (char *tok = strtok_r(copy, ",", &save); tok && nrules < MAX_STEPS;
	     tok = strtok_r(NULL, ",", &save)) {
		struct step_rule *r = &rules[nrules];
		char *colon = strchr(tok, ':');
		r->ms = -1;
		if (colon) {
			*colon = '\0';
			r->ms = strtol(colon + 1, NULL, 10);
		}
		if (!*tok || strlen(tok) >= sizeof r->name)
			continue;
		strcpy(r->name, tok);
		nrules++;
	}
	free(copy);
	if (nrules > 0)
		atomic_store(&armed, 1);
}

static void pause_here(struct step_rule *r)
{
	char line[160];
	int n = snprintf(line, sizeof line, "kaas-step: pause at %s (pid %ld)\n", r->name,
			 (long)getpid());
	if (n > 0 && write(2, line, (size_t)n) < 0)
		(void)0;
	if (r->ms < 0) {
		raise(SIGSTOP);
		return;
	}
	struct timespec ts = { r->ms / 1000, (r->ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0)
		;
}

void kaas_step(const char *name)
{
	pthread_once(&once, parse_env);
	if (!atomic_load_explicit(&armed, memory_order_relaxed))
		return;
	kaas_step_hook fn = atomic_load(&hook);
	if (fn)
		fn(atomic_load(&hook_arg), name);
	for (int i = 0; i < nrules; i++) {
		struct step_rule *r = &rules[i];
		if (strcmp(r->name, name) != 0)
			continue;
		if (!repeat && atomic_exchange(&r->done, 1))
			return;
		pause_here(r);
		return;
	}
}

void kaas_step_set_hook(kaas_step_hook fn, void *arg)
{
	pthread_once(&once, parse_env);
	atomic_store(&hook_arg, arg);
	atomic_store(&hook, fn);
	if (fn)
		atomic_store(&armed, 1);
	else if (nrules == 0)
		atomic_store(&armed, 0);
}
