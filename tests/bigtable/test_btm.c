/* test_btm.c — the ReadRows chunk merger (store/bigtable/btm.c): Google's published conformance cases
 * (readrows.json, read at run time: its path is argv[1]), then resumption, reversed reads, split and
 * large values and the rules the cases leave out. Links btm.c alone: no gRPC, no protobuf. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "btm.h"
#include "jsonlex.h"
#include "tjson.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* The number of cases in this folder's copy of readrows.json. */
#define CONFORMANCE_CASES 48

static const char *vectors_path;

/* ---- the conformance cases ---- */

/* Allocations of one case, freed together. */
struct pool {
	void **p;
	size_t n, cap;
};

static void *pool_add(struct pool *pl, void *p)
{
	if (pl->n == pl->cap) {
		pl->cap = pl->cap ? pl->cap * 2 : 16;
		pl->p = realloc(pl->p, pl->cap * sizeof(*pl->p));
		assert_non_null(pl->p);
	}
	assert_non_null(p);
	pl->p[pl->n++] = p;
	return p;
}

static void pool_free(struct pool *pl)
{
	for (size_t i = 0; i < pl->n; i++)
		free(pl->p[i]);
	free(pl->p);
	memset(pl, 0, sizeof(*pl));
}

/* Standard base64 with padding (proto3 JSON's bytes), decoded by cellctl's importer (jsonlex.h) into a
 * copy in PL. Returns false on bad input. */
static bool b64decode(struct pool *pl, const char *s, size_t n, const uint8_t **out, size_t *len)
{
	char *o = pool_add(pl, malloc(n + 1));

	memcpy(o, s, n);
	if (jl_b64_decode(o, n, len))
		return false;
	*out = (const uint8_t *)o;
	return true;
}

/* proto3 JSON of a wrapper (StringValue, BytesValue) is the bare value; accept {"value": x} too. */
static const tj_value *unwrap(const tj_value *v)
{
	const tj_value *in = v && v->type == TJ_OBJECT ? tj_get(v, "value") : NULL;

	return v && v->type == TJ_OBJECT ? in : v;
}

static bool json_int64(const tj_value *v, int64_t *out)
{
	char *end;

	if (!v || (v->type != TJ_STRING && v->type != TJ_NUMBER) || !v->len)
		return false;
	errno = 0;
	*out = strtoll(v->s, &end, 10);
	return !errno && *end == 0;
}

/* One chunk of the JSON into C. Returns false, with WHY, on a field it does not know or cannot read. */
static bool read_chunk(struct pool *pl, const tj_value *j, btm_chunk *c, char *why, size_t whylen)
{
	memset(c, 0, sizeof(*c));
	if (!j || j->type != TJ_OBJECT) {
		snprintf(why, whylen, "a chunk is not an object");
		return false;
	}
	for (size_t i = 0; i < j->n; i++) {
		const char *k = j->keys[i];
		const tj_value *v = &j->items[i];
		const tj_value *u = unwrap(v);
		bool ok = true;

		if (!strcmp(k, "rowKey")) {
			ok = v->type == TJ_STRING && b64decode(pl, v->s, v->len, &c->row_key, &c->row_key_len);
		} else if (!strcmp(k, "familyName")) {
			ok = u && u->type == TJ_STRING;
			if (ok) {
				c->has_family = true;
				c->family = u->s;
				c->family_len = u->len;
			}
		} else if (!strcmp(k, "qualifier")) {
			ok = u && u->type == TJ_STRING &&
			     b64decode(pl, u->s, u->len, &c->qualifier, &c->qualifier_len);
			c->has_qualifier = ok;
		} else if (!strcmp(k, "timestampMicros")) {
			ok = json_int64(v, &c->timestamp_micros);
		} else if (!strcmp(k, "labels")) {
			ok = v->type == TJ_ARRAY;
			if (ok) {
				char **l = pool_add(pl, calloc(v->n + 1, sizeof(*l)));

				for (size_t m = 0; m < v->n; m++) {
					ok = ok && v->items[m].type == TJ_STRING;
					l[m] = v->items[m].s;
				}
				c->labels = l;
				c->nlabels = v->n;
			}
		} else if (!strcmp(k, "value")) {
			ok = v->type == TJ_STRING && b64decode(pl, v->s, v->len, &c->value, &c->value_len);
		} else if (!strcmp(k, "valueSize")) {
			int64_t vs;

			ok = json_int64(v, &vs) && vs >= INT32_MIN && vs <= INT32_MAX;
			c->value_size = (int32_t)vs;
		} else if (!strcmp(k, "resetRow")) {
			ok = v->type == TJ_BOOL;
			c->reset_row = v->b;
		} else if (!strcmp(k, "commitRow")) {
			ok = v->type == TJ_BOOL;
			c->commit_row = v->b;
		} else {
			snprintf(why, whylen, "unknown chunk field \"%s\"", k);
			return false;
		}
		if (!ok) {
			snprintf(why, whylen, "chunk field \"%s\" unreadable", k);
			return false;
		}
	}
	return true;
}

