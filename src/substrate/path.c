/* path.c — checking and composing substrate-relative paths. */
#include "substrate/substrate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int kaas_path_check(const char *path)
{
	if (path == NULL)
		return -EINVAL;
	size_t n = strlen(path);
	if (n == 0)
		return 0; /* the root */
	if (n > 4095)
		return -ENAMETOOLONG;
	if (path[0] == '/')
		return -EINVAL;
	const char *p = path;
	for (;;) {
		const char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);
		if (len == 0)
			return -EINVAL; /* "a//b" or trailing "/" */
		if (len > 255)
			return -ENAMETOOLONG;
		if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		if (!slash)
			return 0;
		p = slash + 1;
	}
}

char *kaas_path_join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	char *s = malloc(a + b + 2);
	if (!s)
		return NULL;
	if (a == 0) {
		memcpy(s, name, b + 1);
		return s;
	}
	memcpy(s, dir, a);
	s[a] = '/';
	memcpy(s + a + 1, name, b + 1);
	return s;
}

char *kaas_path_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;
	char *s = malloc(n + 1);
	if (!s)
		return NULL;
	memcpy(s, path, n);
	s[n] = '\0';
	return s;
}

const char *kaas_path_basename(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

char *kaas_url_subdir(const char *url, const char *name)
{
	const char *q = strchr(url, '?');
	size_t head = q ? (size_t)(q - url) : strlen(url);
	while (head > 0 && url[head - 1] == '/' && head > 1)
		head--; /* "dir/" + "x": one separator */
	size_t nl = strlen(name), tl = q ? strlen(q) : 0;
	char *s = malloc(head + 1 + nl + tl + 1);
	if (!s)
		return NULL;
	memcpy(s, url, head);
	s[head] = '/';
	memcpy(s + head + 1, name, nl);
	memcpy(s + head + 1 + nl, q ? q : "", tl);
	s[head + 1 + nl + tl] = '\0';
	return s;
}
