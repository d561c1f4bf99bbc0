/* cellfs.c — the daemon's entry point: `cellfs [STORE] MOUNTPOINT [-o opts] [-f] [-d]`.
 * With no STORE it mounts the default store; a store is made on first use (a named one where the path is
 * new or an empty directory, in a directory that exists), never by a read-only mount. mount.fuse3 calls it as
 * `cellfs STORE MOUNTPOINT -o opts`, so /etc/fstab lines of type fuse.cellfs work. */
#include <errno.h>
#include <libgen.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "fileh.h"
#include "fs.h"
#include "loop.h"
#include "ops.h"
#include "req.h"
#include "share.h"
#include "uring.h"
#include "watch.h"
#include "wops.h"

struct conf {
	const char *pos[3];
	int npos;
	int help, version;
	int strict_schema;
	char *delimiter;
	char *asof;               /* -o asof=TIME, as given */
	char *timeout;            /* -o timeout=DURATION, as given */
	char *prefetch;           /* -o prefetch=SIZE, as given */
	unsigned cache_ttl;
	bool ro, allow_other;
	int uring;                /* -o uring: 1, -o nouring: -1, neither: 0 (io_uring where it can) */
	struct share_opts share;  /* -o only=, uid=, gid=, file_mode=, dir_mode= (share.h) */
};

enum { KEY_RO = 1, KEY_ALLOW_OTHER, KEY_URING, KEY_NOURING, KEY_REMOTE };

/* A remote store's connection settings: -o creds=... and the others, then ~/.cbtrc's (cs_remote). */
static cs_remote remote;

