/* testutil.c — shared helpers of the store's unit tests (see testutil.h). */
#include "testutil.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kv.h"
#include "lmutil.h"

char *tu_mkdtemp(void)
{
	const char *tmp = getenv("TMPDIR");
	char *dir;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	assert_true(asprintf(&dir, "%s/cellfs-unit-XXXXXX", tmp) > 0);
	assert_non_null(mkdtemp(dir));
	return dir;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path) ? -errno : 0;
}

int tu_rmtree(const char *path)
{
	return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int tu_store_setup(void **state)
{
	struct tu_store *ts = calloc(1, sizeof(*ts));
	cs_open_opts o = { .flags = CS_OPEN_CREATE };

	assert_non_null(ts);
	ts->dir = tu_mkdtemp();
	assert_int_equal(cs_store_open(ts->dir, &o, &ts->st), 0);
	*state = ts;
	return 0;
}

int tu_store_teardown(void **state)
{
	struct tu_store *ts = *state;
	if (!ts)
		return 0;
	cs_store_close(ts->st);
	tu_rmtree(ts->dir);
	free(ts->dir);
	free(ts);
	*state = NULL;
	return 0;
}

void tu_reopen(struct tu_store *ts, unsigned flags, uint64_t max_value)
{
	cs_open_opts o = { .flags = flags, .max_value = max_value };
	cs_store_close(ts->st);
	ts->st = NULL;
	assert_int_equal(cs_store_open(ts->dir, &o, &ts->st), 0);
}

cs_txn *tu_begin(cs_store *st, unsigned flags)
{
	cs_txn *txn = NULL;
	assert_int_equal(cs_txn_begin(st, flags, &txn), 0);
	return txn;
}

void tu_commit(cs_txn *txn)
{
	assert_int_equal(cs_txn_commit(txn), 0);
}

void tu_table(cs_store *st, const char *table, ...)
{
	cs_txn *txn = tu_begin(st, 0);
	const char *fam;
	va_list ap;

	assert_int_equal(cs_table_create(txn, table, 0), 0);
	va_start(ap, table);
	while ((fam = va_arg(ap, const char *))) {
		const char *gc = va_arg(ap, const char *);
		assert_int_equal(cs_family_create(txn, table, fam, gc), 0);
	}
	va_end(ap);
	tu_commit(txn);
}

int tu_set(cs_txn *txn, const char *table, cs_bytes row, const char *family, cs_bytes q, int64_t ts,
	   cs_bytes value)
{
	cs_mutation m = { .op = CS_SET_CELL, .family = family, .qualifier = q, .ts = ts, .value = value };
	return cs_row_mutate(txn, table, row, &m, 1);
}

void tu_put(cs_store *st, const char *table, const char *row, const char *family, const char *q, int64_t ts,
	    const char *value)
{
	cs_txn *txn = tu_begin(st, 0);
	assert_int_equal(tu_set(txn, table, CS_STR(row), family, CS_STR(q), ts, CS_STR(value)), 0);
	tu_commit(txn);
}

void tu_buf_add(struct tu_buf *b, const void *p, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->n + n + 1)
			cap *= 2;
		b->s = realloc(b->s, cap);
		assert_non_null(b->s);
		b->cap = cap;
	}
	memcpy(b->s + b->n, p, n);
	b->n += n;
	b->s[b->n] = 0;
}

static void add_str(struct tu_buf *b, const char *s)
{
	tu_buf_add(b, s, strlen(s));
}

void tu_escape(struct tu_buf *b, const void *p, size_t n)
{
	const uint8_t *c = p;
	for (size_t i = 0; i < n; i++) {
		char e[8];
		if (c[i] < 0x21 || c[i] > 0x7e || c[i] == '\\' || c[i] == '=' || c[i] == '@' || c[i] == ':') {
			snprintf(e, sizeof(e), "\\x%02x", c[i]);
			tu_buf_add(b, e, 4);
		} else {
			tu_buf_add(b, &c[i], 1);
		}
	}
}

int tu_try_dump(cs_txn *txn, const char *table, const cs_read_opts *opts, char **out)
{
	struct tu_buf b = { 0 };
	cs_scan *scan = NULL;
	const cs_row *row;
	int rc;

	tu_buf_add(&b, "", 0);
	if ((rc = cs_scan_open(txn, table, opts, &scan))) {
		free(b.s);
		return rc;
	}
	while ((rc = cs_scan_next(scan, &row)) == 1) {
		tu_escape(&b, row->key.data, row->key.len);
		for (size_t i = 0; i < row->ncells; i++) {
			const cs_cell *c = &row->cells[i];
			char num[64];
			add_str(&b, " ");
			add_str(&b, c->family);
			add_str(&b, ":");
			tu_escape(&b, c->qualifier.data, c->qualifier.len);
			snprintf(num, sizeof(num), "@%lld", (long long)c->ts);
			add_str(&b, num);
			if (opts && opts->keys_only) {
				assert_int_equal(c->value.len, 0);
				snprintf(num, sizeof(num), "=[%llu]", (unsigned long long)c->value_len);
				add_str(&b, num);
			} else {
				assert_int_equal(c->value.len, c->value_len);
				add_str(&b, "=");
				tu_escape(&b, c->value.data, c->value.len);
			}
		}
		add_str(&b, "\n");
	}
	cs_scan_close(scan);
	if (rc < 0) {
		free(b.s);
		return rc;
	}
	*out = b.s;
	return 0;
}

