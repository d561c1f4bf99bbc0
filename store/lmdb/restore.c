/* restore.c — lm_restore(): reads a dump (dumpfmt.h) into hidden staging tables, committed in batches,
 * and puts them in place in one last transaction once the whole stream has checked out.
 *
 * A staging table is a fresh table id with cells but no table record, so no read can see it; its
 * 'M' "stage" id record (holding the restoring process's pid) tells lm_gc() not to collect its cells as
 * a deleted table's while the restore runs. A failed restore deletes its staging cells and records; one
 * whose process died leaves them to the next lm_gc() of the whole store (the pid is gone). */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "restore.h"
#include "codec.h"
#include "dumpfmt.h"
#include "hash.h"
#include "keys.h"
#include "mem.h"
#include "schema.h"
#include "lm.h"

#define DEFAULT_BATCH (64ull << 20)
#define STAGE_KEY "Mstage"
#define STAGE_KEYN 6
#define MAX_SCHEMA (16u << 20)

struct stage {
	struct sch_table t; /* the table to be: name, staging id, schema (families' since 0: a fresh id) */
	bool committed;     /* its stage record is in the store (a batch committed since it began) */
};

struct rs {
	lm_store *st;
	lm_txn *txn;
	const cs_restore_opts *o;
	cs_restore_result *res;
	uint64_t batch_bytes, written, seq;
	bool no_append;            /* a cell could not be appended: put the rest */
	/* input */
	cs_read_fn *read;
	void *ctx;
	uint64_t off, frame_off, chain;
	uint8_t *f, *raw;          /* the frame as read; its payload decompressed */
	size_t fcap, rawcap;
	const uint8_t *p, *end;    /* the payload being parsed */
	/* output */
	struct stage *stg;
	size_t nstg;
	uint8_t *prev;             /* the last cell key written (order check), prevn 0: none */
	size_t prevn;
	uint8_t *row;              /* the last row key seen in the table */
	size_t rown;
	cs_dump_stats seen;
};

__attribute__((format(printf, 3, 4)))
static int bad(struct rs *r, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->res->why, sizeof(r->res->why), fmt, ap);
	va_end(ap);
	for (char *c = r->res->why; *c; c++) /* one line, whatever bytes a dump names */
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	r->res->offset = off;
	return -EBADMSG;
}

/* ---- input ---- */

/* Read exactly N bytes. *GOT (if not NULL) gets how many came before the end of the input. */
static int read_exact(struct rs *r, void *p, size_t n, size_t *got)
{
	size_t have = 0;
	while (have < n) {
		size_t g = 0;
		int rc = r->read(r->ctx, (uint8_t *)p + have, n - have, &g);
		if (rc)
			return rc;
		if (!g)
			break;
		have += g;
	}
	r->off += have;
	if (got)
		*got = have;
	return have == n ? 0 : -ENODATA;
}

static int grow(uint8_t **b, size_t *cap, size_t need)
{
	uint8_t *nb;
	if (need <= *cap)
		return 0;
	if (!(nb = mem_realloc(*b, need)))
		return -ENOMEM;
	*b = nb;
	*cap = need;
	return 0;
}

