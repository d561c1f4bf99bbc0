/* floorfs.c — the floor of the mount benchmark: the cheapest FUSE daemon that can serve a tree.
 * `floorfs SRCDIR MOUNTPOINT [-f] [-s] [-o no_open] [-o uring]`
 *
 * At startup it walks SRCDIR (directories and regular files only) into memory: every inode's attributes
 * as lstat gives them, a directory's children as consecutive inodes (in SRCDIR's readdir order), a
 * file's whole contents. It then serves that copy read-only with the kernel-facing settings of cellfs
 * (fs/README.md, fs/cellfs.c): entry and attribute timeouts of 86400 s, negative entries of 1 s, readdirplus
 * always, directories unopened (ENOSYS to opendir) and their listings cached, keep_cache on open, no flush
 * handler, getxattr answered EOPNOTSUPP, no default_permissions, libfuse's multi-threaded loop configured as
 * cellfs configures it. Every request is a hash lookup or an array index and a reply, so what
 * bench_mount.sh measures through it is what FUSE itself costs. By default OPEN is answered (fh 0,
 * keep_cache) with no work; `-o no_open` answers it ENOSYS, so the kernel stops sending OPEN and RELEASE
 * (FUSE_CAP_NO_OPEN_SUPPORT). Nothing is ever freed: the tree lives as long as the daemon. */
#define FUSE_USE_VERSION 35
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TIMEOUT 86400.0 /* entries and attributes, as cellfs */
#define NEG_TIMEOUT 1.0 /* negative entries, as cellfs */

#include "floor.h"

struct node {
	struct stat st; /* from lstat, st_ino replaced by the inode number */
	char *path; /* SRCDIR/...; NAME points into it */
	const char *name; /* "" for the root */
	fuse_ino_t parent;
	fuse_ino_t first; /* directories: the children are inodes FIRST .. FIRST + NKIDS - 1 */
	size_t nkids;
	char *data; /* files: the contents, st.st_size bytes */
};

static struct node *nodes; /* inode INO is nodes[INO - 1]; the root is FUSE_ROOT_ID */
static size_t nnodes, cap;
static fuse_ino_t *table; /* open addressing on (parent, name): inode numbers, 0 for empty */
static size_t table_mask;
static int no_opendir; /* the kernel lists directories without OPENDIR */
static struct conf {
	const char *src;
	int no_open; /* -o no_open */
	int uring; /* -o uring: on cellfs's io_uring transport */
} conf;
static const struct fuse_opt conf_opts[] = { /* -o's of CONF */
	{ "no_open", offsetof(struct conf, no_open), 1 },
	FLOOR_OPT_URING(struct conf),
	FUSE_OPT_END,
};

static struct node *get(fuse_ino_t ino)
{
	return ino >= 1 && ino <= nnodes ? &nodes[ino - 1] : NULL;
}

/* ---- the tree in memory ---- */

static fuse_ino_t find(fuse_ino_t parent, const char *name)
{
	fuse_ino_t ino;
	for (size_t i = floor_hash(parent, name) & table_mask; (ino = table[i]); i = (i + 1) & table_mask)
		if (nodes[ino - 1].parent == parent && !strcmp(nodes[ino - 1].name, name))
			return ino;
	return 0;
}

/* Append the inode at PATH (its name starting at PATH + NAME_OFF), taking PATH. */
static int add(fuse_ino_t parent, char *path, size_t name_off)
{
	struct node *n;
	if (nnodes == cap) {
		cap = cap ? 2 * cap : 1024;
		if (!(nodes = realloc(nodes, cap * sizeof(*nodes))))
			return -ENOMEM;
	}
	n = &nodes[nnodes];
	memset(n, 0, sizeof(*n));
	if (lstat(path, &n->st))
		return -errno;
	if (!S_ISDIR(n->st.st_mode) && !S_ISREG(n->st.st_mode)) {
		fprintf(stderr, "floorfs: %s: not a directory or regular file\n", path);
		return -EINVAL;
	}
	n->st.st_ino = ++nnodes;
	n->path = path;
	n->name = path + name_off;
	n->parent = parent;
	return 0;
}

