/* bt.h — the Cloud Bigtable backend's shared state: the store and transaction structs, the schema cache,
 * the thread's last error (bt.c), and what the read, write and schema files call of each other.
 * Internal to store/bigtable/; the store reaches it only through backend.h's table. */
#ifndef CELLFS_BT_INTERNAL_H
#define CELLFS_BT_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "backend.h"
#include "bt_key.h"
#include "btm.h"
#include "btr.h"
#include "btw.h"
#include "bt_samples.h"
#include "cellstore.h"
#include "gcpolicy.h"

/* The table where cellfs keeps what Bigtable's schema has no place for (a table's row-key delimiter and
 * creation time): one row per table, keyed by its name, family META_FAMILY. Hidden from cs_table_list(). */
#define BT_META_TABLE "_cellfs"
#define BT_META_FAMILY "m"

/* A table's schema as the backend uses it: the public info (families sorted by name) and each family's
 * parsed GC policy. Shared by reference (bt_schema_get/put), never changed once made. */
struct bt_schema {
	int refs; /* atomic */
	int64_t fetched_ms; /* monotonic, when it was read */
	cs_table_info *info;
	gcp **gc; /* [info->nfamilies] */
};

struct bt_cache; /* bt_schema.c: the schema cache */
struct bt_rows;  /* bt_rows.c: rows read whole */
struct bt_samples_cache; /* bt_samples.c: each table's row-key samples */
struct bt_cached;
struct bt_ahead; /* bt_ahead.c: reading ahead of a walk */
struct bt_defer; /* bt_defer.c: row mutations queued, sent in batches */

typedef struct bt_store {
	btr_conn *c;
	bool rdonly;
	uint64_t max_value;
	unsigned ttl_ms;            /* cs_open_opts.version_ttl_ms */
	uint64_t writes;            /* atomic: this process's write transactions that wrote */
	struct bt_cache *cache;
	struct bt_rows *rows;       /* CS_OPEN_CACHE: rows read whole, kept for ttl_ms; else NULL */
	size_t prefetch;            /* with rows: the bytes they may take (cs_open_opts.prefetch_bytes); a
	                             * range whose rows take at most half of it is read whole */
	struct bt_samples_cache *samples;
	struct bt_ahead *ahead;     /* with rows: reading ahead of a walk (bt_ahead.c); else NULL */
	struct bt_defer *defer;     /* CS_TXN_DEFER's queue */
} bt_store;

typedef struct bt_txn {
	bt_store *st;
	bool rdonly;
	bool defer; /* CS_TXN_DEFER: its row mutations are queued (bt_defer_add) */
	bool wrote;
	int err; /* the first failed write's error: commit returns it */
} bt_txn;

/* ---- bt.c */

/* A copy of the N bytes at P (N may be 0: a 1-byte buffer), or NULL (out of memory). */
void *bt_dup(const void *p, size_t n);

/* Note why the current call failed, for cs_last_error(): STATUS (if not NULL, and not OK or with a
 * message) as "ENDPOINT: CODE: message" (the address the call went to, gRPC's status code name, the
 * service's words), else WHAT; -ENOMEM without a status is no reason but itself (none). Returns RC. */
int bt_fail(int rc, const btr_status *status, const char *what);
/* STATUS as "ENDPOINT: CODE: message" in BUF (SIZE bytes); "" for an OK status without words. */
void bt_status_text(const btr_status *status, char *buf, size_t size);
/* Forget the thread's last error (every public entry calls it first). */
void bt_clear_error(void);
/* Milliseconds on the monotonic clock. */
int64_t bt_mono_ms(void);
/* A write of TXN: -EROFS for a read-only one, else the error an earlier write failed with (commit
 * returns it), else 0. */
int bt_write_check(bt_txn *t);
/* Record that TXN wrote (or failed with RC < 0); returns RC. */
int bt_wrote(bt_txn *t, int rc);