/* Read the next frame, check it and decompress its payload into r->p..r->end. Returns its kind. */
static int next_frame(struct rs *r)
{
	uint8_t h[DF_FRAME_HDR], sum[DF_FRAME_SUM];
	uint64_t start = r->off, max;
	uint32_t stored, rawn;
	size_t got = 0;
	int kind, rc;

	r->frame_off = start;
	if ((rc = read_exact(r, h, sizeof(h), &got)) == -ENODATA)
		return bad(r, start, "truncated: the dump ends after %llu bytes, before its trailer",
			   (unsigned long long)(start + got));
	if (rc)
		return rc;
	kind = h[0];
	stored = df_get32(h + 4);
	rawn = df_get32(h + 8);
	max = kind == DF_CELLS ? DF_BLOCK + r->st->max_value + 2 * KEY_MAX : kind == DF_SCHEMA ? MAX_SCHEMA : 64;
	if ((kind != DF_SCHEMA && kind != DF_CELLS && kind != DF_END) || h[1] > DF_ZSTD || h[2] || h[3] ||
	    rawn > max || (h[1] == DF_RAW && stored != rawn) || (h[1] == DF_ZSTD && stored > rawn + rawn / 8 + 1024))
		return bad(r, start, "corrupt frame header at offset %llu", (unsigned long long)start);
	if ((rc = grow(&r->f, &r->fcap, DF_FRAME_HDR + (size_t)stored)))
		return rc;
	memcpy(r->f, h, DF_FRAME_HDR);
	rc = read_exact(r, r->f + DF_FRAME_HDR, stored, &got);
	if (!rc)
		rc = read_exact(r, sum, sizeof(sum), NULL);
	if (rc == -ENODATA)
		return bad(r, start, "truncated: the dump ends inside the frame at offset %llu",
			   (unsigned long long)start);
	if (rc)
		return rc;
	r->chain = hash_xxh64(r->f, DF_FRAME_HDR + stored, r->chain);
	if (df_get64(sum) != r->chain)
		return bad(r, start, "checksum mismatch in the frame at offset %llu", (unsigned long long)start);
	if (h[1] == DF_ZSTD) {
		if ((rc = grow(&r->raw, &r->rawcap, rawn ? rawn : 1)))
			return rc;
		if ((rc = codec_zunpack(r->f + DF_FRAME_HDR, stored, r->raw, rawn)))
			return rc == -EBADMSG ? bad(r, start, "corrupt compressed frame at offset %llu",
						(unsigned long long)start) : rc;
		r->p = r->raw;
	} else {
		r->p = r->f + DF_FRAME_HDR;
	}
	r->end = r->p + rawn;
	return kind;
}

static int malformed(struct rs *r)
{
	return bad(r, r->frame_off, "malformed frame at offset %llu", (unsigned long long)r->frame_off);
}

static int get_varint(struct rs *r, uint64_t *v)
{
	int a = codec_get_varint(r->p, (size_t)(r->end - r->p), v);
	if (a < 0)
		return malformed(r);
	r->p += a;
	return 0;
}

static int get_bytes(struct rs *r, const uint8_t **p, size_t *n)
{
	uint64_t len;
	int rc = get_varint(r, &len);
	if (rc)
		return rc;
	if (len > (uint64_t)(r->end - r->p))
		return malformed(r);
	*p = r->p;
	*n = (size_t)len;
	r->p += len;
	return 0;
}

/* A string attribute or name, as a C string (no NULs). Caller frees. */
static int get_str(struct rs *r, char **out)
{
	const uint8_t *p = NULL;
	size_t n = 0;
	int rc = get_bytes(r, &p, &n);
	if (rc)
		return rc;
	if (memchr(p, 0, n))
		return malformed(r);
	return (*out = mem_strndup((const char *)p, n)) ? 0 : -ENOMEM;
}

/* ---- output ---- */

static void stage_key(uint8_t *k, uint32_t id)
{
	memcpy(k, STAGE_KEY, STAGE_KEYN);
	key_put_u32(k + STAGE_KEYN, id);
}

static void stage_release(struct stage *s)
{
	for (size_t i = 0; i < s->t.nfam; i++) {
		free(s->t.fam[i].name);
		free(s->t.fam[i].gc);
		gcp_free(s->t.fam[i].policy);
	}
	free(s->t.fam);
	free(s->t.name);
}

/* Commit the batch and begin the next transaction. */
static int batch_commit(struct rs *r)
{
	int rc = lm_txn_commit(r->txn);
	r->txn = NULL;
	if (rc)
		return rc;
	for (size_t i = 0; i < r->nstg; i++)
		r->stg[i].committed = true;
	r->written = 0;
	if ((rc = lm_txn_open(r->st, 0, &r->txn)))
		return rc;
	return lm_txn_seq(r->txn, &r->seq);
}

