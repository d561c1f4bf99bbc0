/* store_internal.h — what the store's modules share: the store and transaction structs and the schema
 * cache. Never installed; fs/ and tools/ use cellstore.h only. */
#ifndef CELLFS_STORE_INTERNAL_H
#define CELLFS_STORE_INTERNAL_H

#include <pthread.h>

#include "cellstore.h"
#include "gcpolicy.h"
#include "kv.h"

struct cs_store {
	kv_env *kv;
	uint64_t max_value;
	bool rdonly;
	pthread_mutex_t spare_lock;
	struct sch_table *spare;   /* parsed tables transactions ended with, for the next to reuse (schema.c) */
	size_t nspare;
};

/* A dropped row range [start, end) of a table: hides cells written before it (seq < its seq). "dirty"
 * once a row inside it has been written again, so reads can no longer skip it in one seek. */
struct sch_drop {
	uint8_t *start, *end;
	size_t startn, endn;
	bool has_end;
	bool dirty;
	uint64_t seq;
	uint8_t *xkey; /* its record's key */
	size_t xkeyn;
};

struct sch_family {
	char *name;
	char *gc;     /* canonical policy text */
	gcp *policy;
	uint64_t since; /* cells written before this sequence belong to an earlier family of that name */
	cs_value_type type; /* CS_TYPE_BYTES, or an aggregate type (aggregate.c) */
};

/* A table's schema, cached per transaction (borrowed by the modules until the transaction ends). */
struct sch_table {
	struct sch_table *next;
	char *name;
	uint32_t id;
	char delim;
	int64_t created;           /* µs since the epoch */
	uint32_t ndrops;
	size_t nfam;
	struct sch_family *fam;    /* sorted by name */
	bool drops_loaded;
	size_t ndrop_list;
	struct sch_drop *drops;    /* sorted by start */
	uint8_t *rec;              /* the record it was parsed from, NULL once changed (sch_table_put) */
	size_t recn;
};

struct cs_txn {
	cs_store *st;
	kv_txn *kv;
	bool rdonly;
	int err;                   /* a failed write transaction: the error commit returns */
	uint64_t seq;              /* write sequence of this transaction's cells (write txns) */
	bool seq_loaded;
	struct sch_table *tables;  /* schema cache */
	void *scratch;             /* codec output buffer */
	size_t scratch_cap;
	uint8_t *kbuf, *kbuf2;     /* KEY_MAX bytes each */
};

/* store.c */
int txn_write_check(cs_txn *txn);            /* 0, -EROFS, or the transaction's error */
int txn_fail(cs_txn *txn, int rc);           /* record a write failure; returns RC */
int txn_seq(cs_txn *txn, uint64_t *seq);     /* this transaction's write sequence */
int txn_seq_bump(cs_txn *txn, uint64_t *seq); /* a fresh sequence for a drop; later writes follow it */

/* schema.c */
int sch_table_get(cs_txn *txn, const char *name, struct sch_table **out); /* -ENOENT */
struct sch_family *sch_family_find(const struct sch_table *t, const char *name);
int sch_drops_load(cs_txn *txn, struct sch_table *t);
/* End TXN's use of its parsed tables. KEEP (a read-only transaction, or a committed one): those still as
 * read go to the store's spares, for sch_table_get() to reuse when it reads the same record again. */
void sch_cache_release(cs_txn *txn, bool keep);
void sch_spares_free(cs_store *st);
int sch_table_put(cs_txn *txn, struct sch_table *t);
int sch_new_table_id(cs_txn *txn, uint32_t *id); /* allocate a table id (never reused) */

/* mutate.c */
int mut_mark_drops(cs_txn *txn, struct sch_table *t, cs_bytes row);

/* gc.c: cs_gc() of one table whose schema T is already loaded. */
int gc_table_now(cs_txn *txn, struct sch_table *t, cs_gc_stats *stats);

/* read.c: the newest visible cell of a column, or -ENOENT. *VAL is owned by the caller (free()). */
int read_newest(cs_txn *txn, struct sch_table *t, cs_bytes row, const char *family, cs_bytes q,
		int64_t *ts, void **val, size_t *vlen);
/* Whether drop D covers ROW; the highest sequence of the drops covering ROW (cells older are hidden). */
bool drop_covers(const struct sch_drop *d, const uint8_t *row, size_t n);
uint64_t drop_hide_seq(const struct sch_table *t, const uint8_t *row, size_t n);
/* Whether a stored cell of family F (NULL: not in the schema) is visible: written at SEQ, in a row whose
 * drops hide sequences below HIDE, with timestamp TS. *VERSION counts the column's cells so far (the
 * caller resets it to 0 at each column); it is advanced for every cell that exists for GC purposes. */
bool cell_visible(const struct sch_family *f, uint64_t seq, uint64_t hide, uint32_t *version, int64_t ts,
		  int64_t now);

/* A walk over a table's stored cells in key order that needs each one's visibility (cs_gc(), stats): the
 * row and column it is in. Set t, now and col (a key-sized buffer such as txn->kbuf2); the rest zero. */
struct key_parts;
struct cell_walk {
	const struct sch_table *t;
	int64_t now;
	uint8_t *col;     /* the current column's key (the cell key without its timestamp) */
	size_t coln;
	uint8_t *renc;    /* the current row, as encoded in keys (malloc'd: cell_walk_end() frees it) */
	size_t rencn;
	uint64_t hide;    /* drop_hide_seq() of that row */
	uint32_t version; /* cell_visible()'s count of the column's cells */
	bool new_row;     /* the cell last stepped to begins a row */
};
/* Step W to the cell at key K (KN bytes, parsed into KP with fam_len <= CS_MAX_FAMILY, written at SEQ),
 * the next in key order: *F gets its family (NULL: not in the schema). Returns 1 if the cell is visible,
 * 0 if not, or -ENOMEM. */
int cell_walk_step(struct cell_walk *w, const uint8_t *k, size_t kn, const struct key_parts *kp, uint64_t seq,
		   struct sch_family **f);
void cell_walk_end(struct cell_walk *w);

/* restore.c: the table ids of restores in progress (their staging tables), which cs_gc() must not collect
 * as a deleted table's. In a write TXN, records of restores whose process is gone are deleted (and left
 * out). Caller frees *IDS. */
int stage_live_ids(cs_txn *txn, uint32_t **ids, size_t *n);

#endif