/* Where Data API calls on one table go: its resource name and its routing header. */
struct bt_target {
	char name[BTR_NAME_MAX];
	char routing[BTR_NAME_MAX * 3 + 64];
};
/* TABLE's target in *OUT. Errors: -EINVAL (not a table name), -ENAMETOOLONG. */
int bt_target(bt_store *st, const char *table, struct bt_target *out);

/* Whole-milliseconds "now", in µs: the timestamp a CS_TS_NOW cell gets (Bigtable keeps milliseconds). */
int64_t bt_now_ts(void);

/* ---- bt_schema.c */

int bt_cache_new(struct bt_cache **out);
void bt_cache_free(struct bt_cache *c);
/* TABLE's schema, from the cache while younger than the store's TTL, else from Bigtable (GetTable and
 * the meta row). Errors: -ENOENT (no such table), -EINVAL (a bad name), the service's. *OUT is a
 * reference: give it back with bt_schema_put(). */
int bt_schema_get(bt_store *st, const char *table, struct bt_schema **out);
void bt_schema_put(struct bt_schema *s);
/* The index of FAMILY in S's families, or -1. */
int bt_schema_family(const struct bt_schema *s, const char *family);
/* Forget TABLE's cached schema (after a change of it). */
void bt_schema_forget(bt_store *st, const char *table);

int bt_table_create_as(void *txn, const cs_table_info *info);
int bt_table_delete(void *txn, const char *name);
int bt_table_list(void *txn, char ***names, size_t *n);
int bt_table_info_get(void *txn, const char *name, cs_table_info **out);
int bt_family_create_typed(void *txn, const char *table, const char *family, const char *gc, cs_value_type type);
int bt_family_delete(void *txn, const char *table, const char *family);
int bt_family_set_gc(void *txn, const char *table, const char *family, const char *gc);
int bt_drop_prefix(void *txn, const char *table, cs_bytes prefix);

/* ---- bt_rows.c (every call a no-op, or a miss, when the store keeps no rows) */

/* Rows kept in at most BUDGET bytes (a row over BUDGET / 16 is not kept). */
int bt_rows_new(size_t budget, struct bt_rows **out);
void bt_rows_free(struct bt_rows *c);
/* Keep row KEY of TABLE as R has it (every cell of the row: only rows read whole), or as absent (R
 * NULL), for the store's TTL. Nothing is kept when memory is short or the row is large. */
void bt_rows_put(bt_store *st, const char *table, const void *key, size_t keyn, const btm_row *r);
/* Row KEY of TABLE if kept and fresh: 1 with *ROW (no cells: absent) borrowed from *OUT, which the caller
 * gives back with bt_rows_release(); 0 if not kept. */
int bt_rows_get(bt_store *st, const char *table, const void *key, size_t keyn, struct bt_cached **out,
		const btm_row **row);
void bt_rows_release(struct bt_cached *e); /* accepts NULL */
/* Forget row KEY of TABLE (KEY NULL: every row of TABLE), after this process wrote it in a way not
 * applied here (bt_rows_apply), or a write failed (it may have been applied). The ranges read whole
 * that hold it are forgotten too. */
void bt_rows_forget(bt_store *st, const char *table, const void *key, size_t keyn);
/* This process wrote row KEY of TABLE with the N mutations MP, and Bigtable acknowledged them (the
 * timestamps resolved, as sent): the kept row, or a row known absent inside a range read whole, is
 * changed as Bigtable changed it, keeping its age; a row made there joins the range's rows. A mutation
 * that cannot be applied here (AddToCell: the server merges) forgets the row instead. */
struct Google__Bigtable__V2__Mutation;
void bt_rows_apply(bt_store *st, const char *table, const void *key, size_t keyn,
		   struct Google__Bigtable__V2__Mutation *const *mp, size_t n);
/* The bytes a row of N cells CELLS, key KEYN bytes, of a table whose name is TABLEN bytes takes kept. */
size_t bt_rows_size(size_t tablen, size_t keyn, const btm_cell *cells, size_t n);
/* The bytes the kept rows take. */
size_t bt_rows_bytes(bt_store *st);