/* Table attributes: "created", "delim", "keyviz". Family attributes: "gc", and "type" for an aggregate family. */
static int schema_frame(struct rs *r)
{
	struct stage s = { 0 };
	struct sch_table *old;
	uint64_t nattr, nfam;
	uint8_t sk[STAGE_KEYN + 4], pid[4];
	int rc;

	if ((rc = get_str(r, &s.t.name)))
		goto fail;
	if (cs_check_table_name(s.t.name)) {
		rc = malformed(r);
		goto fail;
	}
	for (size_t i = 0; i < r->nstg; i++)
		if (!strcmp(r->stg[i].t.name, s.t.name)) {
			rc = bad(r, r->frame_off, "table \"%s\" appears twice in the dump", s.t.name);
			goto fail;
		}
	s.t.delim = CS_DEFAULT_DELIM;
	if ((rc = get_varint(r, &nattr)))
		goto fail;
	for (uint64_t i = 0; i < nattr; i++) {
		char *k = NULL;
		const uint8_t *v = NULL;
		size_t vn = 0;
		if ((rc = get_str(r, &k)) || (rc = get_bytes(r, &v, &vn))) {
			free(k);
			goto fail;
		}
		if (!strcmp(k, "delim")) {
			if (vn != 1)
				rc = malformed(r);
			else
				s.t.delim = (char)v[0];
		} else if (!strcmp(k, "keyviz")) {
			if (vn == 2 && !memcmp(v, "on", 2))
				s.t.heat_off = false;
			else if (vn == 3 && !memcmp(v, "off", 3))
				s.t.heat_off = true;
			else
				rc = malformed(r);
		} else if (!strcmp(k, "created")) {
			char num[24], *e;
			if (vn && vn < sizeof(num)) {
				memcpy(num, v, vn);
				num[vn] = 0;
				s.t.created = strtoll(num, &e, 10);
			}
			if (!vn || vn >= sizeof(num) || *e)
				rc = malformed(r);
		} else {
			bad(r, r->frame_off, "table attribute \"%.40s\" is not known to this version", k);
			rc = -ENOTSUP;
		}
		free(k);
		if (rc)
			goto fail;
	}
	if ((rc = get_varint(r, &nfam)))
		goto fail;
	if (nfam > (uint64_t)(r->end - r->p)) {
		rc = malformed(r);
		goto fail;
	}
	if (nfam && !(s.t.fam = mem_calloc(nfam, sizeof(*s.t.fam)))) {
		rc = -ENOMEM;
		goto fail;
	}
	for (; s.t.nfam < nfam; s.t.nfam++) {
		struct sch_family *f = &s.t.fam[s.t.nfam];
		if ((rc = get_str(r, &f->name)) || (rc = get_varint(r, &nattr)))
			goto fail_fam;
		if (cs_check_family_name(f->name) || (s.t.nfam && strcmp(f[-1].name, f->name) >= 0)) {
			rc = malformed(r);
			goto fail_fam;
		}
		for (uint64_t i = 0; i < nattr; i++) {
			char *k = NULL, *v = NULL;
			if ((rc = get_str(r, &k)) || (rc = get_str(r, &v))) {
				free(k);
				goto fail_fam;
			}
			if (!strcmp(k, "gc") && !f->gc) {
				free(k);
				rc = gcp_parse(v, &f->policy, NULL);
				if (rc == -EINVAL)
					rc = bad(r, r->frame_off, "invalid GC policy \"%.40s\"", v);
				else if (!rc && !(f->gc = gcp_format(f->policy)))
					rc = -ENOMEM;
				if (rc) {
					free(v);
					goto fail_fam;
				}
				free(v);
				continue;
			}
			if (!strcmp(k, "type") && f->type == CS_TYPE_BYTES) {
				rc = cs_value_type_parse(v, &f->type);
				if (rc == -EOPNOTSUPP) {
					bad(r, r->frame_off, "value type \"%.40s\" is not supported", v);
					rc = -ENOTSUP;
				} else if (rc || f->type == CS_TYPE_BYTES) {
					rc = malformed(r);
				}
				free(k);
				free(v);
				if (rc)
					goto fail_fam;
				continue;
			}
			bad(r, r->frame_off, "family attribute \"%.40s\" is not known to this version", k);
			rc = -ENOTSUP;
			free(k);
			free(v);
			goto fail_fam;
		}
		if (!f->gc && (gcp_parse("never", &f->policy, NULL) || !(f->gc = gcp_format(f->policy)))) {
			rc = -ENOMEM;
			goto fail_fam;
		}
		continue;
fail_fam:
		s.t.nfam++;
		goto fail;
	}
	if (r->p != r->end) {
		rc = malformed(r);
		goto fail;
	}
	rc = sch_table_get(r->txn, s.t.name, &old);
	if (!rc && !r->o->overwrite) {
		snprintf(r->res->table, sizeof(r->res->table), "%s", s.t.name);
		rc = -EEXIST;
		goto fail;
	}
	if (rc && rc != -ENOENT)
		goto fail;
	/* A fresh id: no cell was ever written under it, so every family counts from sequence 0. */
	if ((rc = sch_new_table_id(r->txn, &s.t.id)))
		goto fail;
	stage_key(sk, s.t.id);
	key_put_u32(pid, (uint32_t)getpid());
	if ((rc = lm_txn_fail(r->txn, kv_put(r->txn->kv, sk, sizeof(sk), pid, sizeof(pid)))))
		goto fail;
	{
		struct stage *ns = mem_realloc(r->stg, (r->nstg + 1) * sizeof(*ns));
		if (!ns) {
			rc = -ENOMEM;
			goto fail;
		}
		r->stg = ns;
		r->stg[r->nstg++] = s;
	}
	r->prevn = 0;
	r->rown = 0;
	r->seen.tables++;
	return 0;
fail:
	stage_release(&s);
	return rc;
}

