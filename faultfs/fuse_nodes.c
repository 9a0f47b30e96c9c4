/* fuse_nodes.c — a FUSE session's inode table (see fuse_nodes.h). */
#include "faultfs/fuse_nodes.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "substrate/substrate.h"

#define NBUCKETS 4096

struct handle_ref {
	void *handle;
	struct handle_ref *next;
};

struct node {
	uint64_t id;
	struct node *parent;    /* NULL for the root */
	char *name;             /* NULL once removed */
	char *lastpath;         /* the path it had when removed */
	uint64_t nlookup;
	unsigned children;      /* nodes whose parent this is (keeps it alive) */
	struct handle_ref *handles;
	struct node *name_next; /* chain in the (parent, name) hash */
	struct node *all_next, *all_prev; /* every node but the root */
};

struct kaas_ll_nodes {
	pthread_mutex_t mu;
	struct node root;
	struct node *by_name[NBUCKETS];
	struct node *all;
};

static unsigned bucket(const struct node *parent, const char *name)
{
	uint64_t h = 1469598103934665603ULL ^ (uint64_t)(uintptr_t)parent;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	return (unsigned)(h % NBUCKETS);
}

static struct node *by_id(struct kaas_ll_nodes *t, uint64_t id)
{
	return id == KAAS_LL_ROOT ? &t->root : (struct node *)(uintptr_t)id;
}

static struct node *find(struct kaas_ll_nodes *t, struct node *parent, const char *name)
{
	for (struct node *n = t->by_name[bucket(parent, name)]; n; n = n->name_next)
		if (n->parent == parent && n->name && !strcmp(n->name, name))
			return n;
	return NULL;
}

static void unhash(struct kaas_ll_nodes *t, struct node *n)
{
	if (!n->name)
		return;
	for (struct node **pp = &t->by_name[bucket(n->parent, n->name)]; *pp; pp = &(*pp)->name_next)
		if (*pp == n) {
			*pp = n->name_next;
			break;
		}
	n->name_next = NULL;
}

static void hash_in(struct kaas_ll_nodes *t, struct node *n)
{
	unsigned b = bucket(n->parent, n->name);
	n->name_next = t->by_name[b];
	t->by_name[b] = n;
}

struct kaas_ll_nodes *kaas_ll_nodes_new(void)
{
	struct kaas_ll_nodes *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	pthread_mutex_init(&t->mu, NULL);
	t->root.id = KAAS_LL_ROOT;
	t->root.name = strdup("");
	t->root.nlookup = 1;
	return t;
}

static void free_node(struct node *n)
{
	while (n->handles) {
		struct handle_ref *r = n->handles;
		n->handles = r->next;
		free(r);
	}
	free(n->name);
	free(n->lastpath);
	free(n);
}