/* A cell as the results list it: plain strings, one label at most. */
struct flat {
	const char *rk, *fm, *q, *val, *label;
	size_t rk_len, fm_len, q_len, val_len, label_len;
	int64_t ts;
};

static const char *str_or_empty(const tj_value *v, size_t *len)
{
	*len = v && v->type == TJ_STRING ? v->len : 0;
	return v && v->type == TJ_STRING ? v->s : "";
}

static bool read_result(const tj_value *j, struct flat *f, bool *error, char *why, size_t whylen)
{
	const tj_value *e = tj_get(j, "error");
	const tj_value *ts = tj_get(j, "timestampMicros");

	memset(f, 0, sizeof(*f));
	*error = e && e->type == TJ_BOOL && e->b;
	f->rk = str_or_empty(tj_get(j, "rowKey"), &f->rk_len);
	f->fm = str_or_empty(tj_get(j, "familyName"), &f->fm_len);
	f->q = str_or_empty(tj_get(j, "qualifier"), &f->q_len);
	f->val = str_or_empty(tj_get(j, "value"), &f->val_len);
	f->label = str_or_empty(tj_get(j, "label"), &f->label_len);
	if (ts && !json_int64(ts, &f->ts)) {
		snprintf(why, whylen, "result timestampMicros unreadable");
		return false;
	}
	return true;
}

static bool bytes_eq(const void *a, size_t an, const void *b, size_t bn)
{
	return an == bn && (!an || !memcmp(a, b, an));
}

static bool flat_eq(const struct flat *a, const struct flat *b)
{
	return bytes_eq(a->rk, a->rk_len, b->rk, b->rk_len) && bytes_eq(a->fm, a->fm_len, b->fm, b->fm_len) &&
	       bytes_eq(a->q, a->q_len, b->q, b->q_len) && bytes_eq(a->val, a->val_len, b->val, b->val_len) &&
	       bytes_eq(a->label, a->label_len, b->label, b->label_len) && a->ts == b->ts;
}

static void flat_print(char *out, size_t n, const struct flat *f)
{
	snprintf(out, n, "%.*s/%.*s:%.*s@%lld=\"%.*s\"%s%.*s", (int)f->rk_len, f->rk, (int)f->fm_len, f->fm,
		 (int)f->q_len, f->q, (long long)f->ts, (int)f->val_len, f->val, f->label_len ? " label " : "",
		 (int)f->label_len, f->label);
}

/* Run test case TC. Returns true when the merger does what its results say; else WHY says what differs.
 * With CORRUPT, the first expected result's value is altered first (the driver's own check). */