#define OPT(t, p) { t, offsetof(struct conf, p), 1 }
static const struct fuse_opt conf_opts[] = {
	OPT("-h", help),
	OPT("--help", help),
	OPT("-V", version),
	OPT("--version", version),
	OPT("strict_schema", strict_schema),
	{ "delimiter=%s", offsetof(struct conf, delimiter), 0 },
	{ "asof=%s", offsetof(struct conf, asof), 0 },
	{ "cache_ttl=%u", offsetof(struct conf, cache_ttl), 0 },
	{ "timeout=%s", offsetof(struct conf, timeout), 0 },
	{ "prefetch=%s", offsetof(struct conf, prefetch), 0 },
	/* a shared mount (share.h) */
	{ "only=%s", offsetof(struct conf, share.only), 0 },
	{ "uid=%s", offsetof(struct conf, share.uid), 0 },
	{ "gid=%s", offsetof(struct conf, share.gid), 0 },
	{ "file_mode=%s", offsetof(struct conf, share.file_mode), 0 },
	{ "dir_mode=%s", offsetof(struct conf, share.dir_mode), 0 },
	FUSE_OPT_KEY("ro", KEY_RO),
	FUSE_OPT_KEY("allow_other", KEY_ALLOW_OTHER),
	FUSE_OPT_KEY("uring", KEY_URING),
	FUSE_OPT_KEY("nouring", KEY_NOURING),
	FUSE_OPT_KEY("creds=", KEY_REMOTE),
	FUSE_OPT_KEY("access_token=", KEY_REMOTE),
	FUSE_OPT_KEY("data_endpoint=", KEY_REMOTE),
	FUSE_OPT_KEY("admin_endpoint=", KEY_REMOTE),
	FUSE_OPT_KEY("cert_file=", KEY_REMOTE),
	FUSE_OPT_KEY("app_profile=", KEY_REMOTE),
	FUSE_OPT_KEY("user_agent=", KEY_REMOTE),
	/* What /etc/fstab lines carry for mount(8) and systemd, not for the filesystem. mount.fuse3 drops
	 * most of them itself; dropped here too, so the same options work when cellfs is run by hand. */
	FUSE_OPT_KEY("defaults", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("auto", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("noauto", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("_netdev", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("nofail", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("user", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("nouser", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("users", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("comment=", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_END,
};

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct conf *c = data;
	if (key == KEY_RO)
		c->ro = true;
	if (key == KEY_ALLOW_OTHER)
		c->allow_other = true;
	if (key == KEY_REMOTE) {
		const char *eq = strchr(arg, '='), *why;
		char name[32];
		snprintf(name, sizeof(name), "%.*s", (int)(eq - arg), arg);
		int rc = cs_remote_set(&remote, name, eq + 1, &why);
		if (rc)
			fprintf(stderr, "cellfs: -o %s: %s\n", arg, rc == -ENOMEM ? strerror(ENOMEM) : why);
		return rc ? -1 : 0;
	}
	if (key == KEY_URING || key == KEY_NOURING) {
		c->uring = key == KEY_URING ? 1 : -1;
		return 0; /* (ours, not libfuse's) */
	}
	if (key == FUSE_OPT_KEY_OPT && !strncmp(arg, "x-", 2))
		return 0; /* x-systemd.automount, x-gvfs-show, ...: for userspace, as mount(8) defines them */
	if (key != FUSE_OPT_KEY_NONOPT)
		return 1; /* keep: for libfuse */
	if (c->npos == 3)
		return 1; /* too many; reported below */
	c->pos[c->npos++] = arg;
	return 0;
}

static void usage(const char *prog)
{
	printf("usage: %s [STORE] MOUNTPOINT [-o options] [-f] [-d] [-s]\n"
	       "Mount the cellfs store in directory STORE (default: the default store, $CELLFS_DB or\n"
	       "~/.local/share/cellfs/default), or the Cloud Bigtable instance bigtable://PROJECT/INSTANCE,\n"
	       "at MOUNTPOINT. Unmount with: fusermount3 -u MOUNTPOINT\n"
	       "A new path or an empty directory STORE gets a new store (not with -o ro).\n\n"
	       "  -f            stay in the foreground\n"
	       "  -d            debug: print every FUSE request (implies -f)\n"
	       "  -s            single-threaded\n"
	       "  -o ro         read-only\n"
	       "  -o asof=TIME  a read-only view of the store as it was at TIME: each column's newest\n"
	       "                cell at or before TIME, nothing newer (RFC 3339, as 2026-11-26T05:34:38Z,\n"
	       "                or microseconds since the epoch)\n"
	       "  -o strict_schema  refuse to create a family for a file written in an unknown one\n"
	       "  -o delimiter=C  the row-key delimiter of tables made with mkdir (default '#')\n"
	       "  -o cache_ttl=N  a remote store (bigtable://): keep what was read N seconds, each entry\n"
	       "                from when it was read (default 5); other clients' writes show within it\n"
	       "  -o prefetch=SIZE  a remote store: the memory kept rows may take (default 64M: K, M, G\n"
	       "                suffixes); a directory whose rows take at most half of it is read whole\n"
	       "  -o timeout=DURATION  a remote store: how long a call to it may take before the request\n"
	       "                fails with EIO (cbt's -timeout: 30s, 500ms, 1m30s; default 30s)\n"
	       "  -o creds=FILE, access_token=T, data_endpoint=HOST:PORT, admin_endpoint=HOST:PORT,\n"
	       "     cert_file=PEM, app_profile=ID, user_agent=S  a Bigtable store: how to reach it, as\n"
	       "                cbt's flags of those names; ~/.cbtrc fills in what they leave out\n"
	       "  -o only=TABLE[/PREFIX]  mount one table, or one key prefix of it (key segments named as\n"
	       "                the mount names them: quotes/NASDAQ), as the root; a prefix with no rows\n"
	       "                yet is mounted empty\n"
	       "  -o uid=N,gid=N  the owner and group every file and directory shows (a number or a\n"
	       "                name; default: the mounting user's)\n"
	       "  -o file_mode=OCTAL,dir_mode=OCTAL  the permission bits files and directories show\n"
	       "                (default 0644, 0755); with allow_other the kernel enforces them\n"
	       "  -o allow_other  let other users in (needs user_allow_other in /etc/fuse.conf); the kernel\n"
	       "                then checks the modes shown (default_permissions)\n"
	       "  -o uring      requests over io_uring (the default where the kernel offers it: as root,\n"
	       "                echo 1 > /sys/module/fuse/parameters/enable_uring); else /dev/fuse\n"
	       "  -o nouring    requests over /dev/fuse only\n"
	       "  -o _netdev,noauto,nofail,x-*  /etc/fstab's options for mount(8) and systemd: ignored\n"
	       "Other -o options are libfuse's and the kernel's (rw, nosuid, nodev, noexec, ...).\n",
	       prog);
}

/* Open the store (checking it is usable). CREATE: make a store there if there is none (the default store,
 * or a named one whose path is new or an empty directory; never read-only). ASOF (or NULL): open it as of
 * that time (CS_OPEN_ASOF; RO must be set too). ONLY (or NULL): check -o only= names a directory of it
 * (share_root()). Returns 0 or -errno with a message printed; says on stderr when it made the store
 * (SAY_NEW). */
static int open_store(const char *path, bool create, bool ro, const int64_t *asof, bool say_new, unsigned ttl,
		      unsigned deadline_ms, uint64_t prefetch, const char *only, cs_store **st)
{
	cs_open_opts o = { .flags = (ro ? CS_OPEN_RDONLY : CS_OPEN_BG_SYNC) | (create && !ro ? CS_OPEN_CREATE : 0) |
				    (asof ? CS_OPEN_ASOF : 0) | CS_OPEN_CACHE,
			   .version_ttl_ms = ttl * 1000, .asof = asof ? *asof : 0, .deadline_ms = deadline_ms,
			   .prefetch_bytes = prefetch, .remote = &remote };
	bool is_new = false;
	cs_txn *t = NULL;
	char *data;
	int rc;

	if ((o.flags & CS_OPEN_CREATE) && !strstr(path, "://")) { /* (a remote store's name is no path) */
		if (asprintf(&data, "%s/data.mdb", path) < 0)
			return -ENOMEM;
		is_new = access(data, F_OK) && errno == ENOENT;
		free(data);
	}
	rc = cs_store_open(path, &o, st);
	if (rc == -ENOENT && ro)
		fuse_log(FUSE_LOG_ERR, "cellfs: no store at \"%s\" (a read-only mount cannot create one)\n", path);
	else if (rc == -ENOENT)
		fuse_log(FUSE_LOG_ERR, "cellfs: no store at \"%s\"\n", path);
	else if (rc == -ENOTEMPTY)
		fuse_log(FUSE_LOG_ERR, "cellfs: \"%s\" is not a cellfs store (it holds other files)\n", path);
	else if (rc)
		fuse_log(FUSE_LOG_ERR, "cellfs: cannot open store \"%s\": %s\n", path,
			 cs_last_error() ? cs_last_error() : strerror(-rc));
	if (rc)
		return rc;
	{ /* (a remote store: the first call is the first contact, so a dead instance fails here) */
		char **names = NULL;
		size_t n = 0;
		if (!(rc = cs_txn_begin(*st, CS_TXN_RDONLY, &t)))
			rc = cs_table_list(t, &names, &n);
		cs_strv_free(names, n);
		cs_txn_abort(t);
	}
	if (rc) {
		fuse_log(FUSE_LOG_ERR, "cellfs: cannot read store \"%s\": %s\n", path,
			 cs_last_error() ? cs_last_error() : strerror(-rc));
		cs_store_close(*st);
		return rc;
	}
	if (only && (rc = share_root(*st, only, NULL))) { /* (says what is wrong) */
		cs_store_close(*st);
		return rc;
	}
	if (is_new && say_new)
		fuse_log(FUSE_LOG_NOTICE, "cellfs: created a new store at \"%s\"\n", path);
	return 0;
}

/* TEXT as a size: decimal bytes, or followed by K, M or G (KiB, MiB, GiB; "k", "MiB", "MB" too), at least
 * 1 MiB. 0 or -EINVAL. */
static int parse_size(const char *text, uint64_t *out)
{
	char *end;
	unsigned shift = 0;
	unsigned long long n;

	if (*text < '0' || *text > '9')
		return -EINVAL;
	errno = 0;
	n = strtoull(text, &end, 10);
	switch (*end | 0x20) {
	case 'k': shift = 10, end++; break;
	case 'm': shift = 20, end++; break;
	case 'g': shift = 30, end++; break;
	default: break;
	}
	if (shift && (!strcmp(end, "iB") || !strcmp(end, "B") || !strcmp(end, "ib") || !strcmp(end, "b")))
		end += strlen(end);
	if (errno || *end || n > (UINT64_MAX >> shift) || (n << shift) < (1u << 20))
		return -EINVAL;
	*out = n << shift;
	return 0;
}

/* Check the store as open_store does, before the daemon goes to the background (where errors could not
 * be seen), and leave nothing open: LMDB handles must not cross fork(), and neither may gRPC, whose
 * threads could hold a lock (the allocator's, under ASan) at the fork and leave the daemon's own open
 * waiting for it. A remote store is therefore checked in a child process, which says what is wrong
 * itself. Returns 0, or nonzero with a message printed. */
static int check_store(const char *path, bool ro, const int64_t *asof, bool say_new, unsigned ttl,
		       unsigned deadline_ms, const char *only)
{
	cs_store *st;
	pid_t pid;
	int status;

	if (!strstr(path, "://")) {
		if (open_store(path, !only, ro, asof, say_new, ttl, deadline_ms, 0, only, &st))
			return -1;
		cs_store_close(st);
		return 0;
	}
	fflush(stderr);
	if ((pid = fork()) < 0) {
		fprintf(stderr, "cellfs: cannot check store \"%s\": fork: %s\n", path, strerror(errno));
		return -1;
	}
	if (!pid) {
		int rc = open_store(path, !only, ro, asof, say_new, ttl, deadline_ms, 0, only, &st);
		if (!rc)
			cs_store_close(st);
		fflush(stderr);
		_exit(rc ? 1 : 0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "cellfs: cannot check store \"%s\": waitpid: %s\n", path, strerror(errno));
			return -1;
		}
	if (WIFSIGNALED(status))
		fprintf(stderr, "cellfs: checking store \"%s\" ended by signal %d\n", path, WTERMSIG(status));
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

/* *PATH (a file named by -o NAME=, or ~/.cbtrc) made absolute: the daemon reads it after it has left
 * the directory it was started in. Returns 0, or -1 with a message printed (no such file). */
static int absolute(char **path, const char *name)
{
	char *abs;
	if (!*path || **path == '/')
		return 0;
	if (!(abs = realpath(*path, NULL))) {
		fprintf(stderr, "cellfs: -o %s=%s: %s\n", name, *path, strerror(errno));
		return -1;
	}
	free(*path);
	*path = abs;
	return 0;
}

/* The absolute path of named store ARG in *OUT (caller frees). A path that does not exist yet (a store to
 * make) must be in a directory that does: mounting a mistyped path makes no tree of directories.
 * Returns 0, or -1 with a message printed. */
static int store_path(const char *arg, char **out)
{
	char *dcopy, *bcopy, *dir;
	const char *base;
	int rc = -1, kind = cs_store_name_kind(arg);

	if (kind < 0) { /* (bigtable:/p/i: a typo, not a directory to make) */
		fprintf(stderr, "cellfs: cannot open store \"%s\": %s\n", arg, cs_last_error());
		return -1;
	}
	if (kind) /* a remote store's name (bigtable://...) is no path */
		return (*out = strdup(arg)) ? 0 : -1;
	if ((*out = realpath(arg, NULL)))
		return 0;
	if (errno != ENOENT) {
		fprintf(stderr, "cellfs: cannot open store \"%s\": %s\n", arg, strerror(errno));
		return -1;
	}
	dcopy = strdup(arg);
	bcopy = strdup(arg);
	if (!dcopy || !bcopy) {
		fprintf(stderr, "cellfs: %s\n", strerror(ENOMEM));
		goto free_copies;
	}
	base = basename(bcopy);
	if (!(dir = realpath(dirname(dcopy), NULL))) {
		fprintf(stderr, "cellfs: no store at \"%s\", and no directory to make one in: %s\n", arg, strerror(errno));
		goto free_copies;
	}
	if (asprintf(out, "%s/%s", strcmp(dir, "/") ? dir : "", base) < 0) {
		fprintf(stderr, "cellfs: %s\n", strerror(ENOMEM));
		*out = NULL;
	} else {
		rc = 0;
	}
	free(dir);
free_copies:
	free(dcopy);
	free(bcopy);
	return rc;
}

/* The test hook $CELLFS_FAULT (cs_fault_arm_spec()), armed once the mount is ready so that N counts
 * from the first request; says at exit whether the injected fault fired (or how many calls it counted). */
static void fault_report(void)
{
	if (cs_fault_fired())
		fuse_log(FUSE_LOG_NOTICE, "cellfs: CELLFS_FAULT=%s fired\n", getenv("CELLFS_FAULT"));
	else
		fuse_log(FUSE_LOG_NOTICE, "cellfs: CELLFS_FAULT=%s did not fire: %llu calls\n", getenv("CELLFS_FAULT"),
			 (unsigned long long)cs_fault_calls());
}

/* Where the daemon's log lines go once it is in the background, where stderr is /dev/null: syslog
 * (journald where systemd runs), as the daemon "cellfs" with its pid, facility daemon, each line at its
 * fuse_log level (the same numbers as syslog's). In the foreground (-f, -d) they stay on stderr. */
static void log_syslog(enum fuse_log_level level, const char *fmt, va_list ap)
{
	char line[1024];
	const char *text = line;
	size_t n;

	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = '\0';
	if (!strncmp(text, "cellfs: ", 8)) /* (the ident says it) */
		text += 8;
	syslog((int)level, "%s", text);
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts opts = { 0 };
	struct conf conf = { 0 };
	struct fs fs = { .entry_timeout = 86400, .attr_timeout = 86400, .neg_timeout = 1 };
	struct fuse_lowlevel_ops ops = { 0 };
	struct uring *ring = NULL;
	char *store = NULL, *fsname = NULL;
	struct stat sb;
	bool is_default;
	int64_t asof_us = 0;
	unsigned deadline_ms = 0;
	uint64_t prefetch = 0;
	const char *why;
	int ret = 1, ret2;

	/* A damaged store must cost EIO for what it cannot read, never the mount (before threads start). */
	cs_store_catch_faults();
	if (fuse_opt_parse(&args, &conf, conf_opts, opt_proc) == -1)
		return 1;
	if (conf.help) {
		usage(argv[0]);
		fuse_opt_free_args(&args);
		return 0;
	}
	if (conf.version) {
		printf("cellfs %s (libfuse %s)\n", CELLFS_VERSION, fuse_pkgversion());
		fuse_opt_free_args(&args);
		return 0;
	}
	if (getenv("CELLFS_FAULT") && cs_fault_arm_spec(getenv("CELLFS_FAULT"))) {
		fprintf(stderr, "cellfs: CELLFS_FAULT=%s is not KINDS:N (KINDS lmdb, zstd, alloc joined by +)\n",
			getenv("CELLFS_FAULT"));
		goto free_args;
	}
	cs_fault_arm(0, 0); /* armed below, when the mount is ready */
	if (conf.asof) {
		if (cs_time_parse(conf.asof, &asof_us, &why)) {
			fprintf(stderr, "cellfs: -o asof=%s: %s (give RFC 3339, as 2026-11-26T05:34:38Z, or "
				"microseconds since the epoch)\n", conf.asof, why);
			goto free_args;
		}
		/* read-only for the kernel too: writes are EROFS before they reach the daemon */
		if (fuse_opt_add_arg(&args, "-oro"))
			goto free_args;
	}
	if (conf.timeout && cs_duration_parse(conf.timeout, &deadline_ms, &why)) {
		fprintf(stderr, "cellfs: -o timeout=%s: %s (give a duration as cbt's -timeout takes it: 30s, 500ms, "
			"1m30s)\n", conf.timeout, why);
		goto free_args;
	}
	if (conf.prefetch && parse_size(conf.prefetch, &prefetch)) {
		fprintf(stderr, "cellfs: -o prefetch=%s: not a size (bytes, or a number with K, M or G: 64M)\n",
			conf.prefetch);
		goto free_args;
	}
	if (share_owner(&conf.share, &fs))
		goto free_args;
	if (conf.npos < 1 || conf.npos > 2) {
		fprintf(stderr, conf.npos ? "cellfs: too many arguments: \"%s\"\n" : "cellfs: no mountpoint given%s\n",
			conf.npos ? conf.pos[conf.npos - 1] : "");
		fprintf(stderr, "usage: %s [STORE] MOUNTPOINT [-o options] [-f] [-d]\n", argv[0]);
		goto free_args;
	}
	is_default = conf.npos == 1;
	if (is_default) {
		if (cs_default_path(&store)) {
			fprintf(stderr, "cellfs: no default store: set HOME or CELLFS_DB, or name a STORE\n");
			goto free_args;
		}
	} else if (store_path(conf.pos[0], &store)) {
		goto free_args;
	}
	if (cs_store_name_kind(store) == 1) { /* a Bigtable store: ~/.cbtrc fills in what -o leaves out */
		char rcwhy[600];
		int rc = cs_remote_cbtrc(&remote, NULL, rcwhy, sizeof(rcwhy));
		if (rc && rc != -ENOENT) {
			fprintf(stderr, "cellfs: %s\n", rcwhy);
			goto free_args;
		}
		if (!conf.timeout && remote.timeout)
			cs_duration_parse(remote.timeout, &deadline_ms, &why); /* (checked by cs_remote_cbtrc) */
		if (absolute(&remote.creds, "creds") || absolute(&remote.cert_file, "cert_file"))
			goto free_args;
	}
	/* What the kernel shows in /proc/mounts: fuse.cellfs, the store as the source. Permissions: without
	 * allow_other only the mounting user can reach the mount at all (the kernel refuses everyone else),
	 * and every file and directory is theirs, so checking modes would only cost a GETATTR whenever a
	 * directory changes; with allow_other the kernel checks them (default_permissions). */
	if (asprintf(&fsname, "-osubtype=cellfs,fsname=%s%s", store, conf.allow_other ? ",default_permissions" : "") < 0 ||
	    fuse_opt_add_arg(&args, fsname) || fuse_opt_add_arg(&args, conf.pos[conf.npos - 1]))
		goto free_args;
	if (fuse_parse_cmdline(&args, &opts))
		goto free_args;
	fs.ro = conf.ro || conf.asof;
	fs.strict_schema = conf.strict_schema;
	fs.delim = CS_DEFAULT_DELIM;
	if (conf.delimiter) {
		if (strlen(conf.delimiter) != 1 || conf.delimiter[0] == '/') {
			fprintf(stderr, "cellfs: -o delimiter=%s: the delimiter is one byte, not '/'\n", conf.delimiter);
			goto free_opts;
		}
		fs.delim = conf.delimiter[0];
	}

	/* Check the store before going to the background; it is opened again after daemonising. A new store
	 * is made here, unless the mount point is missing (libfuse says so below; nothing is left behind). */
	if (!stat(opts.mountpoint, &sb) &&
	    check_store(store, fs.ro, conf.asof ? &asof_us : NULL, !is_default, conf.cache_ttl ? conf.cache_ttl : 5,
			deadline_ms, conf.share.only))
		goto free_opts;

	if (node_table_init(&fs.nodes) || req_txn_key_init(&fs))
		goto free_opts;
	cursor_cache_init(&fs.cursors);
	pending_init(&fs.pending);
	pthread_mutex_init(&fs.wlock, NULL);
	pthread_mutex_init(&fs.hlock, NULL);
	ops_fill(&ops);
	wops_fill(&ops);
	if (!(fs.se = fuse_session_new(&args, &ops, sizeof(ops), &fs)))
		goto free_nodes; /* libfuse has said why: an unknown option, say */
	if (fuse_set_signal_handlers(fs.se))
		goto destroy;
	if (fuse_session_mount(fs.se, opts.mountpoint))
		goto remove_handlers;
	if (fuse_daemonize(opts.foreground))
		goto unmount;
	if (!opts.foreground) {
		openlog("cellfs", LOG_PID, LOG_DAEMON);
		fuse_set_log_func(log_syslog);
	}
	if (open_store(store, true, fs.ro, conf.asof ? &asof_us : NULL, false, conf.cache_ttl ? conf.cache_ttl : 5,
		       deadline_ms, prefetch, NULL, &fs.st))
		goto unmount;
	if (conf.share.only && share_root(fs.st, conf.share.only, &fs.nodes))
		goto close_store;
	if (!(cs_store_caps(fs.st) & CS_CAP_WATCH)) {
		/* Nobody tells this store of other clients' writes: what the kernel holds expires as the store's
		 * own kept rows do, each entry cache_ttl after it was read (listings too: watch_expire_later),
		 * instead of all of it at once. */
		fs.expiring = true;
		fs.ttl_ms = (conf.cache_ttl ? conf.cache_ttl : 5) * 1000;
		fs.entry_timeout = fs.attr_timeout = fs.neg_timeout = conf.cache_ttl ? conf.cache_ttl : 5;
	}
	if (watch_start(&fs))
		goto close_store;
	if (getenv("CELLFS_FAULT")) {
		cs_fault_arm_spec(getenv("CELLFS_FAULT"));
		atexit(fault_report);
	}
	/* The transport: io_uring unless told otherwise, decided at INIT (uring.c says which, one line) */
	if (opts.singlethread || conf.uring < 0 || !uring_built()) {
		fuse_log(FUSE_LOG_NOTICE, "cellfs: transport: /dev/fuse (%s)\n",
			 opts.singlethread ? "-s" : conf.uring < 0 ? "-o nouring" : "built without liburing");
	} else if ((ret2 = uring_new(fs.se, LOOP_WAKE_SIG, &ring))) {
		fuse_log(FUSE_LOG_NOTICE, "cellfs: transport: /dev/fuse (io_uring: %s)\n", strerror(-ret2));
		ring = NULL;
	}
	ret = opts.singlethread ? fuse_session_loop(fs.se) : loop_run(fs.se, ring);
	watch_stop(&fs);
	if (!fs.ro && (ret2 = cs_store_sync(fs.st))) /* what was closed in the last 5 s, on the disk too; unlinks queued */
		fuse_log(FUSE_LOG_ERR, "cellfs: could not sync the store at unmount: %s%s%s\n", strerror(-ret2),
			 cs_last_error() ? ": " : "", cs_last_error() ? cs_last_error() : "");
close_store:
	cs_store_close(fs.st);
unmount:
	fuse_session_unmount(fs.se);
	uring_free(ring);
remove_handlers:
	fuse_remove_signal_handlers(fs.se);
destroy:
	fuse_session_destroy(fs.se);
free_nodes:
	fileh_release_all(&fs);
	cursor_cache_release(&fs.cursors);
	pending_release(&fs.pending);
	node_table_release(&fs.nodes);
free_opts:
	free(opts.mountpoint);
free_args:
	fuse_opt_free_args(&args);
	free(store);
	free(fsname);
	free(conf.delimiter);
	free(conf.asof);
	free(conf.timeout);
	free(conf.prefetch);
	cs_remote_clear(&remote);
	share_opts_release(&conf.share);
	return ret ? 1 : 0;
}
