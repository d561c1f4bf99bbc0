/* floorw.c — the floor of the write benchmark: the cheapest FUSE daemon a writer can use.
 * `floorw MOUNTPOINT [-f] [-s] [-o no_flush] [-o uring]`
 *
 * A writable tree kept in memory, empty at start, served with the kernel-facing settings of cellfs
 * (fs/README.md, fs/cellfs.c): entry and attribute timeouts of 86400 s, negative entries of 1 s, readdirplus
 * always, directories unopened (ENOSYS to opendir), O_TRUNC with the open (atomic_o_trunc), no writeback
 * cache, writable handles with direct I/O, a FLUSH handler, getxattr answered EOPNOTSUPP outside user.*,
 * setxattr EOPNOTSUPP, listxattr empty, no default_permissions, libfuse's multi-threaded loop configured as
 * cellfs configures it. So the kernel sends it the requests it sends cellfs for the same shell commands,
 * and each is answered with a hash lookup or a memcpy: what bench_write.sh measures through it is what
 * FUSE itself costs a writer. `-o no_flush` answers FLUSH with ENOSYS, after which the kernel sends no
 * more (as for bindfs, which has no flush handler): the cost of the flushes the contract (fs/CONTRACT.md, "Writing")
 * needs (close() reports commit errors) is the difference. One lock serialises the handlers. Unlinked inodes are kept
 * until the daemon exits. */
#define FUSE_USE_VERSION 35
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TIMEOUT 86400.0 /* entries and attributes, as cellfs */
#define NEG_TIMEOUT 1.0 /* negative entries, as cellfs */

#include "floor.h"

struct node {
	struct stat st;
	char *name;
	fuse_ino_t parent;
	fuse_ino_t kids, next, prev; /* directories: the first child; the siblings around this one */
	size_t nkids;
	char *data; /* files: st.st_size bytes, CAP allocated */
	size_t cap;
	int linked; /* in its parent and the name table */
};

static struct node *nodes; /* inode INO is nodes[INO - 1]; the root is FUSE_ROOT_ID */
static size_t nnodes, ncap;
static fuse_ino_t *table; /* open addressing on (parent, name); 0 empty, TOMB removed */
static size_t table_mask, table_used;
#define TOMB ((fuse_ino_t)-1)
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct conf {
	int no_flush;
	int uring; /* -o uring: on cellfs's io_uring transport */
} conf;
static const struct fuse_opt conf_opts[] = { /* -o's of CONF */
	{ "no_flush", offsetof(struct conf, no_flush), 1 },
	FLOOR_OPT_URING(struct conf),
	FUSE_OPT_END,
};
static int no_opendir;

static struct node *get(fuse_ino_t ino)
{
	return ino >= 1 && ino <= nnodes ? &nodes[ino - 1] : NULL;
}

/* The slot of (PARENT, NAME), or of where it would go if absent (*FOUND 0). */
static size_t slot(fuse_ino_t parent, const char *name, int *found)
{
	size_t i = floor_hash(parent, name) & table_mask, free_at = SIZE_MAX;
	fuse_ino_t ino;
	for (; (ino = table[i]); i = (i + 1) & table_mask) {
		if (ino == TOMB) {
			if (free_at == SIZE_MAX)
				free_at = i;
		} else if (nodes[ino - 1].parent == parent && !strcmp(nodes[ino - 1].name, name)) {
			*found = 1;
			return i;
		}
	}
	*found = 0;
	return free_at != SIZE_MAX ? free_at : i;
}

static fuse_ino_t find(fuse_ino_t parent, const char *name)
{
	int found;
	size_t i = slot(parent, name, &found);
	return found ? table[i] : 0;
}

static int grow_table(void)
{
	size_t old = table ? table_mask + 1 : 0, size = old ? 2 * old : 1 << 16;
	fuse_ino_t *t = table;
	if (!(table = calloc(size, sizeof(*table)))) {
		table = t;
		return -ENOMEM;
	}
	table_mask = size - 1;
	table_used = 0;
	for (size_t i = 0; i < old; i++)
		if (t[i] && t[i] != TOMB) {
			int found;
			table[slot(nodes[t[i] - 1].parent, nodes[t[i] - 1].name, &found)] = t[i];
			table_used++;
		}
	free(t);
	return 0;
}

