/* bt.c — the Cloud Bigtable backend's entry: the store's name, opening and closing it, transactions, the
 * version callers poll, the thread's last error, and the table of calls the store's seam goes through
 * (backend.h). The module exports that table's getter and cs_backend_bind(), which makes its copy of the
 * store's fault state count in its host's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bt_internal.h"
#include "fault.h"
#include "mem.h"

static __thread char why[600];

void bt_status_text(const btr_status *status, char *buf, size_t size)
{
	/* "127.0.0.1:8086: UNAVAILABLE: failed to connect ...": where, gRPC's code, the service's words */
	const char *code = status->code != GRPC_STATUS_OK ? btr_code_name(status->code) : "";
	if (status->code == GRPC_STATUS_OK && !status->message[0]) {
		buf[0] = '\0';
		return;
	}
	int n = snprintf(buf, size, "%s%s%s%s%s", status->endpoint ? status->endpoint : "",
			 status->endpoint ? ": " : "", code, *code && status->message[0] ? ": " : "", status->message);
	/* a refusal names the call and the credential it was made with: which account lacks what */
	if ((status->code == GRPC_STATUS_UNAUTHENTICATED || status->code == GRPC_STATUS_PERMISSION_DENIED) &&
	    n >= 0 && (size_t)n < size && status->who)
		snprintf(buf + n, size - (size_t)n, " (%s%s%s)", status->method ? status->method : "",
			 status->method ? " as " : "", status->who);
}

int bt_fail(int rc, const btr_status *status, const char *what)
{
	if (rc >= 0)
		return rc;
	if (status && (status->code != GRPC_STATUS_OK || status->message[0])) {
		bt_status_text(status, why, sizeof(why));
	} else if (rc == -ENOMEM) {
		/* Out of memory is its own reason: no context in place of it, nor an earlier call's words
		 * ("cellctl ls: getting table info: Cannot allocate memory"). */
		why[0] = '\0';
	} else if (what) {
		snprintf(why, sizeof(why), "%s", what);
	}
	return rc;
}

void bt_clear_error(void)
{
	why[0] = '\0';
}

static const char *last_error(void)
{
	return why[0] ? why : NULL;
}

void *bt_dup(const void *p, size_t n)
{
	void *d = mem_malloc(n ? n : 1);
	if (d && n)
		memcpy(d, p, n);
	return d;
}

int64_t bt_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int bt_target(bt_store *st, const char *table, struct bt_target *out)
{
	int rc;
	if (cs_check_table_name(table))
		return -EINVAL;
	if ((rc = btr_table_name(st->c, table, out->name, sizeof(out->name))))
		return rc;
	return btr_routing(st->c, BTR_DATA, "table_name", out->name, out->routing, sizeof(out->routing));
}

int64_t bt_now_ts(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000) * 1000;
}

/* Copy the N bytes at P to OUT (SIZE bytes) as a string, if they are a name Bigtable accepts for a
 * project, an instance or an app profile: letters, digits, '-', '_', '.', ':' (a domain-scoped project). */
static bool take_id(const char *p, size_t n, char *out, size_t size)
{
	if (n == 0 || n >= size)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = p[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		      ch == '-' || ch == '_' || ch == '.' || ch == ':'))
			return false;
	}
	memcpy(out, p, n);
	out[n] = '\0';
	return true;
}

/* bigtable://PROJECT/INSTANCE[?app_profile=ID] */
static int parse_name(const char *name, char *project, char *instance, char *profile, size_t size,
		      const char **fault)
{
	static const char scheme[] = "bigtable://";
	const char *p, *slash, *q;

	profile[0] = '\0';
	if (strncmp(name, scheme, sizeof(scheme) - 1)) {
		*fault = "not a bigtable://PROJECT/INSTANCE name";
		return -EINVAL;
	}
	p = name + sizeof(scheme) - 1;
	slash = strchr(p, '/');
	q = strchr(p, '?');
	if ((!slash || (q && q < slash)) && take_id(p, q ? (size_t)(q - p) : strlen(p), project, size)) {
		*fault = "a bigtable:// name is bigtable://PROJECT/INSTANCE: the instance is missing";
		return -EINVAL;
	}
	if (!slash || (q && q < slash) || !take_id(p, (size_t)(slash - p), project, size)) {
		*fault = "a bigtable:// name is bigtable://PROJECT/INSTANCE: the project is missing or malformed";
		return -EINVAL;
	}
	p = slash + 1;
	if (!take_id(p, q ? (size_t)(q - p) : strlen(p), instance, size)) {
		*fault = "a bigtable:// name is bigtable://PROJECT/INSTANCE: the instance is missing or malformed";
		return -EINVAL;
	}
	if (q) {
		static const char opt[] = "app_profile=";
		q++;
		if (strncmp(q, opt, sizeof(opt) - 1) || !take_id(q + sizeof(opt) - 1, strlen(q + sizeof(opt) - 1),
								    profile, size)) {
			*fault = "the only option of a bigtable:// name is ?app_profile=ID";
			return -EINVAL;
		}
	}
	return 0;
}