/* A range read whole: the rows it held, to answer a later read inside it without a call (the mount lists
 * a directory's rows, then each row's own subdirectories, which lie inside). Any write of this process
 * to the table drops its covers. */
struct bt_cover;
/* Note that [LO, HI) (HI NULL: to the end) of TABLE, as read from READ_AT (bt_mono_ms()), held the
 * NKEYS rows whose keys are at BLOB + OFF[I], LEN[I] bytes, in key order. Copies what it keeps; nothing
 * on ENOMEM. */
void bt_rows_cover(bt_store *st, const char *table, const void *lo, size_t lon, const void *hi, size_t hin,
		   const uint8_t *blob, size_t blobn, const size_t *off, const size_t *len, size_t nkeys,
		   int64_t read_at);
/* Note that [LO, HI) of TABLE did not fit the budget when read whole: bt_rows_too_big() says so for
 * it and the ranges holding it, for the TTL. */
void bt_rows_mark_big(bt_store *st, const char *table, const void *lo, size_t lon, const void *hi, size_t hin);
bool bt_rows_too_big(bt_store *st, const char *table, const void *lo, size_t lon, const void *hi, size_t hin);
/* A fresh cover of TABLE holding all of [LO, HI), or NULL; release it with bt_rows_cover_release(). */
struct bt_cover *bt_rows_covered(bt_store *st, const char *table, const void *lo, size_t lon, const void *hi,
				 size_t hin);
void bt_rows_cover_release(struct bt_cover *v); /* accepts NULL */
/* Whether row KEY of TABLE is known absent: a fresh cover holds it and did not list it. */
bool bt_rows_absent(bt_store *st, const char *table, const void *key, size_t keyn);
/* The index of the first key >= KEY; the number of keys; key I. */
size_t bt_cover_find(const struct bt_cover *v, const void *key, size_t n);
size_t bt_cover_count(const struct bt_cover *v);
const uint8_t *bt_cover_key(const struct bt_cover *v, size_t i, size_t *n);

/* ---- bt_samples.c (the list itself, its bound and its keys: bt_samples.h) */

/* How long a table's samples are used (monotonic ms): sizes change slowly, and a read that trusts the
 * estimate enforces its memory budget itself. */
#define BT_SAMPLES_TTL_MS 60000

int bt_samples_cache_new(struct bt_samples_cache **out);
void bt_samples_cache_free(struct bt_samples_cache *c); /* accepts NULL */
/* TABLE's row-key samples: from the store's cache while younger than BT_SAMPLES_TTL_MS, else from one
 * SampleRowKeys stream (routed and with the app profile as reads are; each message within the data
 * deadline, the stream's idle limit; not retried: a caller that cannot get them lists level by level).
 * Thread-safe; threads asking at once for a table not cached may each make the call. Returns 0 and *OUT,
 * a reference (give it back with bt_samples_put()), or -EINVAL (not a table name), -ENAMETOOLONG, the
 * call's error (-ENOENT: no such table; -EIO, ...; bt_fail()'d, for cs_last_error()), -ENOMEM. */
int bt_samples_get(bt_store *st, const char *table, struct bt_samples **out);
/* Forget TABLE's samples (after it was deleted or made again); a fetch under way is not kept. */
void bt_samples_forget(bt_store *st, const char *table);

/* ---- bt_ahead.c: reading ahead of a walk (every call a no-op when the store keeps no rows) */

/* Errors: -ENOMEM. Threads are made on first use; bt_ahead_free() (accepts NULL) stops and joins them. */
int bt_ahead_new(bt_store *st, struct bt_ahead **out);
void bt_ahead_free(struct bt_ahead *a);
/* A listing of TABLE jumped over the N ranges [KEY 2I, KEY 2I+1) (keys at BLOB + OFF[], LEN[] bytes), in
 * key order: a directory's subdirectories, kept for the TTL (a list that ends before the first of them
 * is continued: a listing resumed). Copies what it keeps. */