static void now(struct timespec *t)
{
	clock_gettime(CLOCK_REALTIME, t);
}

/* A new inode NAME of MODE in PARENT (NULL parent: the root). Returns its number, 0 on ENOMEM. */
static fuse_ino_t add(fuse_ino_t parent, const char *name, mode_t mode)
{
	struct node *n, *p;
	fuse_ino_t ino;
	int found;
	if ((table_used + 1) * 2 > table_mask + 1 && grow_table())
		return 0;
	if (nnodes == ncap) {
		struct node *v = realloc(nodes, (ncap ? 2 * ncap : 1024) * sizeof(*nodes));
		if (!v)
			return 0;
		nodes = v;
		ncap = ncap ? 2 * ncap : 1024;
	}
	n = &nodes[nnodes];
	memset(n, 0, sizeof(*n));
	if (!(n->name = strdup(name)))
		return 0;
	ino = ++nnodes;
	n->st.st_ino = ino;
	n->st.st_mode = mode;
	n->st.st_nlink = S_ISDIR(mode) ? 2 : 1;
	n->st.st_uid = getuid();
	n->st.st_gid = getgid();
	n->st.st_blksize = 4096;
	now(&n->st.st_mtim);
	n->st.st_atim = n->st.st_ctim = n->st.st_mtim;
	n->parent = parent;
	if ((p = get(parent))) {
		table[slot(parent, name, &found)] = ino;
		table_used++;
		n->next = p->kids;
		if (p->kids)
			get(p->kids)->prev = ino;
		p->kids = ino;
		p->nkids++;
		p->st.st_mtim = p->st.st_ctim = n->st.st_mtim;
	}
	n->linked = 1;
	return ino;
}

static void unlink_node(fuse_ino_t ino)
{
	struct node *n = get(ino), *p = get(n->parent);
	int found;
	table[slot(n->parent, n->name, &found)] = TOMB;
	if (n->prev)
		get(n->prev)->next = n->next;
	else
		p->kids = n->next;
	if (n->next)
		get(n->next)->prev = n->prev;
	p->nkids--;
	now(&p->st.st_mtim);
	p->st.st_ctim = p->st.st_mtim;
	n->linked = 0;
	n->st.st_nlink = 0;
}

/* ---- the handlers ---- */

static void fw_init(void *userdata, struct fuse_conn_info *conn)
{
	if (conn->capable & FUSE_CAP_READDIRPLUS)
		conn->want |= FUSE_CAP_READDIRPLUS;
	conn->want &= ~(unsigned)FUSE_CAP_READDIRPLUS_AUTO;
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
	no_opendir = !!(conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT);
}

static void fw_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e = { .entry_timeout = NEG_TIMEOUT };
	fuse_ino_t ino;
	pthread_mutex_lock(&lock);
	if ((ino = find(parent, name)))
		floor_entry(&get(ino)->st, &e);
	pthread_mutex_unlock(&lock);
	fuse_reply_entry(req, &e);
}

static void fw_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;
	struct node *n;
	pthread_mutex_lock(&lock);
	if ((n = get(ino)))
		st = n->st;
	pthread_mutex_unlock(&lock);
	if (n)
		fuse_reply_attr(req, &st, TIMEOUT);
	else
		fuse_reply_err(req, ESTALE);
}

static int resize(struct node *n, size_t size)
{
	if (size > n->cap) {
		size_t cap = n->cap ? n->cap : 64;
		char *d;
		while (cap < size)
			cap *= 2;
		if (!(d = realloc(n->data, cap)))
			return ENOMEM;
		n->data = d;
		n->cap = cap;
	}
	if (size > (size_t)n->st.st_size)
		memset(n->data + n->st.st_size, 0, size - (size_t)n->st.st_size);
	n->st.st_size = (off_t)size;
	n->st.st_blocks = (blkcnt_t)((size + 511) / 512);
	return 0;
}