static int cells_frame(struct rs *r)
{
	struct stage *s = r->nstg ? &r->stg[r->nstg - 1] : NULL;
	uint8_t *k = r->txn->kbuf;
	const uint8_t *row = NULL;
	size_t rown = 0;
	int rc;

	if (!s)
		return bad(r, r->frame_off, "cells before any table at offset %llu", (unsigned long long)r->frame_off);
	while (r->p < r->end) {
		const uint8_t *q = NULL, *v = NULL;
		size_t qn = 0, vn = 0, kn;
		uint64_t rl, fi, ts;
		const void *rec;
		size_t recn;
		int c;

		if ((rc = get_varint(r, &rl)))
			return rc;
		if (rl) {
			if (rl > CS_MAX_ROW_KEY || rl > (uint64_t)(r->end - r->p))
				return malformed(r);
			row = r->p;
			rown = (size_t)rl;
			r->p += rl;
		} else if (!row) {
			return malformed(r);
		}
		if ((rc = get_varint(r, &fi)) || (rc = get_bytes(r, &q, &qn)) || (rc = get_varint(r, &ts)) ||
		    (rc = get_bytes(r, &v, &vn)))
			return rc;
		if (fi >= s->t.nfam || qn > CS_MAX_QUALIFIER || ts > (uint64_t)INT64_MAX)
			return malformed(r);
		if (vn > r->st->max_value) {
			r->res->offset = r->frame_off;
			return -EFBIG;
		}
		kn = key_cell(k, s->t.id, CS_BYTES(row, rown), s->t.fam[fi].name, CS_BYTES(q, qn), (int64_t)ts);
		c = r->prevn ? memcmp(r->prev, k, kn < r->prevn ? kn : r->prevn) : -1;
		if (c > 0 || (c == 0 && kn <= r->prevn))
			return bad(r, r->frame_off, "cells out of order in the frame at offset %llu",
				   (unsigned long long)r->frame_off);
		if (!r->prev && !(r->prev = mem_malloc(KEY_MAX)))
			return -ENOMEM;
		memcpy(r->prev, k, kn);
		r->prevn = kn;
		if (rown != r->rown || memcmp(row, r->row, rown)) {
			if (!r->row && !(r->row = mem_malloc(CS_MAX_ROW_KEY)))
				return -ENOMEM;
			memcpy(r->row, row, rown);
			r->rown = rown;
			r->seen.rows++;
		}
		if ((rc = codec_encode(v, vn, r->seq, &r->txn->scratch, &r->txn->scratch_cap, &rec, &recn)))
			return lm_txn_fail(r->txn, rc);
		/* A staging id is the newest, so its cells, in order, go past the end of the store: append
		 * (pages fill whole). LMDB refuses an append out of order without writing; then put. */
		rc = -EEXIST;
		if (!r->no_append && kn <= KV_INLINE_MAX && (rc = kv_append(r->txn->kv, k, kn, rec, recn)) == -EEXIST)
			r->no_append = true;
		if (rc == -EEXIST)
			rc = kv_put(r->txn->kv, k, kn, rec, recn);
		if (rc)
			return lm_txn_fail(r->txn, rc);
		r->seen.cells++;
		r->seen.value_bytes += vn;
		r->written += vn + kn;
		if (r->written >= r->batch_bytes) {
			if ((rc = batch_commit(r)))
				return rc;
			k = r->txn->kbuf;
		}
	}
	return 0;
}