static bool run_case(const tj_value *tc, bool corrupt, char *why, size_t whylen)
{
	const tj_value *chunks = tj_get(tc, "chunks"), *results = tj_get(tc, "results");
	size_t nres = results && results->type == TJ_ARRAY ? results->n : 0;
	size_t nwant = 0, ngot = 0;
	struct flat *want = calloc(nres + 1, sizeof(*want)), *got = NULL;
	bool want_error = false, failed = false, ok = false;
	struct pool pl = { 0 };
	const char *reason = NULL;
	btm *m = NULL;
	int rc = 0;

	assert_non_null(want);
	assert_int_equal(btm_new(&m, false), 0);
	if (chunks && chunks->type != TJ_ARRAY) {
		snprintf(why, whylen, "\"chunks\" is not an array");
		goto out;
	}
	for (size_t i = 0; i < nres; i++) {
		bool err;

		if (!read_result(&results->items[i], &want[nwant], &err, why, whylen))
			goto out;
		if (err && i + 1 != nres) {
			snprintf(why, whylen, "an error result that is not the last");
			goto out;
		}
		if (err)
			want_error = true;
		else
			nwant++;
	}
	if (corrupt && nwant)
		want[0].val_len = want[0].val_len ? want[0].val_len - 1 : 1;
	for (size_t i = 0; chunks && i < chunks->n && !failed; i++) {
		const btm_row *row;
		btm_chunk c;

		if (!read_chunk(&pl, &chunks->items[i], &c, why, whylen))
			goto out;
		rc = btm_feed(m, &c, &row);
		if (rc < 0) {
			failed = true;
			reason = btm_error(m);
			assert_null(row);
		} else if (rc == 1) {
			assert_non_null(row);
			got = realloc(got, (ngot + row->ncells) * sizeof(*got));
			assert_non_null(got);
			for (size_t k = 0; k < row->ncells; k++) {
				const btm_cell *x = &row->cells[k];
				struct flat *f = &got[ngot++];

				f->rk = pool_add(&pl, malloc(row->key_len + 1));
				memcpy((char *)f->rk, row->key, row->key_len);
				f->rk_len = row->key_len;
				f->fm = pool_add(&pl, strndup(x->family, x->family_len));
				f->fm_len = x->family_len;
				f->q = pool_add(&pl, malloc(x->qualifier_len + 1));
				memcpy((char *)f->q, x->qualifier, x->qualifier_len);
				f->q_len = x->qualifier_len;
				f->val = pool_add(&pl, malloc(x->value_len + 1));
				memcpy((char *)f->val, x->value, x->value_len);
				f->val_len = x->value_len;
				f->ts = x->ts;
				f->label = x->nlabels == 0 ? "" : x->nlabels == 1 ? x->labels[0] : "(several labels)";
				f->label = pool_add(&pl, strdup(f->label));
				f->label_len = strlen(f->label);
			}
		} else {
			assert_int_equal(rc, 0);
			assert_null(row);
		}
	}
	if (!failed && (rc = btm_end(m)) < 0) {
		failed = true;
		reason = btm_error(m);
	}
	if (failed && (rc != -EIO || !reason)) {
		snprintf(why, whylen, "failed with %d (%s), not -EIO with a reason", rc, reason ? reason : "no reason");
		goto out;
	}
	if (failed != want_error) {
		snprintf(why, whylen, failed ? "rejected (%s), but the stream is valid" :
					       "accepted, but the stream is invalid", reason);
		goto out;
	}
	for (size_t i = 0; i < nwant || i < ngot; i++) {
		char a[256] = "(none)", b[256] = "(none)";

		if (i < nwant && i < ngot && flat_eq(&want[i], &got[i]))
			continue;
		if (i < nwant)
			flat_print(a, sizeof(a), &want[i]);
		if (i < ngot)
			flat_print(b, sizeof(b), &got[i]);
		snprintf(why, whylen, "cell %zu: want %s, got %s", i, a, b);
		goto out;
	}
	ok = true;
out:
	btm_free(m);
	free(want);
	free(got);
	pool_free(&pl);
	return ok;
}

static const tj_value *load_cases(tj_value **doc)
{
	char err[256] = "";
	const tj_value *cases;

	assert_non_null(vectors_path);
	if (tj_parse_file(vectors_path, doc, err, sizeof(err))) {
		print_error("%s: %s\n", vectors_path, err);
		fail();
	}
	cases = tj_get(*doc, "readRowsTests");
	assert_non_null(cases);
	assert_int_equal(cases->type, TJ_ARRAY);
	return cases;
}

