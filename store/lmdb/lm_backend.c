/* lm_backend.c — the LMDB backend's table (backend.h): its calls, for the seam. */
#include "backend.h"
#include "kv.h"
#include "lm.h"

/* The table's entries whose handle comes out through a parameter: the typed calls above, for the seam. */
static int open_entry(const char *name, const cs_open_opts *opts, void **st, const char **why)
{
	(void)why; /* (every error of a directory's store is its errno) */
	return lm_store_open(name, opts, (lm_store **)st);
}

static int txn_begin_entry(void *st, unsigned flags, void **txn)
{
	return lm_txn_open(st, flags, (lm_txn **)txn);
}

static int scan_open_entry(void *txn, const char *table, const cs_read_opts *opts, void **scan)
{
	return lm_scan_open(txn, table, opts, (lm_scan **)scan);
}

static int bulk_open_entry(void *txn, const char *table, void **bulk)
{
	return lm_bulk_open(txn, table, (lm_bulk **)bulk);
}

const struct cs_backend lm_backend = {
	.abi = CS_BACKEND_ABI,
	.caps = CS_CAP_TXN | CS_CAP_MOVE | CS_CAP_TABLE_RENAME | CS_CAP_TS_MICROS | CS_CAP_WATCH | CS_CAP_MAINT |
		CS_CAP_SYNC | CS_CAP_KEYVIZ,
	.open = open_entry,
	.close = lm_store_close,
	.sync = lm_store_sync,
	.version = lm_store_version,
	.catch_faults = kv_guard_catch_faults,
	.unpin = lm_store_unpin,
	.release_pages = lm_store_release_pages,
	.sync_due = lm_store_sync_due,
	.sync_wait = lm_store_sync_wait,
	.compact = lm_store_compact,
	.size = lm_store_size,
	.restore = lm_restore,
	.heat_flush = lm_heat_flush,
	.heat_set_clock = lm_heat_set_clock,
	.txn_begin = txn_begin_entry,
	.txn_commit = lm_txn_commit,
	.txn_abort = lm_txn_abort,
	.txn_renew = lm_txn_renew,
	.txn_reset = lm_txn_reset,
	.table_create_as = lm_table_create_as,
	.table_delete = lm_table_delete,
	.table_rename = lm_table_rename,
	.table_list = lm_table_list,
	.table_info_get = lm_table_info_get,
	.table_set_keyviz = lm_table_set_keyviz,
	.family_create_typed = lm_family_create_typed,
	.family_delete = lm_family_delete,
	.family_set_gc = lm_family_set_gc,
	.row_mutate = lm_row_mutate,
	.rmw_append = lm_rmw_append,
	.rmw_increment = lm_rmw_increment,
	.check_and_mutate = lm_check_and_mutate,
	.drop_prefix = lm_drop_prefix,
	.move_prefix = lm_move_prefix,
	.bulk_open = bulk_open_entry,
	.bulk_put = lm_bulk_put,
	.bulk_get_stats = lm_bulk_get_stats,
	.bulk_close = lm_bulk_close,
	.scan_open = scan_open_entry,
	.scan_next = lm_scan_next,
	.scan_seek = lm_scan_seek,
	.scan_close = lm_scan_close,
	.gc = lm_gc,
	.verify = lm_verify,
	.table_stats_get = lm_table_stats_get,
	.heat_get = lm_heat_get,
};
