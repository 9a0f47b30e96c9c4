/* inchild.c — see inchild.h. */
#include "tests/support/inchild.h"

#include <signal.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int ts_in_child(void (*fn)(void), char *err, size_t errlen)
{
	int p[2];
	if (errlen == 0 || pipe(p) != 0)
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(p[1], 2);
		close(p[0]);
		signal(SIGABRT, SIG_DFL);
		fn();
		_exit(0);
	}
	close(p[1]);
	size_t n = 0;
	ssize_t r;
	while (n + 1 < errlen && (r = read(p[0], err + n, errlen - 1 - n)) > 0)
		n += (size_t)r;
	err[n] = '\0';
	close(p[0]);
	int status;
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}