static const char *case_name(const tj_value *tc)
{
	const tj_value *d = tj_get(tc, "description");

	return d && d->type == TJ_STRING ? d->s : "(no description)";
}

static void test_btm__conformance_cases(void **state)
{
	tj_value *doc = NULL;
	const tj_value *cases = load_cases(&doc);
	size_t failures = 0, invalid = 0;

	assert_int_equal(cases->n, CONFORMANCE_CASES);
	for (size_t i = 0; i < cases->n; i++) {
		char why[1024] = "";

		if (!strncmp(case_name(&cases->items[i]), "invalid", 7))
			invalid++;
		if (!run_case(&cases->items[i], false, why, sizeof(why))) {
			print_error("FAIL conformance case \"%s\": %s\n", case_name(&cases->items[i]), why);
			failures++;
		}
	}
	assert_true(invalid > 0 && invalid < cases->n);
	tj_free(doc);
	assert_int_equal(failures, 0);
}

/* The driver itself notices a wrong cell, a missing error and a wrong error. */
static void test_btm__driver_detects_wrong_results(void **state)
{
	tj_value *doc = NULL;
	const tj_value *cases = load_cases(&doc);
	size_t tried = 0;

	for (size_t i = 0; i < cases->n; i++) {
		const tj_value *tc = &cases->items[i];
		const tj_value *res = tj_get(tc, "results");
		char why[1024] = "";

		if (!res || !res->n || tj_get(&res->items[0], "error"))
			continue;
		assert_false(run_case(tc, true, why, sizeof(why)));
		assert_non_null(strstr(why, "cell 0: want"));
		tried++;
	}
	assert_true(tried > 20);
	tj_free(doc);
}

/* ---- the merger's own cases ---- */

enum { COMMIT = 1, RESET = 2 };

/* A chunk from C strings; NULL is absent. */
static btm_chunk ck(const char *rk, const char *fam, const char *q, int64_t ts, const char *val, int32_t vs,
		    int flags)
{
	btm_chunk c = {
		.row_key = (const uint8_t *)rk,
		.row_key_len = rk ? strlen(rk) : 0,
		.has_family = fam != NULL,
		.family = fam,
		.family_len = fam ? strlen(fam) : 0,
		.has_qualifier = q != NULL,
		.qualifier = (const uint8_t *)q,
		.qualifier_len = q ? strlen(q) : 0,
		.timestamp_micros = ts,
		.value = (const uint8_t *)val,
		.value_len = val ? strlen(val) : 0,
		.value_size = vs,
		.reset_row = flags & RESET,
		.commit_row = flags & COMMIT,
	};
	return c;
}

static int feed(btm *m, btm_chunk c, const btm_row **row)
{
	return btm_feed(m, &c, row);
}

static void assert_bytes(const void *p, size_t n, const char *want)
{
	assert_int_equal(n, strlen(want));
	assert_memory_equal(p, want, n);
}

static void assert_last_key(const btm *m, const char *want)
{
	size_t len;
	const uint8_t *k = btm_last_key(m, &len);

	assert_non_null(k);
	assert_bytes(k, len, want);
}

static void assert_cell(const btm_cell *c, const char *fam, const char *q, int64_t ts, const char *val)
{
	assert_bytes(c->family, c->family_len, fam);
	assert_int_equal(c->family[c->family_len], 0);
	assert_bytes(c->qualifier, c->qualifier_len, q);
	assert_int_equal(c->ts, ts);
	assert_bytes(c->value, c->value_len, val);
}

static void expect_invalid(btm *m, btm_chunk c, const char *reason_part)
{
	const btm_row *row;

	assert_int_equal(feed(m, c, &row), -EIO);
	assert_null(row);
	assert_non_null(btm_error(m));
	assert_non_null(strstr(btm_error(m), reason_part));
}

