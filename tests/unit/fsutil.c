/* fsutil.c — the fs core tests' helpers (see fsutil.h). */
#include "fsutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ident.h"

void fu_table(cs_store *st, const char *name, char delim, ...)
{
	cs_txn *txn = tu_begin(st, 0);
	const char *fam;
	va_list ap;

	assert_int_equal(cs_table_create(txn, name, delim), 0);
	va_start(ap, delim);
	while ((fam = va_arg(ap, const char *)))
		assert_int_equal(cs_family_create(txn, name, fam, NULL), 0);
	va_end(ap);
	tu_commit(txn);
}

void fu_put(cs_store *st, const char *table, const void *row, size_t rown, const char *family, const void *q,
	    size_t qn, int64_t ts, const char *value)
{
	cs_txn *txn = tu_begin(st, 0);
	assert_int_equal(tu_set(txn, table, (cs_bytes){ row, rown }, family, (cs_bytes){ q, qn }, ts,
				(cs_bytes){ value, strlen(value) }),
			 0);
	tu_commit(txn);
}

static int take(void *arg, const char *name, const struct node_id *id, const struct view_attr *a)
{
	struct { struct node_id id; struct view_attr a; } *t = arg;
	(void)name;
	node_id_free(&t->id);
	t->a = *a;
	return node_id_copy(&t->id, id);
}

static int walk(cs_txn *txn, const char *path, struct node_id *id, struct view_attr *a)
{
	struct { struct node_id id; struct view_attr a; } cur = { .id = { .kind = NODE_ROOT } };
	const char *p = path;
	int rc = view_getattr(txn, &cur.id, &cur.a);

	while (!rc && *p) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		char *name = strndup(p, n);
		struct node_id dir;
		assert_non_null(name);
		if ((rc = node_id_copy(&dir, &cur.id)) == 0) {
			rc = view_lookup(txn, &dir, name, take, &cur);
			node_id_free(&dir);
		}
		free(name);
		p += n + (slash != NULL);
	}
	if (!rc && id)
		*id = cur.id;
	else
		node_id_free(&cur.id);
	if (!rc && a)
		*a = cur.a;
	return rc;
}

int fu_walk(cs_store *st, const char *path, struct node_id *id, struct view_attr *a)
{
	cs_txn *txn = tu_begin(st, CS_TXN_RDONLY);
	int rc = walk(txn, path, id, a);
	cs_txn_abort(txn);
	return rc;
}

struct listing {
	struct tu_buf b;
	bool attrs;
	int budget; /* entries taken before asking to stop, so that the listing resumes */
};

static int add(void *arg, const char *name, const struct node_id *id, const struct view_attr *a)
{
	struct listing *l = arg;
	char num[64];

	(void)id;
	if (l->budget-- <= 0)
		return 1;
	if (l->b.n)
		tu_buf_add(&l->b, l->attrs ? "\n" : " ", 1);
	tu_buf_add(&l->b, name, strlen(name));
	if (a->dir)
		tu_buf_add(&l->b, "/", 1);
	if (l->attrs) {
		if (a->dir)
			snprintf(num, sizeof(num), " %lld", (long long)a->mtime_us);
		else
			snprintf(num, sizeof(num), " %llu %lld", (unsigned long long)a->size, (long long)a->mtime_us);
		tu_buf_add(&l->b, num, strlen(num));
	}
	return 0;
}

static char *list(cs_store *st, const char *path, bool attrs, int *rcp)
{
	struct listing l = { .attrs = attrs };
	struct view_pos pos = { 0 };
	struct node_id dir;
	cs_txn *txn = tu_begin(st, CS_TXN_RDONLY);
	int rc = walk(txn, path, &dir, NULL);
	bool walked = !rc;

	while (!rc && pos.phase != 2) {
		l.budget = 2;
		rc = view_list(txn, &dir, &pos, add, &l);
	}
	view_pos_release(&pos);
	if (walked)
		node_id_free(&dir);
	cs_txn_abort(txn);
	if (rcp)
		*rcp = rc;
	if (rc) {
		free(l.b.s);
		return NULL;
	}
	if (!l.b.s)
		tu_buf_add(&l.b, "", 0);
	return l.b.s;
}

char *fu_list(cs_store *st, const char *path, int *rc)
{
	return list(st, path, false, rc);
}

char *fu_list_attrs(cs_store *st, const char *path)
{
	char *s = list(st, path, true, NULL);
	assert_non_null(s);
	return s;
}

char *fu_read(cs_store *st, const char *path, int *rcp)
{
	cs_txn *txn = tu_begin(st, CS_TXN_RDONLY);
	struct node_id id;
	void *buf = NULL;
	size_t len = 0;
	char *s = NULL;
	int rc = walk(txn, path, &id, NULL);

	if (!rc) {
		rc = view_read(txn, &id, &buf, &len);
		node_id_free(&id);
	}
	cs_txn_abort(txn);
	if (rcp)
		*rcp = rc;
	if (!rc) {
		s = malloc(len + 1);
		assert_non_null(s);
		memcpy(s, buf, len);
		s[len] = '\0';
	}
	free(buf);
	return s;
}

int fu_resolve(cs_store *st, const char *dirpath, const char *name, bool want_dir, struct node_id *out)
{
	cs_txn *txn = tu_begin(st, CS_TXN_RDONLY);
	struct node_id dir;
	int rc = walk(txn, dirpath, &dir, NULL);

	memset(out, 0, sizeof(*out));
	assert_int_equal(rc, 0);
	rc = ident_resolve_new(txn, &dir, name, want_dir, out);
	node_id_free(&dir);
	cs_txn_abort(txn);
	return rc;
}

void fu_assert_bytes(const void *b, size_t n, const char *want)
{
	assert_int_equal(n, strlen(want));
	assert_memory_equal(b, want, n);
}