static int end_frame(struct rs *r)
{
	uint64_t v[4];
	uint8_t extra;
	size_t got = 0;
	int rc;

	for (int i = 0; i < 4; i++)
		if ((rc = get_varint(r, &v[i])))
			return rc;
	if (r->p != r->end)
		return malformed(r);
	if (v[0] != r->seen.tables || v[1] != r->seen.rows || v[2] != r->seen.cells || v[3] != r->seen.value_bytes)
		return bad(r, r->frame_off, "the trailer's counts do not match the dump's contents");
	rc = read_exact(r, &extra, 1, &got);
	if (rc == 0)
		return bad(r, r->off - 1, "unexpected bytes after the trailer at offset %llu",
			   (unsigned long long)(r->off - 1));
	return rc == -ENODATA ? 0 : rc;
}

/* Put every staged table in place, in the last transaction. */
static int finish(struct rs *r)
{
	uint8_t sk[STAGE_KEYN + 4];
	int rc;

	for (size_t i = 0; i < r->nstg; i++) {
		struct stage *s = &r->stg[i];
		struct sch_table *old;
		rc = sch_table_get(r->txn, s->t.name, &old);
		if (!rc && !r->o->overwrite) {
			snprintf(r->res->table, sizeof(r->res->table), "%s", s->t.name);
			return -EEXIST; /* created meanwhile */
		}
		if (!rc)
			rc = lm_table_delete(r->txn, s->t.name);
		else if (rc == -ENOENT)
			rc = 0;
		if (rc || (rc = sch_table_put(r->txn, &s->t)))
			return lm_txn_fail(r->txn, rc);
		stage_key(sk, s->t.id);
		if ((rc = kv_del(r->txn->kv, sk, sizeof(sk))) && rc != -ENOENT)
			return lm_txn_fail(r->txn, rc);
	}
	return 0;
}

/* Remove the committed staging tables of a failed restore, in batches. */
static void cleanup(struct rs *r)
{
	lm_txn *txn = NULL;
	kv_cursor *c = NULL;
	uint64_t n = 0;

	for (size_t i = 0; i < r->nstg; i++) {
		uint8_t pfx[KEY_TABLE_PREFIX], sk[STAGE_KEYN + 4];
		int rc;
		if (!r->stg[i].committed)
			continue;
		key_table_data(pfx, r->stg[i].t.id);
		for (;;) {
			const void *k;
			size_t kn;
			if (!txn && (lm_txn_open(r->st, 0, &txn) || kv_cursor_open(txn->kv, &c)))
				goto out;
			if ((rc = kv_seek(c, pfx, KEY_TABLE_PREFIX)))
				break;
			kv_key(c, &k, &kn);
			if (kn < KEY_TABLE_PREFIX || memcmp(k, pfx, KEY_TABLE_PREFIX))
				break;
			memcpy(txn->kbuf, k, kn);
			if (kv_del(txn->kv, txn->kbuf, kn))
				goto out;
			if (++n % 100000 == 0) {
				kv_cursor_close(c);
				c = NULL;
				if (lm_txn_commit(txn)) {
					txn = NULL;
					goto out;
				}
				txn = NULL;
			}
		}
		if (!txn && (lm_txn_open(r->st, 0, &txn) || kv_cursor_open(txn->kv, &c)))
			goto out;
		stage_key(sk, r->stg[i].t.id);
		kv_del(txn->kv, sk, sizeof(sk));
	}
	kv_cursor_close(c);
	c = NULL;
	if (txn)
		lm_txn_commit(txn); /* if this fails too, the next lm_gc() removes what is left */
	txn = NULL;
out:
	kv_cursor_close(c);
	lm_txn_abort(txn);
}