/* A stream broken mid-row resumes after the last committed row; the row in progress is dropped and comes
 * again whole; rows before the last key are refused. */
static void test_btm__restart_resumes_after_last_committed_row(void **state)
{
	const btm_row *row;
	size_t len;
	btm *m;

	assert_int_equal(btm_new(&m, false), 0);
	assert_null(btm_last_key(m, &len));
	assert_int_equal(len, 0);
	assert_int_equal(feed(m, ck("r1", "f", "a", 1000, "one", 0, COMMIT), &row), 1);
	assert_int_equal(feed(m, ck("r2", "f", "a", 2000, "par", 6, 0), &row), 0);
	/* the connection breaks here, inside r2's split value */
	assert_last_key(m, "r1");
	btm_restart(m);
	assert_int_equal(btm_end(m), 0); /* nothing in progress any more */
	assert_last_key(m, "r1");
	/* the resumed stream re-sends r2 from its start, other cells this time */
	assert_int_equal(feed(m, ck("r2", "g", "b", 3000, "x", 0, 0), &row), 0);
	assert_int_equal(feed(m, ck(NULL, NULL, NULL, 4000, "y", 0, COMMIT), &row), 1);
	assert_bytes(row->key, row->key_len, "r2");
	assert_int_equal(row->ncells, 2);
	assert_cell(&row->cells[0], "g", "b", 3000, "x");
	assert_cell(&row->cells[1], "g", "b", 4000, "y");
	assert_last_key(m, "r2");
	/* a resumed stream that repeats a committed row is refused */
	btm_restart(m);
	expect_invalid(m, ck("r2", "f", "a", 1, "v", 0, COMMIT), "not after");
	/* the error sticks until a restart */
	assert_int_equal(feed(m, ck("r3", "f", "a", 1, "v", 0, COMMIT), &row), -EIO);
	assert_int_equal(btm_end(m), -EIO);
	btm_restart(m);
	assert_null(btm_error(m));
	assert_int_equal(feed(m, ck("r3", "f", "a", 1, "v", 0, COMMIT), &row), 1);
	assert_int_equal(btm_end(m), 0);
	/* a new stream forgets the last key */
	btm_start(m, false);
	assert_null(btm_last_key(m, &len));
	assert_int_equal(feed(m, ck("r1", "f", "a", 1, "v", 0, COMMIT), &row), 1);
	btm_free(m);
}

/* A reversed read's rows come in decreasing order; a forward read's in increasing order. */
static void test_btm__reversed_read_wants_decreasing_keys(void **state)
{
	const btm_row *row;
	btm *m;

	assert_int_equal(btm_new(&m, true), 0);
	assert_int_equal(feed(m, ck("c", "f", "q", 1, "v", 0, COMMIT), &row), 1);
	assert_int_equal(feed(m, ck("b\xff", "f", "q", 1, "v", 0, COMMIT), &row), 1);
	assert_int_equal(feed(m, ck("b", "f", "q", 1, "v", 0, COMMIT), &row), 1); /* a prefix is smaller */
	assert_int_equal(feed(m, ck("a", "f", "q", 1, "v", 0, COMMIT), &row), 1);
	expect_invalid(m, ck("a", "f", "q", 1, "v", 0, COMMIT), "not before");
	btm_restart(m);
	expect_invalid(m, ck("b", "f", "q", 1, "v", 0, COMMIT), "not before");
	btm_restart(m);
	assert_int_equal(feed(m, ck("\x01", "f", "q", 1, "v", 0, COMMIT), &row), 1);

	btm_start(m, false);
	assert_int_equal(feed(m, ck("b", "f", "q", 1, "v", 0, COMMIT), &row), 1);
	expect_invalid(m, ck("a", "f", "q", 1, "v", 0, COMMIT), "not after");
	btm_restart(m);
	expect_invalid(m, ck("b", "f", "q", 1, "v", 0, COMMIT), "not after");
	btm_free(m);
	/* bytewise order: 0xff sorts after every ASCII byte */
	assert_int_equal(btm_new(&m, false), 0);
	assert_int_equal(feed(m, ck("b", "f", "q", 1, "v", 0, COMMIT), &row), 1);
	assert_int_equal(feed(m, ck("b\x7f", "f", "q", 1, "v", 0, COMMIT), &row), 1);
	assert_int_equal(feed(m, ck("b\xff", "f", "q", 1, "v", 0, COMMIT), &row), 1);
	assert_int_equal(feed(m, ck("c", "f", "q", 1, "v", 0, COMMIT), &row), 1);
	btm_free(m);
}