void kaas_ll_nodes_free(struct kaas_ll_nodes *t)
{
	if (!t)
		return;
	while (t->all) {
		struct node *n = t->all;
		t->all = n->all_next;
		free_node(n);
	}
	free(t->root.name);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

/* Release a node nobody references any more (t->mu held). */
static void maybe_free(struct kaas_ll_nodes *t, struct node *n)
{
	while (n && n != &t->root && n->nlookup == 0 && n->children == 0 && !n->handles) {
		struct node *parent = n->parent;
		unhash(t, n);
		if (n->all_prev)
			n->all_prev->all_next = n->all_next;
		else
			t->all = n->all_next;
		if (n->all_next)
			n->all_next->all_prev = n->all_prev;
		free_node(n);
		if (parent)
			parent->children--;
		n = parent;
	}
}

uint64_t kaas_ll_ref(struct kaas_ll_nodes *t, uint64_t parent_id, const char *name)
{
	pthread_mutex_lock(&t->mu);
	struct node *parent = by_id(t, parent_id);
	struct node *n = find(t, parent, name);
	if (!n) {
		n = calloc(1, sizeof *n);
		if (!n || !(n->name = strdup(name))) {
			free(n);
			pthread_mutex_unlock(&t->mu);
			return 0;
		}
		n->id = (uint64_t)(uintptr_t)n;
		n->parent = parent;
		parent->children++;
		hash_in(t, n);
		n->all_next = t->all;
		if (t->all)
			t->all->all_prev = n;
		t->all = n;
	}
	n->nlookup++;
	uint64_t id = n->id;
	pthread_mutex_unlock(&t->mu);
	return id;
}

void kaas_ll_forget(struct kaas_ll_nodes *t, uint64_t id, uint64_t count)
{
	if (id == KAAS_LL_ROOT)
		return;
	pthread_mutex_lock(&t->mu);
	struct node *n = by_id(t, id);
	n->nlookup = n->nlookup > count ? n->nlookup - count : 0;
	maybe_free(t, n);
	pthread_mutex_unlock(&t->mu);
}

/* Build the path of n (t->mu held): 0, -ESTALE (a removed node on the way),
 * -ENOMEM. */
static int build(struct node *n, char **out)
{
	*out = NULL;
	size_t len = 0;
	for (struct node *p = n; p->parent; p = p->parent) {
		if (!p->name)
			return -ESTALE;
		len += strlen(p->name) + 1;
	}
	char *s = malloc(len + 1);
	if (!s)
		return -ENOMEM;
	s[len] = '\0';
	size_t end = len;
	for (struct node *p = n; p->parent; p = p->parent) {
		size_t l = strlen(p->name);
		end -= l;
		memcpy(s + end, p->name, l);
		if (end > 0)
			s[--end] = '/';
	}
	/* every component was preceded by a '/': drop the first one */
	if (len > 0)
		memmove(s, s + 1, len);
	*out = s;
	return 0;
}

int kaas_ll_path(struct kaas_ll_nodes *t, uint64_t id, char **path)
{
	pthread_mutex_lock(&t->mu);
	struct node *n = by_id(t, id);
	int rc = build(n, path);
	if (rc == -ESTALE && n->lastpath)
		*path = strdup(n->lastpath);
	pthread_mutex_unlock(&t->mu);
	return rc;
}

char *kaas_ll_child_path(struct kaas_ll_nodes *t, uint64_t parent, const char *name)
{
	char *dir = NULL;
	if (kaas_ll_path(t, parent, &dir) < 0) {
		free(dir);
		return NULL;
	}
	char *p = kaas_path_join(dir, name);
	free(dir);
	return p;
}

/* Detach n from its name, remembering the path it had (t->mu held). */
static void detach_name(struct kaas_ll_nodes *t, struct node *n)
{
	char *p = NULL;
	if (build(n, &p) == 0) {
		free(n->lastpath);
		n->lastpath = p;
	}
	unhash(t, n);
	free(n->name);
	n->name = NULL;
}

void kaas_ll_move(struct kaas_ll_nodes *t, uint64_t parent_id, const char *name, uint64_t newparent_id,
		  const char *newname)
{
	pthread_mutex_lock(&t->mu);
	struct node *parent = by_id(t, parent_id), *newparent = by_id(t, newparent_id);
	struct node *n = find(t, parent, name);
	struct node *victim = find(t, newparent, newname);
	if (victim && victim != n) {
		detach_name(t, victim);
		maybe_free(t, victim);
	}
	if (n) {
		char *nn = strdup(newname);
		if (nn) {
			unhash(t, n);
			free(n->name);
			n->name = nn;
			if (n->parent != newparent) {
				newparent->children++;
				struct node *old = n->parent;
				old->children--;
				n->parent = newparent;
				hash_in(t, n);
				maybe_free(t, old);
			} else {
				hash_in(t, n);
			}
		}
	}
	pthread_mutex_unlock(&t->mu);
}

void kaas_ll_remove(struct kaas_ll_nodes *t, uint64_t parent_id, const char *name)
{
	pthread_mutex_lock(&t->mu);
	struct node *n = find(t, by_id(t, parent_id), name);
	if (n) {
		detach_name(t, n);
		maybe_free(t, n);
	}
	pthread_mutex_unlock(&t->mu);
}

void kaas_ll_attach(struct kaas_ll_nodes *t, uint64_t id, void *handle)
{
	struct handle_ref *r = calloc(1, sizeof *r);
	if (!r)
		return; /* fstat then goes by name: degraded, not wrong */
	r->handle = handle;
	pthread_mutex_lock(&t->mu);
	struct node *n = by_id(t, id);
	r->next = n->handles;
	n->handles = r;
	pthread_mutex_unlock(&t->mu);
}

void kaas_ll_detach(struct kaas_ll_nodes *t, uint64_t id, void *handle)
{
	pthread_mutex_lock(&t->mu);
	struct node *n = by_id(t, id);
	for (struct handle_ref **pp = &n->handles; *pp; pp = &(*pp)->next)
		if ((*pp)->handle == handle) {
			struct handle_ref *r = *pp;
			*pp = r->next;
			free(r);
			break;
		}
	maybe_free(t, n);
	pthread_mutex_unlock(&t->mu);
}

int kaas_ll_with_handle(struct kaas_ll_nodes *t, uint64_t id, int (*use)(void *handle, void *arg),
			void *arg)
{
	pthread_mutex_lock(&t->mu);
	struct node *n = by_id(t, id);
	int rc = n->handles ? use(n->handles->handle, arg) : -ENOENT;
	pthread_mutex_unlock(&t->mu);
	return rc;
}