static int bt_open(const char *name, const cs_open_opts *opts, void **out, const char **fault)
{
	static __thread char connect_why[900];
	char project[128], instance[128], profile[128];
	const cs_remote *r = opts->remote;
	bt_store *st;
	int rc;

	bt_clear_error();
	if ((rc = parse_name(name, project, instance, profile, sizeof(project), fault)))
		return rc;
	if (!profile[0] && r && r->app_profile &&
	    !take_id(r->app_profile, strlen(r->app_profile), profile, sizeof(profile))) {
		*fault = "an app profile's id is letters, digits, '-', '_', '.' (app_profile=)";
		return -EINVAL;
	}
	if (!(st = mem_calloc(1, sizeof(*st))))
		return -ENOMEM;
	st->rdonly = opts->flags & (CS_OPEN_RDONLY | CS_OPEN_ASOF); /* (the seam narrows reads) */
	st->max_value = opts->max_value ? opts->max_value : CS_DEFAULT_MAX_VALUE;
	st->ttl_ms = opts->version_ttl_ms ? opts->version_ttl_ms : 5000;
	st->prefetch = opts->prefetch_bytes ? opts->prefetch_bytes : CS_DEFAULT_PREFETCH;
	if ((rc = bt_cache_new(&st->cache)) || (rc = bt_samples_cache_new(&st->samples)) ||
	    ((opts->flags & CS_OPEN_CACHE) &&
	     ((rc = bt_rows_new(st->prefetch, &st->rows)) || (rc = bt_ahead_new(st, &st->ahead)))) ||
	    (rc = bt_defer_new(&st->defer))) {
		bt_cache_free(st->cache);
		bt_samples_cache_free(st->samples);
		bt_ahead_free(st->ahead);
		bt_rows_free(st->rows);
		free(st);
		return rc;
	}
	btr_opts bo = { .app_profile = profile };
	if (r) {
		bo.data_endpoint = r->data_endpoint;
		bo.admin_endpoint = r->admin_endpoint;
		bo.cert_file = r->cert_file;
		bo.creds = r->creds;
		bo.access_token = r->access_token;
		bo.user_agent = r->user_agent;
	}
	if ((rc = btr_connect_with(project, instance, &bo, &st->c, connect_why, sizeof(connect_why)))) {
		if (connect_why[0])
			*fault = connect_why;
		bt_defer_free(st);
		bt_cache_free(st->cache);
		bt_samples_cache_free(st->samples);
		bt_ahead_free(st->ahead);
		bt_rows_free(st->rows);
		free(st);
		return rc;
	}
	if (opts->deadline_ms)
		btr_set_deadline_ms(st->c, opts->deadline_ms);
	*out = st;
	return 0;
}

static void bt_close(void *p)
{
	bt_store *st = p;
	bt_ahead_free(st->ahead); /* (its threads call: first) */
	bt_defer_free(st); /* (sends what is queued, and stops its thread: no fork with a thread of ours) */
	btr_close(st->c);
	bt_cache_free(st->cache);
	bt_samples_cache_free(st->samples);
	bt_rows_free(st->rows);
	free(st);
}

/* This process's writes. Nobody tells us of other clients' writes: what is kept expires on its own,
 * each row and range TTL after it was read, and callers that cache keep nothing longer. */
static uint64_t bt_version(void *p)
{
	bt_store *st = p;
	return __atomic_load_n(&st->writes, __ATOMIC_RELAXED);
}

