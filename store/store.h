/* store.h — the store and transaction structs every module of the store reaches its data through, and
 * the write checks and write sequence of a transaction (store.c). Internal: fs/ and tools/ use cellstore.h.
 *
 * A write transaction that fails once stays failed: every later write call returns its first error and
 * cs_txn_commit() aborts. Its cells carry a write sequence (store_txn_seq()) that drops and family
 * creations are judged by: a cell written before a drop has a smaller sequence than the drop. */
#ifndef CELLFS_STORE_H
#define CELLFS_STORE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend.h"
#include "cellstore.h"
#include "heat.h"
#include "kv.h"
#include "schema.h"

struct cs_store {
	const struct cs_backend *be; /* a remote store's backend (backend.h), else NULL */
	void *impl;                  /* the backend's store */
	kv_env *kv;
	uint64_t max_value;
	bool rdonly;
	bool asof;                 /* CS_OPEN_ASOF: reads see only cells at or before asof_us (asof.h) */
	int64_t asof_us;
	struct sch_spares spares;  /* parsed tables transactions ended with (schema.c) */
	struct heat *heat;         /* the Key Visualizer's counts not yet written (heat.h) */
	char *dir;                 /* where the store is (and the Key Visualizer's spool: heatspool.h) */
	atomic_int writers;        /* write transactions open (cs_heat_flush() must not begin another) */
};

struct cs_txn {
	cs_store *st;
	void *impl;                /* a remote store's: the backend's transaction */
	kv_txn *kv;
	bool rdonly;
	int err;                   /* a failed write transaction: the error commit returns */
	uint64_t seq;              /* write sequence of this transaction's cells (write txns) */
	bool seq_loaded;
	struct sch_table *tables;  /* schema cache (schema.c), until the transaction ends */
	void *scratch;             /* codec output buffer */
	size_t scratch_cap;
	uint8_t *kbuf, *kbuf2;     /* KEY_MAX bytes each */
	struct heat_pend heat_w;   /* the rows it wrote, counted when it commits (heat.h) */
	bool heat_force;           /* its commit writes every count the handle holds (cs_heat_flush) */
};

/* 0 if TXN may write: -EROFS (a read-only transaction), or the error an earlier write failed with. */
int store_txn_write_check(cs_txn *txn);

/* Record a write failure RC (< 0) of TXN, so that the transaction commits nothing. Returns RC, so
 * callers write `return store_txn_fail(txn, rc);` (0 passes through). */
int store_txn_fail(cs_txn *txn, int rc);

/* *SEQ = the write sequence of TXN's cells: the store's sequence floor plus LMDB's txnid.
 * Errors: -EIO (a damaged floor record), a read's errors. */
int store_txn_seq(cs_txn *txn, uint64_t *seq);

/* A fresh sequence for a drop or a new family, later than every cell TXN wrote before; TXN's later cells
 * get it too. Writes the raised floor. Errors as store_txn_seq(), and a write's. */
int store_txn_seq_bump(cs_txn *txn, uint64_t *seq);

#endif
