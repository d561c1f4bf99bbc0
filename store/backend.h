/* backend.h — the seam between cellstore.h and the stores behind it: the table of calls every backend
 * fills (the LMDB store, store/lmdb/; Cloud Bigtable, store/bigtable/), which the seam (store.c) picks
 * by the store's name from the list of backends (backends.h).
 *
 * Every public call of the store takes a cs_store, cs_txn, cs_scan or cs_bulk. Each handle carries the
 * backend's own object (void *, the "impl"); store.c hands the call to the backend's function of the same
 * name below, with the same parameters and the same contract (cellstore.h), the handle replaced by its
 * impl. store.c is the only file that dispatches: nothing else asks which backend a store has.
 *
 * What a backend can do is said once, by its caps (CS_CAP_*): store.c answers a call a capability covers
 * (cellstore.h says which) without the backend when the backend lacks it, and backend_check() refuses a
 * table whose functions disagree with its caps. The other functions marked "NULL:" are optional, with
 * the default named; the rest are required.
 *
 * A backend is built in (a line in backends.c, backends.h) or a shared module (loaded with dlopen by
 * remote.c on first use, so that a process that opens only local stores never loads its libraries)
 * exporting one symbol, CS_BACKEND_SYMBOL: a function returning its table, whose abi must equal
 * CS_BACKEND_ABI (and optionally CS_BACKEND_BIND_SYMBOL, below: what the host lends it). */
#ifndef CELLFS_BACKEND_H
#define CELLFS_BACKEND_H

#include <stdbool.h>

#include "cellstore.h"

#define CS_BACKEND_ABI 6
#define CS_BACKEND_SYMBOL "cs_backend_table"

struct cs_backend {
	unsigned abi;  /* CS_BACKEND_ABI */
	unsigned caps; /* CS_CAP_* */
	/* Open the store NAME (the whole name, scheme included; a directory's path for the backend of plain
	 * paths), OPTS checked by the seam. A CS_OPEN_ASOF store is read-only to the backend; the seam
	 * narrows its reads. Errors: as cs_store_open(); -EINVAL for a name the backend cannot parse (*WHY, if
	 * not NULL, a static reason). */
	int (*open)(const char *name, const cs_open_opts *opts, void **st, const char **why);
	void (*close)(void *st); /* (sends what CS_TXN_DEFER left, and waits) */
	int (*sync)(void *st);   /* cs_store_sync(): NULL: 0 */
	uint64_t (*version)(void *st);
	int (*counters)(void *st, char **text, size_t *len); /* cs_store_counters(); NULL: none */
	/* Why the last failed call of this thread failed, in the service's words, or NULL. Borrowed: valid
	 * until this thread's next call. NULL: errors are their errno alone. */
	const char *(*last_error)(void);
	int (*catch_faults)(void); /* cs_store_catch_faults(), process-wide; NULL: nothing to catch */
	/* The page cache's (cs_store_unpin() and its kin); NULL: true, 0, false, a sleep of MS then false. */
	bool (*unpin)(void *st);
	int (*release_pages)(void *st);
	bool (*sync_due)(void *st);
	bool (*sync_wait)(void *st, unsigned ms);
	/* CS_CAP_MAINT */
	int (*compact)(void *st, const char *dest, uint64_t *size);
	int (*size)(void *st, uint64_t *size);
	int (*restore)(void *st, cs_read_fn *read, void *ctx, const cs_restore_opts *opts, cs_restore_result *res);
	/* CS_CAP_KEYVIZ */
	int (*heat_flush)(void *st);
	void (*heat_set_clock)(void *st, int64_t (*now_us)(void *ctx), void *ctx);

	int (*txn_begin)(void *st, unsigned flags, void **txn);
	int (*txn_commit)(void *txn);
	void (*txn_abort)(void *txn);
	int (*txn_renew)(void *txn); /* NULL: 0 (reads see the newest data anyway) */
	void (*txn_reset)(void *txn); /* NULL: nothing */

