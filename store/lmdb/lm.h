/* lm.h — the LMDB backend (store/lmdb/): the store and transaction structs every file of the backend
 * reaches its data through, the write checks and write sequence of a transaction (lm.c), and the
 * calls its backend table (lm_backend.c) holds. The seam (store/store.c, backend.h) is the only caller from
 * outside this folder; each lm_X below implements cellstore.h's cs_X with the same contract, its handle
 * the backend's own.
 *
 * A write transaction that fails once stays failed: every later write call returns its first error and
 * lm_txn_commit() aborts. Its cells carry a write sequence (lm_txn_seq()) that drops and family
 * creations are judged by: a cell written before a drop has a smaller sequence than the drop. */
#ifndef CELLFS_LM_H
#define CELLFS_LM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cellstore.h"
#include "heat.h"
#include "kv.h"
#include "lm_types.h"
#include "schema.h"

struct lm_store {
	kv_env *kv;
	uint64_t max_value;
	bool rdonly;
	bool asof;                 /* CS_OPEN_ASOF: reads see only cells at or before asof_us (asof.h) */
	int64_t asof_us;
	struct sch_spares spares;  /* parsed tables transactions ended with (schema.c) */
	struct heat *heat;         /* the Key Visualizer's counts not yet written (heat.h) */
	char *dir;                 /* where the store is (and the Key Visualizer's spool: heatspool.h) */
	atomic_int writers;        /* write transactions open (lm_heat_flush() must not begin another) */
};

struct lm_txn {
	lm_store *st;
	kv_txn *kv;
	bool rdonly;
	int err;                   /* a failed write transaction: the error commit returns */
	uint64_t seq;              /* write sequence of this transaction's cells (write txns) */
	bool seq_loaded;
	struct sch_table *tables;  /* schema cache (schema.c), until the transaction ends */
	void *scratch;             /* codec output buffer */
	size_t scratch_cap;
	uint8_t *kbuf, *kbuf2;     /* KEY_MAX bytes each */
	struct heat_pend heat_w;   /* the Key Visualizer's: the rows it wrote, counted when it commits (lm_heat.c) */
};

/* 0 if TXN may write: -EROFS (a read-only transaction), or the error an earlier write failed with. */
int lm_txn_write_check(lm_txn *txn);

/* Record a write failure RC (< 0) of TXN, so that the transaction commits nothing. Returns RC, so
 * callers write `return lm_txn_fail(txn, rc);` (0 passes through). */
int lm_txn_fail(lm_txn *txn, int rc);

/* *SEQ = the write sequence of TXN's cells: the store's sequence floor plus LMDB's txnid.
 * Errors: -EIO (a damaged floor record), a read's errors. */
int lm_txn_seq(lm_txn *txn, uint64_t *seq);

/* A fresh sequence for a drop or a new family, later than every cell TXN wrote before; TXN's later cells
 * get it too. Writes the raised floor. Errors as lm_txn_seq(), and a write's. */
int lm_txn_seq_bump(lm_txn *txn, uint64_t *seq);

/* The backend's table, for the seam's list of backends (backends.c). */
struct cs_backend;
extern const struct cs_backend lm_backend; /* (lm_backend.c) */

/* The typed calls inside the backend (errors and ownership: cellstore.h's cs_X of the same name). */
int lm_store_open(const char *dir, const cs_open_opts *opts, lm_store **out);
int lm_txn_open(lm_store *st, unsigned flags, lm_txn **out);
int lm_scan_open(lm_txn *txn, const char *table, const cs_read_opts *opts, lm_scan **out);
int lm_bulk_open(lm_txn *txn, const char *table, lm_bulk **out);

/* The Key Visualizer (lm_heat.c): TXN wrote ROW of T (once per row and call), counted if TXN commits and
 * T's keyviz is on. */
struct sch_table;
void lm_heat_wrote(lm_txn *txn, const struct sch_table *t, cs_bytes row);

/* The table's entries (backend.h): each takes the backend's handle as void *. */
void lm_store_close(void *st);
int lm_store_sync(void *st);
uint64_t lm_store_version(void *st);
bool lm_store_unpin(void *st);
int lm_store_release_pages(void *st);
bool lm_store_sync_due(void *st);
bool lm_store_sync_wait(void *st, unsigned ms);
int lm_store_compact(void *st, const char *dest, uint64_t *size);
int lm_store_size(void *st, uint64_t *size);
int lm_restore(void *st, cs_read_fn *read, void *ctx, const cs_restore_opts *opts, cs_restore_result *res);
int lm_heat_flush(void *st);
void lm_heat_set_clock(void *st, int64_t (*now_us)(void *ctx), void *ctx);

int lm_txn_commit(void *txn);
void lm_txn_abort(void *txn);
int lm_txn_renew(void *txn);
void lm_txn_reset(void *txn);
int lm_table_create_as(void *txn, const cs_table_info *info);
int lm_table_delete(void *txn, const char *name);
int lm_table_rename(void *txn, const char *from, const char *to);
int lm_table_list(void *txn, char ***names, size_t *n);
int lm_table_info_get(void *txn, const char *name, cs_table_info **out);
int lm_table_set_keyviz(void *txn, const char *table, bool on);
int lm_family_create_typed(void *txn, const char *table, const char *family, const char *gc,
			   cs_value_type type);
int lm_family_delete(void *txn, const char *table, const char *family);
int lm_family_set_gc(void *txn, const char *table, const char *family, const char *gc);
int lm_row_mutate(void *txn, const char *table, cs_bytes row, const cs_mutation *m, size_t n);
int lm_rmw_append(void *txn, const char *table, cs_bytes row, const char *family, cs_bytes qualifier,
		  cs_bytes suffix, int64_t *ts);
int lm_rmw_increment(void *txn, const char *table, cs_bytes row, const char *family, cs_bytes qualifier,
		     int64_t delta, int64_t *result);
int lm_check_and_mutate(void *txn, const char *table, cs_bytes row, const cs_predicate *pred,
			const cs_mutation *true_m, size_t n_true, const cs_mutation *false_m, size_t n_false,
			bool *matched);
int lm_drop_prefix(void *txn, const char *table, cs_bytes prefix);
int lm_move_prefix(void *txn, const char *table, cs_bytes from, cs_bytes to, uint64_t max_cells,
		   uint64_t *moved);
int lm_gc(void *txn, const char *table, cs_gc_stats *stats);
int lm_verify(void *txn, cs_problem_fn *report, void *ctx, cs_verify_stats *stats);
int lm_table_stats_get(void *txn, const char *table, cs_table_stats **out);
int lm_heat_get(void *txn, const char *table, cs_heat **out);

int lm_scan_next(void *scan, const cs_row **row);
int lm_scan_seek(void *scan, cs_bytes row);
void lm_scan_close(void *scan);

int lm_bulk_put(void *bulk, cs_bytes row, const char *family, cs_bytes qualifier, int64_t ts, cs_bytes value);
void lm_bulk_get_stats(const void *bulk, cs_bulk_stats *stats);
int lm_bulk_flush(void *bulk);
void lm_bulk_close(void *bulk);

#endif
