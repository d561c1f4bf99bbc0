/* remote.c — backends found by a store's name: checking a backend's table against its caps, and finding
 * a scheme's backend module and loading it (backend.h). A module, once loaded, stays loaded for the life of the process (its libraries start
 * threads of their own). */
#include <dlfcn.h>
#include <stddef.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "fault.h"
#include "remote.h"

#ifndef CELLFS_MODULE_DIR
#define CELLFS_MODULE_DIR "/usr/local/lib/cellfs"
#endif

static __thread char open_why[512];

bool remote_is_name(const char *name)
{
	const char *p = strstr(name, "://");
	if (!p || p == name)
		return false;
	for (const char *q = name; q < p; q++)
		if (!((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '+' || *q == '-'))
			return false;
	return true;
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

int remote_check_name(const char *name)
{
	const char *q = name;

	open_why[0] = '\0';
	if (remote_is_name(name) || !is_alpha(*q))
		return 0;
	while (is_alpha(*q) || (*q >= '0' && *q <= '9') || *q == '+' || *q == '.' || *q == '-')
		q++;
	if (*q != ':')
		return 0;
	/* A name starting "SCHEME:": a typo of a remote store's name (bigtable:/p/i, Bigtable://p/i) would
	 * otherwise make a directory of that name. */
	if ((size_t)(q - name) == strlen("bigtable") && !strncasecmp(name, "bigtable", (size_t)(q - name)))
		snprintf(open_why, sizeof(open_why), "a Bigtable store is named bigtable://PROJECT/INSTANCE (start "
			 "the path with ./ to name a directory so)");
	else if (q[1] == '/')
		snprintf(open_why, sizeof(open_why), "it starts with a URL scheme cellfs does not know: a store is a "
			 "directory or bigtable://PROJECT/INSTANCE (start the path with ./ to name a directory so)");
	else
		return 0;
	return -EINVAL;
}

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

/* What a module is lent (backend.h): our fault state, so $CELLFS_FAULT reaches its allocations. */
static const struct cs_host host = { .abi = CS_HOST_ABI, .fault_hit = fault_check };

static const struct cs_backend *try_load(const char *path, char *why, size_t whyn)
{
	const struct cs_backend *(*get)(void);
	int (*bind)(const struct cs_host *host);
	const struct cs_backend *be;
	const char *bad;
	void *h;

	if (access(path, F_OK))
		return NULL;
	if (!(h = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
		snprintf(why, whyn, "cannot load %s: %s", path, dlerror());
		return NULL;
	}
	*(void **)&get = dlsym(h, CS_BACKEND_SYMBOL);
	*(void **)&bind = dlsym(h, CS_BACKEND_BIND_SYMBOL);
	if (!get || !(be = get()) || backend_check(be, &bad) || (bind && bind(&host))) {
		snprintf(why, whyn, "%s is not a cellfs backend of this version", path);
		dlclose(h);
		return NULL;
	}
	return be;
}

/* The directory this program's binary is in, or "" (for a build tree: EXE/../store/SCHEME). */
static void exe_dir(char *buf, size_t n)
{
	ssize_t len = readlink("/proc/self/exe", buf, n - 1);
	char *slash;
	buf[len > 0 ? len : 0] = '\0';
	if ((slash = strrchr(buf, '/')))
		*slash = '\0';
	else
		buf[0] = '\0';
}

/* The backend for SCHEME: $CELLFS_MODULE_DIR, then beside the program in a build tree, then where
 * `meson install` puts modules. */
static const struct cs_backend *find_backend(const char *scheme, char *why, size_t whyn)
{
	char path[PATH_MAX + 64], dir[PATH_MAX];
	const char *env = getenv("CELLFS_MODULE_DIR");
	const struct cs_backend *be = NULL;

	why[0] = '\0';
	if (env && *env) {
		snprintf(path, sizeof(path), "%s/cellstore-%s.so", env, scheme);
		be = try_load(path, why, whyn);
	}
	if (!be && !why[0]) {
		exe_dir(dir, sizeof(dir));
		if (dir[0]) {
			snprintf(path, sizeof(path), "%s/../store/%s/cellstore-%s.so", dir, scheme, scheme);
			be = try_load(path, why, whyn);
		}
	}
	if (!be && !why[0]) {
		snprintf(path, sizeof(path), "%s/cellstore-%s.so", CELLFS_MODULE_DIR, scheme);
		be = try_load(path, why, whyn);
	}
	if (!be && !why[0])
		snprintf(why, whyn, "no backend for %s:// stores (cellstore-%s.so is not installed: this "
			 "cellfs was built without it, or it is missing from %s)", scheme, scheme, CELLFS_MODULE_DIR);
	return be;
}

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char scheme[16];
	const struct cs_backend *be;
} loaded[4];

int remote_backend(const char *name, const struct cs_backend **out)
{
	const struct cs_backend *be = NULL;
	size_t sn = (size_t)(strstr(name, "://") - name);
	char scheme[16];

	open_why[0] = '\0';
	if (sn >= sizeof(scheme)) {
		snprintf(open_why, sizeof(open_why), "no backend for stores named %.40s", name);
		return -EPROTONOSUPPORT;
	}
	memcpy(scheme, name, sn);
	scheme[sn] = '\0';
	pthread_mutex_lock(&load_lock);
	for (size_t i = 0; i < sizeof(loaded) / sizeof(loaded[0]) && loaded[i].be; i++)
		if (!strcmp(loaded[i].scheme, scheme))
			be = loaded[i].be;
	if (!be && (be = find_backend(scheme, open_why, sizeof(open_why))))
		for (size_t i = 0; i < sizeof(loaded) / sizeof(loaded[0]); i++)
			if (!loaded[i].be) {
				strcpy(loaded[i].scheme, scheme);
				loaded[i].be = be;
				break;
			}
	pthread_mutex_unlock(&load_lock);
	if (!be)
		return -EPROTONOSUPPORT;
	*out = be;
	return 0;
}

void remote_open_failed(const struct cs_backend *be, const char *why)
{
	if (!why && be->last_error)
		why = be->last_error();
	if (why)
		snprintf(open_why, sizeof(open_why), "%s", why);
}

const char *cs_last_error(void)
{
	const char *why = NULL;
	if (open_why[0])
		return open_why;
	pthread_mutex_lock(&load_lock);
	for (size_t i = 0; i < sizeof(loaded) / sizeof(loaded[0]) && loaded[i].be && !why; i++)
		if (loaded[i].be->last_error)
			why = loaded[i].be->last_error();
	pthread_mutex_unlock(&load_lock);
	return why;
}