/* A value in many pieces of varying sizes, between two ordinary cells, keeps its timestamp and labels. */
static void test_btm__value_split_in_many_pieces(void **state)
{
	enum { PIECES = 1000 };
	char *const labels[] = { "first", "second" };
	size_t total = 0, at = 0;
	uint8_t *want;
	const btm_row *row;
	btm_chunk c;
	btm *m;

	for (size_t i = 0; i < PIECES; i++)
		total += i % 7; /* some pieces are empty */
	want = malloc(total);
	assert_non_null(want);
	for (size_t i = 0; i < total; i++)
		want[i] = (uint8_t)(i * 31 + 7);
	assert_int_equal(btm_new(&m, false), 0);
	assert_int_equal(feed(m, ck("row", "f", "a", 5, "before", 0, 0), &row), 0);
	for (size_t i = 0; i < PIECES; i++) {
		c = ck(NULL, NULL, NULL, 0, NULL, i + 1 < PIECES ? (int32_t)total : 0, 0);
		if (i == 0) {
			c.has_qualifier = true;
			c.qualifier = (const uint8_t *)"b";
			c.qualifier_len = 1;
			c.timestamp_micros = 6;
			c.labels = labels;
			c.nlabels = 2;
		}
		c.value = want + at;
		c.value_len = i % 7;
		at += c.value_len;
		assert_int_equal(btm_feed(m, &c, &row), 0);
	}
	assert_int_equal(at, total);
	assert_int_equal(feed(m, ck(NULL, NULL, NULL, 7, "after", 0, COMMIT), &row), 1);
	assert_int_equal(row->ncells, 3);
	assert_cell(&row->cells[0], "f", "a", 5, "before");
	assert_int_equal(row->cells[0].nlabels, 0);
	assert_null(row->cells[0].labels);
	assert_bytes(row->cells[1].qualifier, row->cells[1].qualifier_len, "b");
	assert_int_equal(row->cells[1].ts, 6);
	assert_int_equal(row->cells[1].value_len, total);
	assert_memory_equal(row->cells[1].value, want, total);
	assert_int_equal(row->cells[1].nlabels, 2);
	assert_string_equal(row->cells[1].labels[0], "first");
	assert_string_equal(row->cells[1].labels[1], "second");
	assert_cell(&row->cells[2], "f", "b", 7, "after");
	assert_int_equal(row->cells[2].nlabels, 0);
	btm_free(m);
	free(want);
}

/* A value of Bigtable's maximum size (100 MiB) in 1 MiB chunks, then a small row reusing the buffers. */
static void test_btm__large_value(void **state)
{
	const size_t total = (size_t)100 << 20, piece = (size_t)1 << 20;
	uint8_t *want = malloc(total);
	const btm_row *row = NULL;
	btm_chunk c;
	btm *m;

	assert_non_null(want);
	for (size_t i = 0; i < total; i++)
		want[i] = (uint8_t)(i ^ i >> 8 ^ i >> 16);
	assert_int_equal(btm_new(&m, false), 0);
	for (size_t at = 0; at < total; at += piece) {
		bool last = at + piece >= total;

		c = ck(at ? NULL : "big", at ? NULL : "f", at ? NULL : "q", at ? 0 : 1000, NULL,
		       last ? 0 : (int32_t)total, last ? COMMIT : 0);
		c.value = want + at;
		c.value_len = piece;
		assert_int_equal(btm_feed(m, &c, &row), last ? 1 : 0);
	}
	assert_int_equal(row->ncells, 1);
	assert_int_equal(row->cells[0].value_len, total);
	assert_memory_equal(row->cells[0].value, want, total);
	assert_int_equal(feed(m, ck("small", "f", "q", 1, "v", 0, COMMIT), &row), 1);
	assert_cell(&row->cells[0], "f", "q", 1, "v");
	btm_free(m);
	free(want);
}