	int (*table_create_as)(void *txn, const cs_table_info *info);
	int (*table_delete)(void *txn, const char *name);
	int (*table_rename)(void *txn, const char *from, const char *to); /* CS_CAP_TABLE_RENAME */
	int (*table_list)(void *txn, char ***names, size_t *n);
	int (*table_info_get)(void *txn, const char *name, cs_table_info **out);
	int (*table_set_keyviz)(void *txn, const char *table, bool on); /* CS_CAP_KEYVIZ */
	int (*family_create_typed)(void *txn, const char *table, const char *family, const char *gc,
				   cs_value_type type);
	int (*family_delete)(void *txn, const char *table, const char *family);
	int (*family_set_gc)(void *txn, const char *table, const char *family, const char *gc);

	int (*row_mutate)(void *txn, const char *table, cs_bytes row, const cs_mutation *m, size_t n);
	int (*rmw_append)(void *txn, const char *table, cs_bytes row, const char *family, cs_bytes qualifier,
			  cs_bytes suffix, int64_t *ts);
	int (*rmw_increment)(void *txn, const char *table, cs_bytes row, const char *family,
			     cs_bytes qualifier, int64_t delta, int64_t *result);
	int (*check_and_mutate)(void *txn, const char *table, cs_bytes row, const cs_predicate *pred,
				const cs_mutation *true_m, size_t n_true, const cs_mutation *false_m, size_t n_false,
				bool *matched);
	int (*drop_prefix)(void *txn, const char *table, cs_bytes prefix);
	int (*move_prefix)(void *txn, const char *table, cs_bytes from, cs_bytes to, uint64_t max_cells,
			   uint64_t *moved); /* CS_CAP_MOVE */
	/* CS_CAP_MAINT */
	int (*gc)(void *txn, const char *table, cs_gc_stats *stats);
	int (*verify)(void *txn, cs_problem_fn *report, void *ctx, cs_verify_stats *stats);
	int (*table_stats_get)(void *txn, const char *table, cs_table_stats **out);
	/* CS_CAP_KEYVIZ */
	int (*heat_get)(void *txn, const char *table, cs_heat **out);

	int (*bulk_open)(void *txn, const char *table, void **bulk);
	int (*bulk_put)(void *bulk, cs_bytes row, const char *family, cs_bytes qualifier, int64_t ts,
			cs_bytes value);
	void (*bulk_get_stats)(const void *bulk, cs_bulk_stats *stats);
	void (*bulk_close)(void *bulk);
	int (*bulk_flush)(void *bulk); /* NULL: every put is written when made */

	int (*scan_open)(void *txn, const char *table, const cs_read_opts *opts, void **scan);
	int (*scan_next)(void *scan, const cs_row **row);
	int (*scan_seek)(void *scan, cs_bytes row);
	void (*scan_close)(void *scan);
};

/* What the host lends a module it loads. A module links its own copy of cellstore_core (mem.c, fault.c),
 * so without this its allocations would count in a fault state of its own that nothing arms: the host's
 * $CELLFS_FAULT (cs_fault_arm()) would never fail one. A module may export CS_BACKEND_BIND_SYMBOL, a
 * function taking the host's cs_host, which remote.c calls once, right after the table's getter and
 * before any call of the table; it returns 0, or -EPROTO for a cs_host of another abi (the module is
 * then not loaded). A module without it runs on its own (its faults never fire). The table's
 * CS_BACKEND_ABI does not change with this one. */
#define CS_HOST_ABI 1
#define CS_BACKEND_BIND_SYMBOL "cs_backend_bind"

struct cs_host {
	unsigned abi; /* CS_HOST_ABI */
	/* The host's fault check (fault.h's fault_hit()): count one call of KIND (CS_FAULT_*) in the
	 * host's fault state; true if that call must fail. The module's fault_hit() calls it (fault_bind()). */
	bool (*fault_hit)(unsigned kind);
};

#endif