void bt_ahead_children(bt_store *st, const char *table, const uint8_t *blob, const size_t *off, const size_t *len,
		       size_t n);
/* A scan is about to read [LO, HI) of TABLE (calls going to TO): if it is one of a kept list's ranges,
 * the next ones (up to 4) that are not kept are read whole in the background; if it is being read so
 * itself, wait until it is. */
void bt_ahead_reading(bt_store *st, const char *table, const struct bt_target *to, const void *lo, size_t lon,
		      const void *hi, size_t hin);

/* ---- bt_gcrule.c: GC rules in cbt's syntax */

struct Google__Bigtable__Admin__V2__GcRule;
/* Appends R (NULL: none) to F in cbt's syntax ("never" for none). */
void bt_gcrule_text(FILE *f, const struct Google__Bigtable__Admin__V2__GcRule *r);
/* bt_gcrule_parse — cbt's policy text GC as a GcRule into *OUT (free with bt_gcrule_free). Returns 0,
 * -EINVAL (not a policy), -ENOMEM. */
int bt_gcrule_parse(const char *gc, struct Google__Bigtable__Admin__V2__GcRule **out);
/* Frees R and its parts (NULL: nothing). */
void bt_gcrule_free(struct Google__Bigtable__Admin__V2__GcRule *r);

/* ---- bt_filter.c: a scan's selections as a RowFilter */

struct Google__Bigtable__V2__RowFilter;

/* bt_filter_build — the filter for O's columns, families and row regex into *OUT (NULL: every cell; free
 * with bt_filter_free). Returns 0, -EINVAL (a selection Bigtable cannot take), -ENOMEM. */
int bt_filter_build(const cs_read_opts *o, struct Google__Bigtable__V2__RowFilter **out);
/* Frees F and everything it holds (NULL: nothing). */
void bt_filter_free(struct Google__Bigtable__V2__RowFilter *f);

/* ---- bt_read.c */

struct Google__Bigtable__V2__ReadRowsResponse__CellChunk;
/* The merger's view of protobuf chunk C (borrowing its bytes). */
void bt_chunk(const struct Google__Bigtable__V2__ReadRowsResponse__CellChunk *c, btm_chunk *out);

/* Read [LO, HI) of TABLE (HI NULL: to the end) whole, every cell, into the kept rows and a cover, in one
 * ReadRows stream to TO, when the table's samples bound it within LIMIT (at most half the store's
 * prefetch budget) and it is not marked too big; a range found larger than LIMIT on the way stops there
 * and is marked (bt_rows_mark_big). Returns 1 (read and covered), 0 (not: too big, or the store keeps
 * no rows), or the calls' error. */
int bt_read_whole(bt_store *st, const char *table, const struct bt_target *to, const void *lo, size_t lon,
		  const void *hi, size_t hin, uint64_t limit);

int bt_scan_open(void *txn, const char *table, const cs_read_opts *opts, void **scan);
int bt_scan_next(void *scan, const cs_row **row);
int bt_scan_seek(void *scan, cs_bytes row);
void bt_scan_close(void *scan);

/* ---- bt_write.c */

/* A MutateRows batch as bt_mutate_rows() sends it: entries kept by the caller (ARG), each sent until the
 * service acknowledges it. Used from one thread at a time. */
struct bt_mrows {
	bt_store *st;
	const char *routing; /* the table's routing header (bt_target) */
	btw_buf *req;        /* where the request is encoded (reused) */
	void *arg;
	size_t (*pending)(void *arg); /* how many entries are not acknowledged yet */
	/* The MutateRowsRequest of those entries into O (reset first); IDX[k] gets the caller's index of the
	 * request's entry k. Returns how many, or -ENOMEM. */
	ssize_t (*encode)(void *arg, btw_buf *o, size_t *idx);
	bool (*ack)(void *arg, size_t i); /* entry I acknowledged: whether it was not already */
};
/* Send M's entries, again those that failed with UNAVAILABLE, ABORTED or DEADLINE_EXCEEDED (6 attempts,
 * backing off; none while the conn is quiet). Returns 0 once every entry is acknowledged, else the error,
 * *LAST the service's words (for bt_fail), the entries acknowledged so far marked by ACK. */