/* Family and qualifier carry over independently; an empty qualifier or family that is present is a name
 * of its own; the row key may be repeated within its row. */
static void test_btm__carry_over_and_empty_names(void **state)
{
	const btm_row *row;
	btm *m;

	assert_int_equal(btm_new(&m, false), 0);
	assert_int_equal(feed(m, ck("r", "f", "", 1, "a", 0, 0), &row), 0);
	assert_int_equal(feed(m, ck(NULL, NULL, "q", 2, "b", 0, 0), &row), 0);
	assert_int_equal(feed(m, ck("r", "", "", 3, "c", 0, 0), &row), 0);
	assert_int_equal(feed(m, ck(NULL, NULL, NULL, 4, "", 0, 0), &row), 0);
	assert_int_equal(feed(m, ck(NULL, "g", "q", 0, NULL, 0, COMMIT), &row), 1);
	assert_int_equal(row->ncells, 5);
	assert_cell(&row->cells[0], "f", "", 1, "a");
	assert_cell(&row->cells[1], "f", "q", 2, "b");
	assert_cell(&row->cells[2], "", "", 3, "c");
	assert_cell(&row->cells[3], "", "", 4, "");
	assert_cell(&row->cells[4], "g", "q", 0, "");
	btm_free(m);
}

/* The rules the conformance cases do not exercise. */
static void test_btm__rejects_what_the_protocol_forbids(void **state)
{
	char *const labels[] = { "l" };
	const btm_row *row;
	btm_chunk c;
	btm *m;

	assert_int_equal(btm_new(&m, false), 0);
	/* a split value's continuation carries only value bytes */
	struct {
		btm_chunk c;
		const char *why;
	} cont[] = {
		{ ck("r", NULL, NULL, 0, "x", 0, 0), "split value continued" },
		{ ck(NULL, "f", "q", 0, "x", 0, 0), "split value continued" },
		{ ck(NULL, NULL, "q", 0, "x", 0, 0), "split value continued" },
		{ ck(NULL, NULL, NULL, 9, "x", 0, 0), "split value continued" },
		{ ck(NULL, NULL, NULL, 0, "x", 0, RESET), "reset_row in a chunk that carries data" },
		{ ck(NULL, NULL, NULL, 0, "x", 5, COMMIT), "commit_row in the middle" },
		{ ck(NULL, NULL, NULL, 0, "x", -1, 0), "negative value_size" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cont); i++) {
		btm_restart(m);
		assert_int_equal(feed(m, ck("r", "f", "q", 1, "ab", 5, 0), &row), 0);
		expect_invalid(m, cont[i].c, cont[i].why);
	}
	btm_restart(m);
	assert_int_equal(feed(m, ck("r", "f", "q", 1, "ab", 5, 0), &row), 0);
	c = ck(NULL, NULL, NULL, 0, "x", 0, 0);
	c.labels = labels;
	c.nlabels = 1;
	expect_invalid(m, c, "split value continued");
	/* a stream may not end inside a split value, nor inside a row */
	btm_restart(m);
	assert_int_equal(feed(m, ck("r", "f", "q", 1, "ab", 5, 0), &row), 0);
	assert_int_equal(btm_end(m), -EIO);
	assert_non_null(strstr(btm_error(m), "ended in the middle of a row"));
	btm_restart(m);
	assert_int_equal(feed(m, ck("r", "f", "q", 1, "ab", 0, 0), &row), 0);
	assert_int_equal(btm_end(m), -EIO);
	/* a new row names its family and qualifier */
	btm_restart(m);
	expect_invalid(m, ck("r", NULL, "q", 1, "v", 0, COMMIT), "without a family");
	btm_restart(m);
	expect_invalid(m, ck("r", "f", NULL, 1, "v", 0, COMMIT), "without a qualifier");
	/* reset and commit in one chunk (the proto's oneof forbids it) */
	btm_restart(m);
	assert_int_equal(feed(m, ck("r", "f", "q", 1, "v", 0, 0), &row), 0);
	expect_invalid(m, ck(NULL, NULL, NULL, 0, NULL, 0, RESET | COMMIT), "reset_row in a chunk");
	/* a reset alone between cells drops the row; then the stream may end */
	btm_restart(m);
	assert_int_equal(feed(m, ck("r", "f", "q", 1, "v", 0, 0), &row), 0);
	assert_int_equal(feed(m, ck(NULL, NULL, NULL, 0, NULL, 0, RESET), &row), 0);
	assert_int_equal(btm_end(m), 0);
	assert_null(btm_last_key(m, &(size_t){ 0 }));
	btm_free(m);
}

