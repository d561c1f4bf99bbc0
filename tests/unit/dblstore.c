/* dblstore.c — a test double backend (backend.h): stores named double://NAME, one table of one family in
 * memory, with only the capabilities it can keep. It is the whole of what adding a backend takes (a
 * folder, and a line in the list of backends: test_backend.c's), used to prove the seam. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dblstore.h"

struct dbl {
	char table[32], family[32];     /* "" when there is none */
	struct { char row[32], q[32], value[32]; int64_t ts; } cells[16];
	size_t n;
	uint64_t version;
};

struct scan { struct dbl *d; size_t i; cs_cell cell; cs_row row; };

/* Every double://NAME is the one store: kept from close to open, as a service's data is. */
static struct dbl the;

static int open_(const char *name, const cs_open_opts *opts, void **st, const char **why)
{
	dbl_seen.open_flags = opts->flags;
	*st = &the;
	return 0;
}
static void close_(void *st) { }
static uint64_t version(void *st) { return ((struct dbl *)st)->version; }
static int txn_begin(void *st, unsigned flags, void **txn) { *txn = st; return 0; } /* (no CS_CAP_TXN) */
static int txn_commit(void *txn) { return 0; }
static void txn_abort(void *txn) { }

static int table_create_as(void *txn, const cs_table_info *info)
{
	struct dbl *d = txn;
	if (d->table[0])
		return strcmp(d->table, info->name) ? -ENOSPC : -EEXIST;
	if (strlen(info->name) >= sizeof(d->table))
		return -ENAMETOOLONG;
	strcpy(d->table, info->name);
	d->version++;
	return 0;
}
static int table_delete(void *txn, const char *name) { return -EBUSY; }
static int table_list(void *txn, char ***names, size_t *n)
{
	struct dbl *d = txn;
	*n = d->table[0] ? 1 : 0;
	if (!(*names = calloc(1, sizeof(char *))) || (*n && !((*names)[0] = strdup(d->table))))
		return free(*names), -ENOMEM;
	return 0;
}
static int table_info_get(void *txn, const char *name, cs_table_info **out)
{
	struct dbl *d = txn;
	if (strcmp(name, d->table))
		return -ENOENT;
	if (!(*out = calloc(1, sizeof(**out))) || !((*out)->name = strdup(name)))
		return free(*out), -ENOMEM;
	(*out)->delim = '#';
	(*out)->created = 1000000; /* (the seam lowers it to an as-of store's time) */
	return 0;
}
static int family_create_typed(void *txn, const char *table, const char *family, const char *gc,
			       cs_value_type type)
{
	struct dbl *d = txn;
	if (strcmp(table, d->table))
		return -ENOENT;
	if (d->family[0] || strlen(family) >= sizeof(d->family))
		return -ENOSPC;
	strcpy(d->family, family);
	return 0;
}
static int family_delete(void *txn, const char *table, const char *family) { return -EBUSY; }
static int family_set_gc(void *txn, const char *table, const char *family, const char *gc) { return -EBUSY; }

static int row_mutate(void *txn, const char *table, cs_bytes row, const cs_mutation *m, size_t n)
{
	struct dbl *d = txn;
	for (size_t i = 0; i < n; i++, d->n++) {
		if (strcmp(table, d->table) || strcmp(m[i].family, d->family))
			return -ENOENT;
		if (m[i].op != CS_SET_CELL || d->n == 16 || row.len >= 32 || m[i].qualifier.len >= 32 || m[i].value.len >= 32)
			return -EINVAL; /* (a mutation it cannot keep: earlier ones stay, as without CS_CAP_TXN) */
		memcpy(d->cells[d->n].row, row.data, row.len);
		memcpy(d->cells[d->n].q, m[i].qualifier.data, m[i].qualifier.len);
		memcpy(d->cells[d->n].value, m[i].value.data, m[i].value.len);
		d->cells[d->n].ts = m[i].ts;
	}
	d->version++;
	return 0;
}
static int rmw_append(void *txn, const char *table, cs_bytes row, const char *family, cs_bytes qualifier,
		      cs_bytes suffix, int64_t *ts) { return -EBUSY; }
static int rmw_increment(void *txn, const char *table, cs_bytes row, const char *family, cs_bytes qualifier,
			 int64_t delta, int64_t *result) { return -EBUSY; }
static int check_and_mutate(void *txn, const char *table, cs_bytes row, const cs_predicate *pred,
			    const cs_mutation *true_m, size_t n_true, const cs_mutation *false_m, size_t n_false,
			    bool *matched) { return -EBUSY; }
static int drop_prefix(void *txn, const char *table, cs_bytes prefix) { return -EBUSY; }
static int bulk_open(void *txn, const char *table, void **bulk) { return -EBUSY; }
static int bulk_put(void *bulk, cs_bytes row, const char *family, cs_bytes q, int64_t ts, cs_bytes value) { return -EBUSY; }
static void bulk_get_stats(const void *bulk, cs_bulk_stats *stats) { }
static void bulk_close(void *bulk) { }

/* A row per cell, in the order written, with the timestamp range the seam passed on. */
static int scan_open(void *txn, const char *table, const cs_read_opts *opts, void **scan)
{
	struct dbl *d = txn;
	struct scan *s;
	if (strcmp(table, d->table))
		return -ENOENT;
	dbl_seen.ts_end = opts ? opts->ts_end : 0;
	if (!(s = calloc(1, sizeof(*s))))
		return -ENOMEM;
	s->d = d;
	*scan = s;
	return 0;
}
static int scan_next(void *scan, const cs_row **row)
{
	struct scan *s = scan;
	if (s->i == s->d->n)
		return 0;
	s->cell = (cs_cell){ .family = s->d->family, .ts = s->d->cells[s->i].ts,
			     .qualifier = { s->d->cells[s->i].q, strlen(s->d->cells[s->i].q) },
			     .value = { s->d->cells[s->i].value, strlen(s->d->cells[s->i].value) } };
	s->cell.value_len = s->cell.value.len;
	s->row = (cs_row){ { s->d->cells[s->i].row, strlen(s->d->cells[s->i].row) }, 1, &s->cell };
	s->i++;
	*row = &s->row;
	return 1;
}
static int scan_seek(void *scan, cs_bytes row) { return -EINVAL; }
static void scan_close(void *scan) { free(scan); }

struct dbl_seen dbl_seen;

const struct cs_backend dbl_backend = {
	.abi = CS_BACKEND_ABI, .caps = 0, .open = open_, .close = close_, .version = version,
	.txn_begin = txn_begin, .txn_commit = txn_commit, .txn_abort = txn_abort,
	.table_create_as = table_create_as, .table_delete = table_delete, .table_list = table_list,
	.table_info_get = table_info_get, .family_create_typed = family_create_typed,
	.family_delete = family_delete, .family_set_gc = family_set_gc, .row_mutate = row_mutate,
	.rmw_append = rmw_append, .rmw_increment = rmw_increment, .check_and_mutate = check_and_mutate,
	.drop_prefix = drop_prefix, .bulk_open = bulk_open, .bulk_put = bulk_put,
	.bulk_get_stats = bulk_get_stats, .bulk_close = bulk_close, .scan_open = scan_open,
	.scan_next = scan_next, .scan_seek = scan_seek, .scan_close = scan_close,
};
