/* backend.h — the seam between cellstore.h and a store kept elsewhere than in LMDB (a remote backend,
 * such as store/bigtable/), and how such a backend is found (remote.c).
 *
 * Every public call of the store takes a cs_store, cs_txn, cs_scan or cs_bulk. For a remote store those
 * handles carry the backend's own object (void *, the "impl") and the call goes to the backend's function
 * of the same name below, with the same parameters and the same contract (cellstore.h), the handle
 * replaced by its impl. A NULL function is a call the backend cannot make: -EOPNOTSUPP (cs_store_caps()
 * tells callers which beforehand).
 *
 * A backend is a shared module (loaded with dlopen by remote_open(), so that a process that opens only
 * local stores never loads its libraries) exporting one symbol, CS_BACKEND_SYMBOL: a function returning
 * its table, whose abi must equal CS_BACKEND_ABI. Finding and loading it: remote.h. */
#ifndef CELLFS_BACKEND_H
#define CELLFS_BACKEND_H

#include <errno.h>

#include "cellstore.h"

#define CS_BACKEND_ABI 5
#define CS_BACKEND_SYMBOL "cs_backend_table"

struct cs_backend {
	unsigned abi;  /* CS_BACKEND_ABI */
	unsigned caps; /* CS_CAP_* */
	/* Open the store NAME (the whole name, scheme included). Errors: as cs_store_open(); -EINVAL for a
	 * name the backend cannot parse (*WHY, if not NULL, a static reason). */
	int (*open)(const char *name, const cs_open_opts *opts, void **st, const char **why);
	void (*close)(void *st); /* (sends what CS_TXN_DEFER left, and waits) */
	int (*sync)(void *st);   /* cs_store_sync(): what CS_TXN_DEFER left sent, and waited for; NULL: 0 */
	uint64_t (*version)(void *st);
	int (*counters)(void *st, char **text, size_t *len); /* cs_store_counters(); NULL: none */
	/* Why the last failed call of this thread failed, in the service's words, or NULL. Borrowed: valid
	 * until this thread's next call. */
	const char *(*last_error)(void);

	int (*txn_begin)(void *st, unsigned flags, void **txn);
	int (*txn_commit)(void *txn);
	void (*txn_abort)(void *txn);

	int (*table_create_as)(void *txn, const cs_table_info *info);
	int (*table_delete)(void *txn, const char *name);
	int (*table_list)(void *txn, char ***names, size_t *n);
	int (*table_info_get)(void *txn, const char *name, cs_table_info **out);
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

/* In a public call taking a transaction TXN: hand the call of a remote store to its backend's function FN
 * (-EOPNOTSUPP if it has none). */
#define REMOTE_CALL(txn, fn, ...)                                                                  \
	do {                                                                                       \
		if ((txn)->st->be)                                                                 \
			return (txn)->st->be->fn ? (txn)->st->be->fn((txn)->impl, __VA_ARGS__) : -EOPNOTSUPP; \
	} while (0)

#endif