int lm_restore(void *st_, cs_read_fn *read, void *ctx, const cs_restore_opts *opts, cs_restore_result *res)
{
	lm_store *st = st_;
	static const cs_restore_opts defaults;
	cs_restore_result local;
	struct rs r = { .st = st, .read = read, .ctx = ctx };
	uint8_t hdr[DF_HDR];
	size_t got = 0;
	int rc, kind;

	r.o = opts ? opts : &defaults;
	r.res = res ? res : &local;
	memset(r.res, 0, sizeof(*r.res));
	r.batch_bytes = r.o->batch_bytes ? r.o->batch_bytes : DEFAULT_BATCH;
	rc = read_exact(&r, hdr, DF_HDR, &got);
	if (rc == -ENODATA && got >= 8 && !memcmp(hdr, DF_MAGIC, 8))
		return bad(&r, 0, "truncated: the dump ends after %zu bytes, inside its header", got);
	if (rc == -ENODATA || (!rc && memcmp(hdr, DF_MAGIC, 8)))
		return bad(&r, 0, "not a cellfs dump (no CELLDUMP header)");
	if (rc)
		return rc;
	if (df_get32(hdr + 8) != DF_VERSION || df_get32(hdr + 12)) {
		snprintf(r.res->why, sizeof(r.res->why), "format version %u is not supported (this build reads %u)",
			 df_get32(hdr + 8), DF_VERSION);
		return -ENOTSUP;
	}
	r.chain = hash_xxh64(hdr, DF_HDR, 0);
	if ((rc = lm_txn_open(st, 0, &r.txn)) || (rc = lm_txn_seq(r.txn, &r.seq)))
		goto out;
	for (;;) {
		if ((kind = next_frame(&r)) < 0) {
			rc = kind;
			break;
		}
		if (kind == DF_SCHEMA)
			rc = schema_frame(&r);
		else if (kind == DF_CELLS)
			rc = cells_frame(&r);
		else
			rc = end_frame(&r);
		if (rc || kind == DF_END)
			break;
	}
	if (!rc)
		rc = finish(&r);
	if (!rc) {
		rc = lm_txn_commit(r.txn);
		r.txn = NULL;
	}
out:
	lm_txn_abort(r.txn);
	r.txn = NULL;
	if (rc)
		cleanup(&r);
	else
		r.res->stats = r.seen;
	r.res->stats.bytes = r.off;
	for (size_t i = 0; i < r.nstg; i++)
		stage_release(&r.stg[i]);
	free(r.stg);
	free(r.f);
	free(r.raw);
	free(r.prev);
	free(r.row);
	return rc;
}

int restore_live_ids(lm_txn *txn, uint32_t **ids, size_t *n)
{
	kv_cursor *c;
	uint32_t *v = NULL;
	size_t cnt = 0;
	int rc;

	*ids = NULL;
	*n = 0;
	if ((rc = kv_cursor_open(txn->kv, &c)))
		return rc;
	for (rc = kv_seek(c, STAGE_KEY, STAGE_KEYN); !rc;) {
		const uint8_t *k, *val;
		size_t kn, vn;
		uint32_t *nv;
		if ((rc = kv_pair(c, (const void **)&k, &kn, (const void **)&val, &vn)))
			break;
		if (kn < STAGE_KEYN || memcmp(k, STAGE_KEY, STAGE_KEYN))
			break;
		if (kn == STAGE_KEYN + 4 && vn == 4 && !txn->rdonly && kill((pid_t)key_get_u32(val), 0) &&
		    errno == ESRCH) {
			/* Its restore died: forget the record, so its cells go as a deleted table's. */
			memcpy(txn->kbuf, k, kn);
			if ((rc = kv_del(txn->kv, txn->kbuf, kn)) || (rc = kv_seek(c, txn->kbuf, kn)))
				break;
			continue;
		}
		if (kn == STAGE_KEYN + 4) {
			if (!(nv = mem_realloc(v, (cnt + 1) * sizeof(*v)))) {
				rc = -ENOMEM;
				break;
			}
			v = nv;
			v[cnt++] = key_get_u32(k + STAGE_KEYN);
		}
		rc = kv_next(c);
	}
	kv_cursor_close(c);
	if (rc && rc != -ENOENT) {
		free(v);
		return rc;
	}
	*ids = v;
	*n = cnt;
	return 0;
}