int bt_mutate_rows(struct bt_mrows *m, btr_status *last);

int bt_row_mutate(void *txn, const char *table, cs_bytes row, const cs_mutation *m, size_t n);
int bt_rmw_append(void *txn, const char *table, cs_bytes row, const char *family, cs_bytes qualifier,
		  cs_bytes suffix, int64_t *ts);
int bt_rmw_increment(void *txn, const char *table, cs_bytes row, const char *family, cs_bytes qualifier,
		     int64_t delta, int64_t *result);
int bt_check_and_mutate(void *txn, const char *table, cs_bytes row, const cs_predicate *pred,
			const cs_mutation *true_m, size_t n_true, const cs_mutation *false_m, size_t n_false,
			bool *matched);
int bt_bulk_open(void *txn, const char *table, void **bulk);
int bt_bulk_put(void *bulk, cs_bytes row, const char *family, cs_bytes qualifier, int64_t ts, cs_bytes value);
void bt_bulk_get_stats(const void *bulk, cs_bulk_stats *stats);
void bt_bulk_close(void *bulk);
int bt_bulk_flush(void *bulk);

/* ---- bt_defer.c: CS_TXN_DEFER's queue, one per table, sent as MutateRows. A table's queue is sent 100 ms
 * after its oldest entry (by a thread of the store's, started on first use), when it is full (by the call
 * that would add to it, which waits), by bt_defer_flush() (before any other call on the table goes to
 * Bigtable), bt_defer_sync() and bt_defer_free(). Its rows' mutations are in the order they were queued
 * (one entry per row). A queue that failed (after bt_mutate_rows()' retries) has its rows forgotten from
 * the row cache and keeps the error for the next call on the table (bt_defer_flush, bt_defer_add). */

int bt_defer_new(struct bt_defer **out);
/* Send every queue and wait, stop the thread, free. Accepts NULL. A failure is lost: bt_defer_sync() first. */
void bt_defer_free(bt_store *st);
struct Google__Bigtable__V2__Mutation;
/* Queue the N mutations MP (built and checked: idempotent) of row KEY of TABLE, whose target is TO, as
 * encoded bytes (nothing of MP is kept), and forget the row from the row cache. Returns 0; the kept error
 * of TABLE's queue (returned once); an error of sending the queue when it was full (then nothing was
 * queued); -ENOMEM; -E2BIG (too large to queue: the caller sends it itself). Sets the thread's error. */
int bt_defer_add(bt_store *st, const char *table, const struct bt_target *to, const void *key, size_t keyn,
		 struct Google__Bigtable__V2__Mutation *const *mp, size_t n);
/* Before a call that touches TABLE goes to Bigtable: send what TABLE's queue holds, or wait for the send in
 * flight, and return 0 or the error of a failed send (kept from a send of the thread, or this one's),
 * once, with the thread's error "N queued deletes (mutations) of table T failed: ADDRESS: CODE: message".
 * Cheap when nothing is queued. */
int bt_defer_flush(bt_store *st, const char *table);
/* The same before a read of TABLE's rows [LO, HI] (LON 0: from its first row; HI NULL: to its last): only
 * when one of them is queued (or a send is in flight, or an error kept), so that reads of other rows do
 * not break up the batch. */
int bt_defer_flush_range(bt_store *st, const char *table, const void *lo, size_t lon, const void *hi, size_t hin);
/* Before a call on TABLE that may need no service (a read the row cache answers): the error a failed send
 * left (as bt_defer_flush), once, after waiting for the send in flight; 0 if none. */
int bt_defer_check(bt_store *st, const char *table);
/* Send every table's queue and wait: 0, or the first error (as bt_defer_flush). cs_store_sync(). */
int bt_defer_sync(bt_store *st);

#endif