static int read_file(struct node *n)
{
	size_t len = (size_t)n->st.st_size, got = 0;
	int fd;
	if (!(n->data = malloc(len ? len : 1)))
		return -ENOMEM;
	if ((fd = open(n->path, O_RDONLY)) < 0)
		return -errno;
	while (got < len) {
		ssize_t r = read(fd, n->data + got, len - got);
		if (r <= 0) {
			int err = r ? errno : EIO; /* EIO: shorter than lstat said */
			close(fd);
			return -err;
		}
		got += (size_t)r;
	}
	close(fd);
	return 0;
}

/* Breadth first: inode I's children are appended together, so a directory's are consecutive. */
static int load(const char *src)
{
	char *root = strdup(src);
	int rc = root ? add(FUSE_ROOT_ID, root, strlen(root)) : -ENOMEM;
	for (size_t i = 0; !rc && i < nnodes; i++) {
		DIR *d;
		struct dirent *de;
		if (S_ISREG(nodes[i].st.st_mode)) {
			rc = read_file(&nodes[i]);
			continue;
		}
		if (!(d = opendir(nodes[i].path)))
			return -errno;
		nodes[i].first = nnodes + 1;
		while (!rc && (de = readdir(d))) {
			char *p;
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if (asprintf(&p, "%s/%s", nodes[i].path, de->d_name) < 0)
				rc = -ENOMEM;
			else
				rc = add(i + 1, p, strlen(nodes[i].path) + 1);
		}
		closedir(d);
		nodes[i].nkids = nnodes + 1 - nodes[i].first;
	}
	if (rc)
		return rc;
	for (table_mask = 1; table_mask < 2 * nnodes; table_mask <<= 1)
		;
	if (!(table = calloc(table_mask--, sizeof(*table))))
		return -ENOMEM;
	for (fuse_ino_t ino = 2; ino <= nnodes; ino++) {
		size_t i = floor_hash(nodes[ino - 1].parent, nodes[ino - 1].name) & table_mask;
		while (table[i])
			i = (i + 1) & table_mask;
		table[i] = ino;
	}
	return 0;
}

/* ---- the handlers ---- */

static void fl_init(void *userdata, struct fuse_conn_info *conn)
{
	if (conn->capable & FUSE_CAP_READDIRPLUS)
		conn->want |= FUSE_CAP_READDIRPLUS;
	conn->want &= ~(unsigned)FUSE_CAP_READDIRPLUS_AUTO;
	no_opendir = !!(conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT);
	if (conf.no_open && !(conn->capable & FUSE_CAP_NO_OPEN_SUPPORT))
		fprintf(stderr, "floorfs: the kernel has no no_open support: OPEN will be sent and refused\n");
}

static void fl_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct node *p = get(parent);
	struct fuse_entry_param e = { .entry_timeout = NEG_TIMEOUT }; /* ino 0: a negative entry */
	fuse_ino_t ino;
	if (!p || !S_ISDIR(p->st.st_mode)) {
		fuse_reply_err(req, p ? ENOTDIR : ESTALE);
		return;
	}
	if ((ino = find(parent, name)))
		floor_entry(&get(ino)->st, &e);
	fuse_reply_entry(req, &e);
}

static void fl_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct node *n = get(ino);
	if (n)
		fuse_reply_attr(req, &n->st, TIMEOUT);
	else
		fuse_reply_err(req, ESTALE);
}

static void fl_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct node *n = get(ino);
	if (!n || !S_ISDIR(n->st.st_mode)) {
		fuse_reply_err(req, n ? ENOTDIR : ESTALE);
	} else if (no_opendir) {
		fuse_reply_err(req, ENOSYS); /* no OPENDIR nor RELEASEDIR from now on, listings cached */
	} else {
		fi->cache_readdir = 1;
		fi->keep_cache = 1;
		fuse_reply_open(req, fi);
	}
}

/* Entry OFF on: "." and ".." are entries 0 and 1 (node id 0 in readdirplus, as cellfs sends them), then
 * the children; an entry's offset is the number of the one after it. */