static int bt_txn_begin(void *p, unsigned flags, void **out)
{
	bt_store *st = p;
	bt_txn *t;
	bt_clear_error();
	if (!(flags & CS_TXN_RDONLY) && st->rdonly)
		return -EROFS;
	if (!(t = mem_calloc(1, sizeof(*t))))
		return -ENOMEM;
	t->st = st;
	t->rdonly = flags & CS_TXN_RDONLY;
	t->defer = !t->rdonly && (flags & CS_TXN_DEFER);
	*out = t;
	return 0;
}

static int bt_txn_commit(void *p)
{
	bt_txn *t = p;
	int rc = t->err;
	if (t->wrote)
		__atomic_add_fetch(&t->st->writes, 1, __ATOMIC_RELAXED);
	free(t);
	return rc;
}

static void bt_txn_abort(void *p)
{
	bt_txn *t = p;
	if (!t)
		return;
	if (t->wrote) /* (what it wrote stays: no CS_CAP_TXN) */
		__atomic_add_fetch(&t->st->writes, 1, __ATOMIC_RELAXED);
	free(t);
}

int bt_write_check(bt_txn *t)
{
	if (t->rdonly)
		return -EROFS;
	return t->err;
}

int bt_wrote(bt_txn *t, int rc)
{
	t->wrote = true;
	if (rc < 0 && !t->err && rc != -EINVAL && rc != -ENOENT && rc != -EEXIST && rc != -ENAMETOOLONG &&
	    rc != -EFBIG)
		t->err = rc;
	return rc;
}

static int bt_sync(void *st)
{
	return bt_defer_sync(st);
}

/* A scan reports what CS_TXN_DEFER's queue of its table failed to send, even one the row cache answers
 * (bt_read.c sends the queue before its streams). */
static int scan_open(void *txn, const char *table, const cs_read_opts *opts, void **scan)
{
	int rc = bt_defer_check(((bt_txn *)txn)->st, table);
	return rc ? rc : bt_scan_open(txn, table, opts, scan);
}

static int bt_counters(void *st, char **text, size_t *len)
{
	return btr_counters_text(((bt_store *)st)->c, text, len);
}

static const struct cs_backend table = {
	.abi = CS_BACKEND_ABI,
	.caps = 0, /* none: see cellstore.h, and store/bigtable/README.md for what each lack means */
	.open = bt_open,
	.close = bt_close,
	.sync = bt_sync,
	.version = bt_version,
	.counters = bt_counters,
	.last_error = last_error,
	.txn_begin = bt_txn_begin,
	.txn_commit = bt_txn_commit,
	.txn_abort = bt_txn_abort,
	.table_create_as = bt_table_create_as,
	.table_delete = bt_table_delete,
	.table_list = bt_table_list,
	.table_info_get = bt_table_info_get,
	.family_create_typed = bt_family_create_typed,
	.family_delete = bt_family_delete,
	.family_set_gc = bt_family_set_gc,
	.row_mutate = bt_row_mutate,
	.rmw_append = bt_rmw_append,
	.rmw_increment = bt_rmw_increment,
	.check_and_mutate = bt_check_and_mutate,
	.drop_prefix = bt_drop_prefix,
	.bulk_open = bt_bulk_open,
	.bulk_put = bt_bulk_put,
	.bulk_get_stats = bt_bulk_get_stats,
	.bulk_close = bt_bulk_close,
	.bulk_flush = bt_bulk_flush,
	.scan_open = scan_open,
	.scan_next = bt_scan_next,
	.scan_seek = bt_scan_seek,
	.scan_close = bt_scan_close,
};

__attribute__((visibility("default"))) const struct cs_backend *cs_backend_table(void);

const struct cs_backend *cs_backend_table(void)
{
	return &table;
}

/* Our allocations (mem.c, linked into this module) count in the host's fault state, so the host's
 * $CELLFS_FAULT=alloc:N can fail them (backend.h's cs_host). */
__attribute__((visibility("default"))) int cs_backend_bind(const struct cs_host *host);

int cs_backend_bind(const struct cs_host *host)
{
	if (host->abi != CS_HOST_ABI || !host->fault_hit)
		return -EPROTO;
	fault_bind(host->fault_hit);
	return 0;
}
