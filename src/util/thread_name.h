/*
 * thread_name.h — kaasd's threads say what they are (ps -L, top -H, gdb,
 * perf --sort comm): docs/THREADS.md lists every name.
 */
#ifndef KAAS_UTIL_THREAD_NAME_H
#define KAAS_UTIL_THREAD_NAME_H

/* Name the calling thread.  `name`: at most 15 bytes (the kernel's limit;
 * asserted).  Advisory: a failure changes nothing else and is ignored. */
void kaas_thread_name(const char *name);

#endif