static void fw_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi)
{
	struct node *n;
	struct stat st;
	int err = 0;
	pthread_mutex_lock(&lock);
	if (!(n = get(ino))) {
		err = ESTALE;
	} else {
		if (to_set & FUSE_SET_ATTR_SIZE)
			err = S_ISREG(n->st.st_mode) ? resize(n, (size_t)attr->st_size) : EISDIR;
		if (to_set & FUSE_SET_ATTR_MTIME)
			n->st.st_mtim = attr->st_mtim;
		if (to_set & FUSE_SET_ATTR_MTIME_NOW)
			now(&n->st.st_mtim);
		if (to_set & FUSE_SET_ATTR_ATIME)
			n->st.st_atim = attr->st_atim;
		if (to_set & FUSE_SET_ATTR_ATIME_NOW)
			now(&n->st.st_atim);
		st = n->st; /* chmod and chown: accepted without effect, as cellfs */
	}
	pthread_mutex_unlock(&lock);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_attr(req, &st, TIMEOUT);
}

static void fw_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (no_opendir) {
		fuse_reply_err(req, ENOSYS);
	} else {
		fi->fh = 0;
		fuse_reply_open(req, fi);
	}
}

/* Entry OFF on: "." and ".." are entries 0 and 1, then the children in list order. */
static void fw_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct node *n;
	char *buf = malloc(size);
	size_t used = 0;
	fuse_ino_t k = 0;
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_mutex_lock(&lock);
	if (!(n = get(ino)) || !S_ISDIR(n->st.st_mode)) {
		pthread_mutex_unlock(&lock);
		free(buf);
		fuse_reply_err(req, n ? ENOTDIR : ESTALE);
		return;
	}
	k = n->kids;
	for (off_t i = 2; i < off && k; i++)
		k = get(k)->next;
	for (off_t i = off; i < 2 + (off_t)n->nkids; i++) {
		struct fuse_entry_param e = { 0 };
		const char *name;
		size_t need;
		if (i < 2) {
			name = i ? ".." : ".";
			e.attr.st_ino = i ? n->parent : ino;
			e.attr.st_mode = S_IFDIR;
		} else {
			name = get(k)->name;
			floor_entry(&get(k)->st, &e);
		}
		need = fuse_add_direntry_plus(req, buf + used, size - used, name, &e, i + 1);
		if (need > size - used)
			break;
		used += need;
		if (i >= 2)
			k = get(k)->next;
	}
	pthread_mutex_unlock(&lock);
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void make(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, struct fuse_file_info *fi)
{
	struct fuse_entry_param e;
	struct node *p;
	fuse_ino_t ino = 0;
	int err = 0;
	pthread_mutex_lock(&lock);
	if (!(p = get(parent)) || !S_ISDIR(p->st.st_mode))
		err = p ? ENOTDIR : ESTALE;
	else if (find(parent, name))
		err = EEXIST;
	else if (!(ino = add(parent, name, mode)))
		err = ENOMEM;
	if (!err) {
		floor_entry(&get(ino)->st, &e);
		if (S_ISDIR(mode))
			get(parent)->st.st_nlink++; /* not P: add() may have moved the nodes */
	}
	pthread_mutex_unlock(&lock);
	if (err) {
		fuse_reply_err(req, err);
	} else if (fi) {
		fi->fh = ino;
		fi->direct_io = 1; /* as cellfs's writable handles */
		fuse_reply_create(req, &e, fi);
	} else {
		fuse_reply_entry(req, &e);
	}
}

static void fw_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	make(req, parent, name, S_IFDIR | (mode & 07777), NULL);
}

static void fw_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, struct fuse_file_info *fi)
{
	make(req, parent, name, S_IFREG | (mode & 07777), fi);
}

static void remove_entry(fuse_req_t req, fuse_ino_t parent, const char *name, int dir)
{
	struct node *n;
	fuse_ino_t ino;
	int err = 0;
	pthread_mutex_lock(&lock);
	if (!(ino = find(parent, name)))
		err = ENOENT;
	else if (dir != !!S_ISDIR((n = get(ino))->st.st_mode))
		err = dir ? ENOTDIR : EISDIR;
	else if (dir && n->nkids)
		err = ENOTEMPTY;
	if (!err) {
		unlink_node(ino);
		if (dir)
			get(parent)->st.st_nlink--;
	}
	pthread_mutex_unlock(&lock);
	fuse_reply_err(req, err);
}

