/*
 * step.h — named steps of multi-step volume operations, where a test (or the
 * chaos nemesis) can make a process stop on purpose.
 *
 * A race in a multi-step operation (read, check, then write) is found only
 * when another actor runs between two of its steps.  Random pauses rarely
 * land there; a named step lets a test put the process exactly there.
 *
 * Code marks a step with kaas_step("controller.before-assignment-rename").
 * Names are lowercase, dotted "<component>.<where>", stable (tests and
 * scripts/chaos name them), listed in docs/ON-VOLUME.md beside the operation.
 *
 * Two ways to act on a step, both off (one relaxed atomic load) by default:
 *  - environment KAAS_PAUSE_AT="name[:ms][,name[:ms]...]", read once at the
 *    first kaas_step call: at a listed step the process writes
 *      "kaas-step: pause at NAME (pid P)\n"
 *    to stderr and then, without ":ms", stops itself with SIGSTOP (the test
 *    resumes it with SIGCONT); with ":ms" it sleeps that long instead.  Each
 *    listed step pauses once per process (the first time it is reached),
 *    unless KAAS_PAUSE_REPEAT=1.
 *  - an in-process hook (unit tests): kaas_step_set_hook(fn, arg) calls
 *    fn(arg, name) at every step, on the thread that reached it.
 *
 * Thread safety: kaas_step may be called from any thread.  set_hook is for
 * test setup (call it before the threads that reach steps start, or accept
 * that a step running concurrently may see the old hook).
 */
#ifndef KAAS_UTIL_STEP_H
#define KAAS_UTIL_STEP_H

typedef void (*kaas_step_hook)(void *arg, const char *name);

/* Mark a named step.  Returns after any pause the configuration asks for. */
void kaas_step(const char *name);

/* Install (or with fn == NULL, remove) the in-process hook. */
void kaas_step_set_hook(kaas_step_hook fn, void *arg);

#endif
