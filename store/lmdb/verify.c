/* verify.c — lm_verify(): read every record of the store in key order and check what can be checked:
 * metadata sizes, table records (they must decode, as reads need them), drop records, and for every
 * cell its key structure, limits, header and value (decompressed). LMDB keeps no checksums, so a flipped
 * byte that leaves a record well formed (a different letter in a value) cannot be seen; order breaks,
 * headers, lengths, compressed frames and B-tree damage can. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "heat.h"
#include "keys.h"
#include "mem.h"
#include "schema.h"
#include "lm.h"

struct vtab {
	uint32_t id;
	const char *name; /* borrowed from the transaction's schema cache, as T */
	const struct sch_table *t;
};

struct vs {
	lm_txn *txn;
	cs_problem_fn *report;
	void *ctx;
	cs_verify_stats *st;
	struct vtab *tabs;
	size_t ntabs;
	uint32_t *staged;
	size_t nstaged;
};

__attribute__((format(printf, 3, 4)))
static void problem(struct vs *v, const cs_problem *where, const char *fmt, ...)
{
	cs_problem p = { 0 };
	char what[256];
	va_list ap;

	if (where)
		p = *where;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	p.what = what;
	v->st->problems++;
	v->report(v->ctx, &p);
}

static const struct vtab *vtab_of(const struct vs *v, uint32_t id)
{
	for (size_t i = 0; i < v->ntabs; i++)
		if (v->tabs[i].id == id)
			return &v->tabs[i];
	return NULL;
}

static const char *table_of(const struct vs *v, uint32_t id)
{
	const struct vtab *t = vtab_of(v, id);
	return t ? t->name : NULL;
}

static int check_meta(struct vs *v, const uint8_t *k, size_t kn, const uint8_t *val, size_t vn)
{
	static const struct {
		const char *key;
		size_t vlen;
	} known[] = { { "Mnextid", 4 }, { "Mseq", 8 } };
	const char *what;

	if (heat_check_record(k, kn, val, vn, &what)) {
		v->st->records--; /* (counted apart: they come and go with every access) */
		v->st->heat++;
		if (what)
			problem(v, NULL, "%s", what);
		return 0;
	}

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (kn == strlen(known[i].key) && !memcmp(k, known[i].key, kn)) {
			if (vn != known[i].vlen)
				problem(v, NULL, "metadata record \"%s\" has %zu bytes, not %zu", known[i].key, vn,
					known[i].vlen);
			return 0;
		}
	if (kn == 10 && !memcmp(k, "Mstage", 6)) {
		uint32_t *ns;
		if (vn != 4)
			problem(v, NULL, "restore staging record has %zu bytes, not 4", vn);
		if (!(ns = mem_realloc(v->staged, (v->nstaged + 1) * sizeof(*ns))))
			return -ENOMEM;
		v->staged = ns;
		v->staged[v->nstaged++] = key_get_u32(k + 6);
		return 0;
	}
	problem(v, NULL, "unknown metadata record (key of %zu bytes)", kn);
	return 0;
}

static int check_table(struct vs *v, const uint8_t *k, size_t kn)
{
	char name[CS_MAX_TABLE + 1];
	struct sch_table *t;
	struct vtab *nt;
	int rc;

	if (kn - 1 > CS_MAX_TABLE || memchr(k + 1, 0, kn - 1)) {
		problem(v, NULL, "table record with an invalid name (%zu bytes)", kn - 1);
		return 0;
	}
	memcpy(name, k + 1, kn - 1);
	name[kn - 1] = 0;
	if (cs_check_table_name(name)) {
		problem(v, NULL, "table record with an invalid name %.60s", name);
		return 0;
	}
	cs_problem where = { .table = name };
	if ((rc = sch_table_get(v->txn, name, &t))) {
		if (rc == -ENOMEM)
			return rc;
		problem(v, &where, "the table's schema record does not decode");
		return 0;
	}
	if (table_of(v, t->id)) {
		problem(v, &where, "table id %u is also the id of table %s", t->id, table_of(v, t->id));
		return 0;
	}
	if (!(nt = mem_realloc(v->tabs, (v->ntabs + 1) * sizeof(*nt))))
		return -ENOMEM;
	v->tabs = nt;
	v->tabs[v->ntabs++] = (struct vtab){ t->id, t->name, t };
	v->st->tables++;
	return 0;
}

static void check_drop(struct vs *v, const uint8_t *k, size_t kn, const uint8_t *val, size_t vn)
{
	cs_problem where = { .table = kn >= KEY_TABLE_PREFIX ? table_of(v, key_get_u32(k + 1)) : NULL };
	size_t sn;
	int a = kn >= KEY_TABLE_PREFIX + 2 + 8 ? key_dec(k + KEY_TABLE_PREFIX, kn - KEY_TABLE_PREFIX - 8, NULL, &sn) : -EIO;

	if (a < 0 || (size_t)a != kn - KEY_TABLE_PREFIX - 8)
		problem(v, &where, "dropped-range record with a malformed key");
	else if (vn < 1 || val[0] > 3 || vn - 1 > CS_MAX_ROW_KEY + 1)
		problem(v, &where, "dropped-range record with a malformed value");
}

/* Whether a cell written at H's sequence belongs to family F (not to an earlier family of that name). */
static bool seq_visible(const struct sch_family *f, const codec_hdr *h)
{
	return h->seq >= f->since;
}