static void fw_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_entry(req, parent, name, 0);
}

static void fw_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_entry(req, parent, name, 1);
}

static void fw_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct node *n;
	int err = 0;
	pthread_mutex_lock(&lock);
	if (!(n = get(ino)))
		err = ESTALE;
	else if (fi->flags & O_TRUNC)
		err = resize(n, 0);
	pthread_mutex_unlock(&lock);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	fi->fh = ino;
	if ((fi->flags & O_ACCMODE) != O_RDONLY)
		fi->direct_io = 1;
	else
		fi->keep_cache = 1;
	fuse_reply_open(req, fi);
}

static void fw_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct node *n;
	char *buf = NULL;
	size_t len = 0;
	pthread_mutex_lock(&lock);
	if ((n = get(ino)) && off >= 0 && off < n->st.st_size) {
		len = (size_t)n->st.st_size - (size_t)off < size ? (size_t)n->st.st_size - (size_t)off : size;
		if ((buf = malloc(len)))
			memcpy(buf, n->data + off, len);
		else
			len = 0;
	}
	pthread_mutex_unlock(&lock);
	fuse_reply_buf(req, buf, len);
	free(buf);
}

static void fw_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct node *n;
	int err = 0;
	pthread_mutex_lock(&lock);
	if (!(n = get(ino)) || off < 0)
		err = n ? EINVAL : ESTALE;
	else if ((size_t)off + size > (size_t)n->st.st_size)
		err = resize(n, (size_t)off + size);
	if (!err) {
		memcpy(n->data + off, buf, size);
		now(&n->st.st_mtim);
		n->st.st_ctim = n->st.st_mtim;
	}
	pthread_mutex_unlock(&lock);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_write(req, size);
}

static void fw_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	fuse_reply_err(req, conf.no_flush ? ENOSYS : 0);
}

static void fw_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	fuse_reply_err(req, 0);
}

static void fw_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	fuse_reply_err(req, strncmp(name, "user.", 5) ? EOPNOTSUPP : ENODATA); /* as cellfs for files */
}

static void fw_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	if (size)
		fuse_reply_buf(req, NULL, 0);
	else
		fuse_reply_xattr(req, 0);
}

static void fw_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size,
			int flags)
{
	fuse_reply_err(req, EOPNOTSUPP); /* as cellfs below a table's directory */
}

static void fw_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv = { .f_bsize = 4096, .f_frsize = 4096, .f_namemax = 255 };
	fuse_reply_statfs(req, &sv);
}

/* FORGET is left to libfuse (no reply; nothing is freed). */
static const struct fuse_lowlevel_ops ops = {
	.init = fw_init,
	.lookup = fw_lookup,
	.getattr = fw_getattr,
	.setattr = fw_setattr,
	.opendir = fw_opendir,
	.readdirplus = fw_readdirplus,
	.mkdir = fw_mkdir,
	.create = fw_create,
	.unlink = fw_unlink,
	.rmdir = fw_rmdir,
	.open = fw_open,
	.read = fw_read,
	.write = fw_write,
	.flush = fw_flush,
	.release = fw_release,
	.getxattr = fw_getxattr,
	.listxattr = fw_listxattr,
	.setxattr = fw_setxattr,
	.statfs = fw_statfs,
};

/* ---- main ---- */

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts opts = { 0 };
	int ret = 1;

	if (fuse_opt_parse(&args, &conf, conf_opts, NULL) == -1 || fuse_parse_cmdline(&args, &opts))
		return 1;
	if (!opts.mountpoint || opts.show_help) {
		fprintf(stderr, "usage: %s MOUNTPOINT [-f] [-s] [-o no_flush] [-o uring]\n", argv[0]);
		goto out;
	}
	if (grow_table() || !add(0, "", S_IFDIR | 0755)) {
		fprintf(stderr, "floorw: out of memory\n");
		goto out;
	}
	if (fuse_opt_add_arg(&args, "-osubtype=floorw,fsname=floorw"))
		goto out;
	ret = floor_serve(&args, &opts, &ops, conf.uring);
out:
	free(opts.mountpoint);
	fuse_opt_free_args(&args);
	return ret ? 1 : 0;
}