static void list(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, int plus)
{
	struct node *n = get(ino);
	char *buf;
	size_t used = 0;
	if (!n || !S_ISDIR(n->st.st_mode) || off < 0) {
		fuse_reply_err(req, !n ? ESTALE : off < 0 ? EINVAL : ENOTDIR);
		return;
	}
	if (!(buf = malloc(size))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	for (size_t i = (size_t)off; i < 2 + n->nkids; i++) {
		struct fuse_entry_param e = { 0 };
		const char *name;
		size_t need;
		if (i < 2) {
			name = i ? ".." : ".";
			e.attr.st_ino = i ? n->parent : ino;
			e.attr.st_mode = S_IFDIR;
		} else {
			const struct node *k = get(n->first + i - 2);
			name = k->name;
			floor_entry(&k->st, &e);
		}
		need = plus ? fuse_add_direntry_plus(req, buf + used, size - used, name, &e, (off_t)i + 1)
			    : fuse_add_direntry(req, buf + used, size - used, name, &e.attr, (off_t)i + 1);
		if (need > size - used)
			break; /* not written: the buffer is full */
		used += need;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void fl_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	list(req, ino, size, off, 0);
}

static void fl_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	list(req, ino, size, off, 1);
}

static void fl_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (conf.no_open) {
		fuse_reply_err(req, ENOSYS); /* success, and no OPEN nor RELEASE from now on */
	} else if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC)) {
		fuse_reply_err(req, EROFS);
	} else {
		fi->fh = 0;
		fi->keep_cache = 1;
		fuse_reply_open(req, fi);
	}
}

static void fl_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct node *n = get(ino);
	size_t len;
	if (!n || !S_ISREG(n->st.st_mode)) {
		fuse_reply_err(req, n ? EISDIR : ESTALE);
		return;
	}
	len = (size_t)n->st.st_size;
	if (off < 0 || (size_t)off >= len)
		fuse_reply_buf(req, NULL, 0);
	else
		fuse_reply_buf(req, n->data + off, len - (size_t)off < size ? len - (size_t)off : size);
}

static void fl_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	fuse_reply_err(req, EOPNOTSUPP); /* ls -l then stops asking for security.* and system.* */
}

/* Left to libfuse, which answers as these would: FORGET (nothing is freed: no reply), RELEASE and
 * RELEASEDIR (0), FLUSH (ENOSYS, and the kernel sends no more; cellfs has no flush either). */
static const struct fuse_lowlevel_ops ops = {
	.init = fl_init,
	.lookup = fl_lookup,
	.getattr = fl_getattr,
	.opendir = fl_opendir,
	.readdir = fl_readdir,
	.readdirplus = fl_readdirplus,
	.open = fl_open,
	.read = fl_read,
	.getxattr = fl_getxattr,
};

/* ---- main ---- */

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	if (key != FUSE_OPT_KEY_NONOPT || conf.src)
		return 1; /* for libfuse: options, and the mountpoint */
	conf.src = arg;
	return 0;
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts opts = { 0 };
	char *fsname = NULL;
	int rc, ret = 1;

	if (fuse_opt_parse(&args, &conf, conf_opts, opt_proc) == -1 || fuse_parse_cmdline(&args, &opts))
		return 1;
	if (!conf.src || !opts.mountpoint || opts.show_help) {
		fprintf(stderr, "usage: %s SRCDIR MOUNTPOINT [-f] [-s] [-o no_open] [-o uring]\n", argv[0]);
		goto out;
	}
	if ((rc = load(conf.src))) {
		fprintf(stderr, "floorfs: cannot load %s: %s\n", conf.src, strerror(-rc));
		goto out;
	}
	if (asprintf(&fsname, "-osubtype=floorfs,fsname=%s", conf.src) < 0 || fuse_opt_add_arg(&args, fsname))
		goto out;
	ret = floor_serve(&args, &opts, &ops, conf.uring);
out:
	free(opts.mountpoint);
	fuse_opt_free_args(&args);
	free(fsname);
	return ret ? 1 : 0;
}