char *tu_dump(cs_txn *txn, const char *table, const cs_read_opts *opts)
{
	char *s = NULL;
	assert_int_equal(tu_try_dump(txn, table, opts, &s), 0);
	return s;
}

char *tu_dump_st(cs_store *st, const char *table, const cs_read_opts *opts)
{
	cs_txn *txn = tu_begin(st, CS_TXN_RDONLY);
	char *s = tu_dump(txn, table, opts);
	tu_commit(txn);
	return s;
}

uint64_t tu_rand(uint64_t *seed)
{
	uint64_t z = (*seed += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

void tu_rand_bytes(uint64_t *seed, uint8_t *p, size_t n, int special)
{
	static const uint8_t hard[] = { 0x00, 0x01, 0xFE, 0xFF, '#' };
	for (size_t i = 0; i < n; i++) {
		uint64_t r = tu_rand(seed);
		p[i] = special && (r & 3) ? hard[(r >> 8) % sizeof(hard)] : (uint8_t)(r >> 16);
	}
}

uint8_t *tu_filled(size_t n, uint8_t fill)
{
	uint8_t *p = malloc(n ? n : 1);
	assert_non_null(p);
	memset(p, fill, n);
	return p;
}

/* ---- the mutation tests' table "t" ---- */

int tu_mutate_setup(void **state)
{
	struct tu_store *ts;
	tu_store_setup(state);
	ts = *state;
	tu_table(ts->st, "t", "a", NULL, "ab", NULL, "b", NULL, "v1", "maxversions=1", NULL);
	return 0;
}

void tu_mutate_ok(cs_store *st, const char *row, const cs_mutation *m, size_t n)
{
	cs_txn *txn = tu_begin(st, 0);
	assert_int_equal(cs_row_mutate(txn, "t", CS_STR(row), m, n), 0);
	tu_commit(txn);
}

void tu_expect_dump(cs_store *st, const cs_read_opts *o, const char *want)
{
	char *s = tu_dump_st(st, "t", o);
	assert_string_equal(s, want);
	free(s);
}

char *tu_newest(cs_txn *txn, const char *row, const char *fam, const char *q, int64_t *ts, size_t *n)
{
	cs_bytes r = CS_STR(row), qq = CS_STR(q);
	cs_column_sel sel = { .family = fam, .qualifier = &qq };
	cs_read_opts o = { .row = &r, .ncolumns = 1, .columns = &sel, .cells_per_column = 1 };
	const cs_row *rw;
	cs_scan *scan;
	char *v = NULL;
	int rc;

	assert_int_equal(cs_scan_open(txn, "t", &o, &scan), 0);
	rc = cs_scan_next(scan, &rw);
	assert_true(rc >= 0);
	if (rc == 1) {
		assert_int_equal(rw->ncells, 1);
		v = malloc(rw->cells[0].value.len + 1);
		memcpy(v, rw->cells[0].value.data, rw->cells[0].value.len);
		v[rw->cells[0].value.len] = 0;
		if (ts)
			*ts = rw->cells[0].ts;
		if (n)
			*n = rw->cells[0].value.len;
	}
	cs_scan_close(scan);
	return v;
}

/* ---- a bare kv environment ---- */

int tu_kv_setup(void **state)
{
	struct tu_kv *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	f->dir = tu_mkdtemp();
	assert_int_equal(kv_env_open(f->dir, false, true, &f->env), 0);
	*state = f;
	return 0;
}

int tu_kv_teardown(void **state)
{
	struct tu_kv *f = *state;
	kv_env_close(f->env);
	tu_rmtree(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

kv_txn *tu_kv_begin(struct tu_kv *f, bool rdonly)
{
	kv_txn *t = NULL;
	assert_int_equal(kv_txn_begin(f->env, rdonly, &t), 0);
	return t;
}

size_t tu_count_keys(cs_txn *txn, const void *prefix, size_t n)
{
	kv_cursor *c;
	size_t count = 0;
	int rc;

	assert_int_equal(kv_cursor_open(lm_txn_of(txn)->kv, &c), 0);
	for (rc = kv_seek(c, prefix, n); !rc; rc = kv_next(c)) {
		const void *k;
		size_t kn;

		kv_key(c, &k, &kn);
		if (kn < n || memcmp(k, prefix, n))
			break;
		count++;
	}
	assert_true(rc == 0 || rc == -ENOENT);
	kv_cursor_close(c);
	return count;
}
