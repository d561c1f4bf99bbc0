/* lm.c — the LMDB backend (lm.h): opening a store, transactions, the write sequence dropped ranges
 * are judged by, and the commit path; its table for the seam is lm_backend.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lm.h"
#include "lm_internal.h"
#include "keys.h"
#include "mem.h"
#include "schema.h"

static const char META_SEQ[] = "Mseq";

int lm_store_open(const char *dir, const cs_open_opts *opts, lm_store **out)
{
	lm_store *st;
	int rc;

	st = mem_calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	sch_spares_init(&st->spares);
	st->rdonly = opts->flags & (CS_OPEN_RDONLY | CS_OPEN_ASOF);
	st->asof = opts->flags & CS_OPEN_ASOF;
	st->asof_us = opts->asof;
	st->max_value = opts->max_value ? opts->max_value : CS_DEFAULT_MAX_VALUE;
	if ((rc = heat_new(&st->heat)) || !(st->dir = mem_strdup(dir)))
		rc = -ENOMEM;
	else
		rc = kv_env_open(dir, st->rdonly, opts->flags & CS_OPEN_CREATE, &st->kv);
	if (rc) {
		heat_free(st->heat);
		free(st->dir);
		sch_spares_release(&st->spares);
		free(st);
		return rc;
	}
	kv_env_set_bg_sync(st->kv, opts->flags & CS_OPEN_BG_SYNC);
	*out = st;
	return 0;
}

void lm_store_close(void *st_)
{
	lm_store *st = st_;
	if (!st)
		return;
	if (heat_pending(st->heat))
		lm_heat_flush(st); /* (errors are not reported: the counts are only lost) */
	kv_env_close(st->kv);
	heat_free(st->heat);
	free(st->dir);
	sch_spares_release(&st->spares);
	free(st);
}

int lm_store_sync(void *st_)
{
	lm_store *st = st_;
	return kv_env_sync(st->kv);
}

bool lm_store_unpin(void *st_)
{
	lm_store *st = st_;
	return kv_env_unpin(st->kv);
}

int lm_store_release_pages(void *st_)
{
	lm_store *st = st_;
	return kv_env_release_pages(st->kv);
}

bool lm_store_sync_due(void *st_)
{
	lm_store *st = st_;
	return kv_env_sync_due(st->kv);
}

bool lm_store_sync_wait(void *st_, unsigned ms)
{
	lm_store *st = st_;
	return kv_env_sync_wait(st->kv, ms);
}

static int seq_floor(lm_txn *t, uint64_t *floor);
static int seq_floor_store(lm_txn *t, uint64_t floor);

/* The copy's txnids start again at 1: raise its sequence floor (below) past every sequence ST has used,
 * read after the copy, so no earlier snapshot's can be larger. Then sync the copy. */
static int compact_floor(lm_store *st, const char *dest)
{
	cs_open_opts o = { 0 };
	uint64_t floor, used;
	lm_store *copy;
	lm_txn *t;
	int rc;

	if ((rc = lm_txn_open(st, CS_TXN_RDONLY, &t)))
		return rc;
	rc = seq_floor(t, &floor);
	used = floor + kv_txn_id(t->kv);
	lm_txn_abort(t);
	if (rc || (rc = lm_store_open(dest, &o, &copy)))
		return rc;
	if (!(rc = lm_txn_open(copy, 0, &t))) {
		if ((rc = seq_floor_store(t, used + 1)))
			lm_txn_abort(t);
		else
			rc = lm_txn_commit(t);
	}
	if (!rc)
		rc = lm_store_sync(copy);
	lm_store_close(copy);
	return rc;
}

int lm_store_compact(void *st_, const char *dest, uint64_t *size)
{
	lm_store *st = st_;
	if (st->asof) /* (an as-of store: the copy would hold every cell, the newer ones too) */
		return -EOPNOTSUPP;
	struct stat sb;
	char *data;
	int rc;

	if (!dest || !*dest)
		return -EINVAL;
	if (mkdir(dest, 0700) && errno != EEXIST)
		return -errno;
	if (stat(dest, &sb))
		return -errno;
	if (!S_ISDIR(sb.st_mode))
		return -ENOTDIR;
	if (mem_asprintf(&data, "%s/data.mdb", dest) < 0)
		return -ENOMEM;
	if (!access(data, F_OK)) {
		free(data);
		return -EEXIST;
	}
	if ((rc = kv_env_dir_is_empty(dest))) {
		free(data);
		return rc;
	}
	rc = kv_env_copy_compact(st->kv, dest);
	if (!rc)
		rc = compact_floor(st, dest);
	if (!rc && size) {
		rc = stat(data, &sb) ? -errno : 0;
		*size = rc ? 0 : (uint64_t)sb.st_size;
	}
	if (rc) { /* never leave half a copy */
		char *anchor;
		unlink(data);
		if (mem_asprintf(&anchor, "%s/anchor", dest) >= 0) {
			unlink(anchor);
			free(anchor);
		}
	}
	free(data);
	return rc;
}