/* last_scanned_row_key moves the resume point between rows only, and later rows must lie beyond it. */
static void test_btm__scanned_key_moves_the_resume_point(void **state)
{
	const btm_row *row;
	btm *m;

	assert_int_equal(btm_new(&m, false), 0);
	assert_int_equal(feed(m, ck("b", "f", "q", 1, "v", 0, COMMIT), &row), 1);
	assert_int_equal(btm_scanned(m, (const uint8_t *)"a", 1), 0); /* behind: ignored */
	assert_last_key(m, "b");
	assert_int_equal(btm_scanned(m, (const uint8_t *)"m", 1), 0);
	assert_last_key(m, "m");
	expect_invalid(m, ck("k", "f", "q", 1, "v", 0, COMMIT), "not after");
	btm_restart(m);
	assert_int_equal(feed(m, ck("n", "f", "q", 1, "v", 0, 0), &row), 0);
	assert_int_equal(btm_scanned(m, (const uint8_t *)"z", 1), 0); /* mid-row: ignored */
	assert_last_key(m, "m");
	assert_int_equal(feed(m, ck(NULL, NULL, NULL, 0, NULL, 0, COMMIT), &row), 1);
	assert_bytes(row->key, row->key_len, "n");
	assert_last_key(m, "n");
	btm_free(m);
}

/* Row after row through one merger (its buffers reused): each row whole and only its own cells. */
static void test_btm__many_rows_in_one_stream(void **state)
{
	const btm_row *row;
	char key[16], val[32];
	btm *m;

	assert_int_equal(btm_new(&m, false), 0);
	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "k%05d", i);
		snprintf(val, sizeof(val), "value %d", i);
		assert_int_equal(feed(m, ck(key, "f", "q", i, val, 0, 0), &row), 0);
		assert_int_equal(feed(m, ck(NULL, NULL, "r", i, val, 0, COMMIT), &row), 1);
		assert_bytes(row->key, row->key_len, key);
		assert_int_equal(row->ncells, 2);
		assert_cell(&row->cells[0], "f", "q", i, val);
		assert_cell(&row->cells[1], "f", "r", i, val);
	}
	btm_free(m);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_btm__conformance_cases),
		cmocka_unit_test(test_btm__driver_detects_wrong_results),
		cmocka_unit_test(test_btm__restart_resumes_after_last_committed_row),
		cmocka_unit_test(test_btm__reversed_read_wants_decreasing_keys),
		cmocka_unit_test(test_btm__value_split_in_many_pieces),
		cmocka_unit_test(test_btm__large_value),
		cmocka_unit_test(test_btm__carry_over_and_empty_names),
		cmocka_unit_test(test_btm__rejects_what_the_protocol_forbids),
		cmocka_unit_test(test_btm__scanned_key_moves_the_resume_point),
		cmocka_unit_test(test_btm__many_rows_in_one_stream),
	};

	if (argc != 2) {
		fprintf(stderr, "usage: %s READROWS_JSON\n", argv[0]);
		return 2;
	}
	vectors_path = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
