/* backends.c — the backends cellfs is built with, by the scheme of the store names each serves, and the
 * check of a backend's table against its capabilities (backend.h). Adding a backend: its folder under
 * store/, and a line here. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "backends.h"
#include "lm.h"

const struct backend_entry backends[] = {
	{ "bigtable", NULL }, /* store/bigtable/: bigtable://PROJECT/INSTANCE, the module cellstore-bigtable.so */
	{ "", &lm_backend },  /* store/lmdb/: a directory */
	{ NULL, NULL },
};

/* What backend_check() reads: each function with the capability that requires it (0: every backend
 * has it; OPTIONAL: any backend may leave it NULL). */
#define OPTIONAL (~0u)
#define FN(name, cap) { offsetof(struct cs_backend, name), cap, #name }
static const struct {
	size_t off;
	unsigned cap;
	const char *name;
} fns[] = {
	FN(open, 0), FN(close, 0), FN(sync, OPTIONAL), FN(version, 0), FN(counters, OPTIONAL),
	FN(last_error, OPTIONAL), FN(catch_faults, OPTIONAL), FN(unpin, OPTIONAL), FN(release_pages, OPTIONAL),
	FN(sync_due, OPTIONAL), FN(sync_wait, OPTIONAL), FN(compact, CS_CAP_MAINT), FN(size, CS_CAP_MAINT),
	FN(restore, CS_CAP_MAINT), FN(heat_flush, CS_CAP_KEYVIZ), FN(heat_set_clock, CS_CAP_KEYVIZ),
	FN(txn_begin, 0), FN(txn_commit, 0), FN(txn_abort, 0), FN(txn_renew, OPTIONAL), FN(txn_reset, OPTIONAL),
	FN(table_create_as, 0), FN(table_delete, 0), FN(table_rename, CS_CAP_TABLE_RENAME), FN(table_list, 0),
	FN(table_info_get, 0), FN(table_set_keyviz, CS_CAP_KEYVIZ), FN(family_create_typed, 0),
	FN(family_delete, 0), FN(family_set_gc, 0), FN(row_mutate, 0), FN(rmw_append, 0), FN(rmw_increment, 0),
	FN(check_and_mutate, 0), FN(drop_prefix, 0), FN(move_prefix, CS_CAP_MOVE), FN(gc, CS_CAP_MAINT),
	FN(verify, CS_CAP_MAINT), FN(table_stats_get, CS_CAP_MAINT), FN(heat_get, CS_CAP_KEYVIZ),
	FN(bulk_open, 0), FN(bulk_put, 0), FN(bulk_get_stats, 0), FN(bulk_close, 0), FN(bulk_flush, OPTIONAL),
	FN(scan_open, 0), FN(scan_next, 0), FN(scan_seek, 0), FN(scan_close, 0),
};

int backend_check(const struct cs_backend *be, const char **why)
{
	if (be->abi != CS_BACKEND_ABI) {
		*why = "abi";
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		void (*fn)(void);
		memcpy(&fn, (const char *)be + fns[i].off, sizeof(fn));
		if (fns[i].cap != OPTIONAL && !fn != (fns[i].cap && !(be->caps & fns[i].cap))) {
			*why = fns[i].name;
			return -EINVAL;
		}
	}
	return 0;
}