int lm_store_size(void *st_, uint64_t *size)
{
	lm_store *st = st_;
	return kv_env_size(st->kv, size);
}

int lm_txn_open(lm_store *st, unsigned flags, lm_txn **out)
{
	bool rdonly = flags & CS_TXN_RDONLY;
	lm_txn *t;
	int rc;

	if (!rdonly && st->rdonly)
		return -EROFS;
	t = mem_calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->st = st;
	t->rdonly = rdonly;
	t->kbuf = mem_malloc(KEY_MAX);
	t->kbuf2 = mem_malloc(KEY_MAX);
	if (!t->kbuf || !t->kbuf2) {
		rc = -ENOMEM;
		goto free_txn;
	}
	if ((rc = kv_txn_begin(st->kv, rdonly, &t->kv)))
		goto free_txn;
	if (!rdonly)
		atomic_fetch_add(&st->writers, 1);
	*out = t;
	return 0;

free_txn:
	free(t->kbuf);
	free(t->kbuf2);
	free(t);
	return rc;
}

static void txn_free(lm_txn *t, bool keep)
{
	if (!t->rdonly)
		atomic_fetch_sub(&t->st->writers, 1);
	sch_cache_release(t, keep);
	heat_pend_release(&t->heat_w);
	free(t->scratch);
	free(t->kbuf);
	free(t->kbuf2);
	free(t);
}

int lm_txn_commit(void *t_)
{
	lm_txn *t = t_;
	int rc = t->err;

	if (rc)
		kv_txn_abort(t->kv);
	else if (t->rdonly)
		rc = kv_txn_commit(t->kv);
	else
		rc = lm_heat_commit(t); /* the Key Visualizer's one hook */
	txn_free(t, !rc);
	return rc;
}

void lm_txn_abort(void *t_)
{
	lm_txn *t = t_;
	if (!t)
		return;
	kv_txn_abort(t->kv);
	txn_free(t, t->rdonly); /* a write's changes are undone: what it parsed may be unlike its record */
}

int lm_txn_renew(void *t_)
{
	lm_txn *t = t_;
	if (!t->rdonly)
		return -EINVAL;
	sch_cache_release(t, true); /* the schema may have changed too: read again (or a spare) */
	return kv_txn_renew(t->kv);
}

void lm_txn_reset(void *t_)
{
	lm_txn *t = t_;
	if (!t || !t->rdonly)
		return;
	sch_cache_release(t, true);
	kv_txn_reset(t->kv);
}

uint64_t lm_store_version(void *st_)
{
	lm_store *st = st_;
	return kv_env_version(st->kv);
}

int lm_txn_write_check(lm_txn *t)
{
	if (t->rdonly)
		return -EROFS;
	return t->err;
}

int lm_txn_fail(lm_txn *t, int rc)
{
	if (rc < 0 && !t->err)
		t->err = rc;
	return rc;
}

/* Write sequences. A write transaction's cells carry F + its LMDB txnid, F being the floor stored at
 * META_SEQ (0 when absent): txnids only grow, so sequences do, and a plain write stores nothing more than
 * its cells (no counter rewritten by every commit, which would cost a second B-tree path). A drop or a
 * new family needs a sequence later than the cells written before it in the same transaction: it raises
 * F by one (stored), and the transaction's later cells follow it. Where txnids start again (a compacted
 * copy) lm_store_compact() raises F past every sequence used. */
static int seq_floor(lm_txn *t, uint64_t *floor)
{
	const void *v;
	size_t vn;
	int rc = kv_get(t->kv, META_SEQ, sizeof(META_SEQ) - 1, &v, &vn);
	if (rc && rc != -ENOENT)
		return rc;
	if (!rc && vn != 8)
		return -EIO;
	*floor = rc ? 0 : key_get_u64(v);
	return 0;
}

static int seq_floor_store(lm_txn *t, uint64_t floor)
{
	uint8_t v[8];
	key_put_u64(v, floor);
	return kv_put(t->kv, META_SEQ, sizeof(META_SEQ) - 1, v, 8);
}

int lm_txn_seq(lm_txn *t, uint64_t *seq)
{
	if (!t->seq_loaded) {
		uint64_t floor;
		int rc = seq_floor(t, &floor);
		if (rc)
			return rc;
		t->seq = floor + kv_txn_id(t->kv);
		t->seq_loaded = true;
	}
	*seq = t->seq;
	return 0;
}

int lm_txn_seq_bump(lm_txn *t, uint64_t *seq)
{
	uint64_t s, floor;
	int rc = lm_txn_seq(t, &s);
	if (rc || (rc = seq_floor(t, &floor)) || (rc = seq_floor_store(t, floor + 1)))
		return rc;
	t->seq++;
	*seq = t->seq;
	return 0;
}