static int check_cell(struct vs *v, const uint8_t *k, size_t kn, const uint8_t *val, size_t vn)
{
	uint8_t *row = v->txn->kbuf, *q = v->txn->kbuf2;
	char fam[CS_MAX_FAMILY + 1];
	cs_bytes rb, qb;
	cs_problem where = { 0 };
	key_parts kp;
	codec_hdr h;
	const void *dv;
	size_t dn, rn, qn;
	void *owned;
	uint32_t id = kn >= KEY_TABLE_PREFIX ? key_get_u32(k + 1) : 0;
	int rc;

	where.table = table_of(v, id);
	if (!where.table)
		v->st->orphans++;
	if (key_parse_cell(k, kn, &kp)) {
		problem(v, &where, "cell key does not parse (%zu bytes)", kn);
		return 0;
	}
	key_dec(k + kp.row_off, kp.row_len, row, &rn);
	rb = CS_BYTES(row, rn);
	where.row = &rb;
	if (rn > CS_MAX_ROW_KEY) {
		problem(v, &where, "row key of %zu bytes, over the limit", rn);
		return 0;
	}
	if (kp.fam_len > CS_MAX_FAMILY) {
		problem(v, &where, "family name of %zu bytes, over the limit", kp.fam_len);
		return 0;
	}
	memcpy(fam, k + kp.fam_off, kp.fam_len);
	fam[kp.fam_len] = 0;
	where.family = fam;
	if (cs_check_family_name(fam)) {
		where.family = NULL;
		problem(v, &where, "invalid family name in a cell key");
		return 0;
	}
	key_dec(k + kp.q_off, kp.q_len, q, &qn);
	qb = CS_BYTES(q, qn);
	where.qualifier = &qb;
	if (qn > CS_MAX_QUALIFIER) {
		problem(v, &where, "qualifier of %zu bytes, over the limit", qn);
		return 0;
	}
	where.has_ts = true;
	where.ts = kp.ts;
	if (codec_header(val, vn, &h)) {
		problem(v, &where, "cell header corrupt (record of %zu bytes)", vn);
		return 0;
	}
	if ((rc = codec_decode(val, vn, &dv, &dn, &owned))) {
		if (rc == -ENOMEM)
			return rc;
		problem(v, &where, "value does not decompress (%llu bytes, compressed to %zu)",
			(unsigned long long)h.rawlen, vn - h.hdrlen);
		return 0;
	}
	free(owned);
	{
		const struct vtab *t = vtab_of(v, id);
		const struct sch_family *f = t ? sch_family_find(t->t, fam) : NULL;
		if (f && f->type != CS_TYPE_BYTES && seq_visible(f, &h) && dn != 8)
			problem(v, &where, "aggregate (%s) cell of %zu bytes, not 8", cs_value_type_name(f->type), dn);
	}
	v->st->cells++;
	v->st->value_bytes += dn;
	return 0;
}

int lm_verify(void *txn_, cs_problem_fn *report, void *ctx, cs_verify_stats *stats)
{
	lm_txn *txn = txn_;
	cs_verify_stats local;
	struct vs v = { .txn = txn, .report = report, .ctx = ctx, .st = stats ? stats : &local };
	uint8_t *prev = mem_malloc(KEY_MAX);
	size_t prevn = 0;
	kv_cursor *c = NULL;
	int rc;

	memset(v.st, 0, sizeof(*v.st));
	if (!prev)
		return -ENOMEM;
	if ((rc = kv_cursor_open(txn->kv, &c))) {
		problem(&v, NULL, "cannot read the store: %s", strerror(-rc));
		rc = 0;
		goto out;
	}
	for (rc = kv_seek(c, "", 0); !rc; rc = kv_next(c)) {
		const uint8_t *k, *val;
		size_t kn, vn;

		if ((rc = kv_pair(c, (const void **)&k, &kn, (const void **)&val, &vn)))
			break;
		v.st->records++;
		if (kn == 0 || kn > KEY_MAX) {
			problem(&v, NULL, "record with a key of %zu bytes", kn);
			continue;
		}
		if (prevn) {
			int o = memcmp(prev, k, prevn < kn ? prevn : kn);
			if (o > 0 || (o == 0 && prevn >= kn))
				problem(&v, NULL, "records out of order (key of %zu bytes starting 0x%02x)", kn, k[0]);
		}
		memcpy(prev, k, kn);
		prevn = kn;
		switch (k[0]) {
		case KEY_META:
			rc = check_meta(&v, k, kn, val, vn);
			break;
		case KEY_TABLE:
			rc = check_table(&v, k, kn);
			break;
		case KEY_DROP:
			check_drop(&v, k, kn, val, vn);
			break;
		case KEY_DATA:
			rc = check_cell(&v, k, kn, val, vn);
			break;
		default:
			problem(&v, NULL, "record of unknown kind 0x%02x", k[0]);
		}
		if (rc)
			goto out;
	}
	if (rc == -ENOENT)
		rc = 0;
	if (rc && rc != -ENOMEM) {
		problem(&v, NULL, "the B-tree is damaged after %llu records: %s", (unsigned long long)v.st->records,
			rc == -EIO ? "a page is corrupt or lies outside the file" : strerror(-rc));
		rc = 0;
	}
out:
	kv_cursor_close(c);
	free(prev);
	free(v.tabs);
	free(v.staged);
	return rc;
}
