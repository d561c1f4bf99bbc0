/* wops.c — the writing handlers: files written through handles (create, write, truncate, timestamps,
 * write-back on flush and fsync: fileh.c), unlink, mkdir, rmdir, rename (move.c), the schema's extended
 * attributes and the whole names of short forms, and refusals (links, special files). Each handler is
 * split in two: fs_do_x() does the work and returns 0 or a negative errno, fs_x() sends exactly one reply.
 * Each change to the store is one write transaction (edit.c), so a failure leaves the store as it was. */
#include "wops.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "edit.h"
#include "fileh.h"
#include "gone.h"
#include "ident.h"
#include "move.h"
#include "name.h"
#include "req.h"
#include "target.h"
#include "watch.h"
#include "xattr.h"

/* A time set on a file, in µs; -1 if no cell can have it: before 1970 (Bigtable has no negative
 * timestamps, and storing the epoch instead would change it silently) or past int64's µs. */
static int64_t ts_of(const struct timespec *t)
{
	if (t->tv_sec < 0 || t->tv_sec > (INT64_MAX - 999999) / 1000000)
		return -1;
	return (int64_t)t->tv_sec * 1000000 + t->tv_nsec / 1000;
}

static bool is_table_dir(const struct node_id *id)
{
	return id->kind == NODE_DIR && !id->keyn && !id->lead_empty;
}

/* Reply with an entry for ID (named NAME in PARENT) with attributes A; for a create, with H, the handle
 * FI carries, entered among the node's writers (or freed if the entry cannot be made). */
static void reply_new_entry(fuse_req_t req, struct fs *fs, fuse_ino_t parent, const char *name,
			    const struct node_id *id, const struct view_attr *a, struct fuse_file_info *fi,
			    struct fileh *h)
{
	struct fuse_entry_param e = { 0 };
	uint64_t ino;
	int rc = node_ref(&fs->nodes, id, parent, name, &ino);
	if (rc) {
		if (h) { /* a create that cannot be answered: its handle goes */
			if (h->counted_new)
				atomic_fetch_sub(&fs->nnew, 1);
			fileh_free(h);
		}
		req_reply_err(req, -rc);
		return;
	}
	e.ino = ino;
	e.attr_timeout = fs->attr_timeout;
	e.entry_timeout = fs->entry_timeout;
	req_stat(fs, ino, a, &e.attr);
	if (a->dir) {
		struct node n_v, *n = node_get(&fs->nodes, ino, &n_v);
		if (n)
			node_set_flag(n, NODE_MADE);
	}
	if (fi) {
		h->ino = ino;
		node_add_writer(&fs->nodes, ino, h);
		fileh_track(fs, h);
		if (fuse_reply_create(req, &e, fi) == -ENOENT) /* interrupted: the kernel will not forget it */
			node_forget(&fs->nodes, ino, 1); /* (nor release the handle: it stays until exit) */
	} else if (fuse_reply_entry(req, &e) == -ENOENT) {
		node_forget(&fs->nodes, ino, 1);
	}
}

/* After a removal in directory N: the directories the store no longer has (it held nothing else) stay,
 * held by the daemon, until rmdir removes them, as directories do. Returns 0, or, on a store without
 * CS_CAP_TXN, the error of reading whether one is there: on Bigtable the read may have had to send the
 * table's queued unlinks (CS_TXN_DEFER), this one's too, and their failure is then the removal's own
 * (on a store with transactions the removal is committed whatever a read says afterwards). */
static int keep_emptied(struct fs *fs, struct node *n)
{
	struct node up;
	cs_txn *txn;
	int rc = 0;

	while (n && n->ino != FUSE_ROOT_ID && !is_table_dir(&n->id)) { /* (the root: -o only= of a prefix) */
		if (req_txn(fs, &txn) || (rc = view_exists(txn, &n->id)) != 0)
			break;
		if (pending_add(&fs->pending, &n->id, n->parent, n->name, cs_now_us()))
			break;
		n = node_get(&fs->nodes, n->parent, &up);
	}
	return rc < 0 && !(cs_store_caps(fs->st) & CS_CAP_TXN) ? rc : 0;
}

/* ---- files: create, write, flush, fsync ---- */

/* A new file NAME in PARENT, open for writing: *HP its handle (FI carries it), *A its attributes. */
static int fs_do_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
			struct fuse_file_info *fi, struct fileh **hp, struct view_attr *a)
{
	struct fs *fs = req_fs(req);
	struct node p_v, *p = node_get(&fs->nodes, parent, &p_v);
	struct node_id eff = { 0 };
	const struct node_id *dir;
	struct fileh *h = NULL;
	cs_txn *txn;
	int rc;

	if (!p)
		return -ESTALE;
	if (fs->ro)
		return -EROFS;
	if (!S_ISREG(mode))
		return -EPERM;
	if ((rc = req_txn(fs, &txn)) || (rc = req_dir(txn, p, &eff, &dir)))
		goto fail;
	rc = -ENOMEM;
	if (!(h = fileh_alloc()))
		goto fail;
	if ((rc = ident_resolve_new(txn, dir, name, false, &h->id)) < 0)
		goto fail;
	h->unnamed = rc == IDENT_UNNAMED;
	if (dir->kind == NODE_DIR)
		node_set_flag(p, NODE_AS_FAMILY); /* its name is a family's now: see req_dir() */
	if ((rc = target_family(fs, txn, &h->id)) || (rc = target_version_ts(fs, &h->id)))
		goto fail;
	/* A new file starts empty. It may be in the store all the same: a column written only as versions
	 * (its bare name absent, see pending.h) or one the kernel's negative entry was too old for; only in
	 * the second case does it open as an existing file would. */
	if ((rc = fileh_open_write(fs, h, h->id.kind == NODE_COLUMN && pending_col_has(&fs->pending, node_column_ino(&h->id))
						? fi->flags | O_TRUNC : fi->flags)))
		goto fail;
	if (h->id.kind == NODE_VERSION && pending_round_hit(&fs->pending, node_column_ino(&h->id), h->id.ts)) {
		rc = -EINVAL; /* newer than the bare name written at this whole second: see pending.h */
		goto fail;
	}
	if (h->id.kind == NODE_VERSION && (rc = target_versions_only(fs, txn, &h->id)))
		goto fail;
	h->created = true;
	h->counted_new = true;
	atomic_fetch_add(&fs->nnew, 1);
	h->parent = parent;
	*a = (struct view_attr){ .nlink = 1, .size = h->len,
				 .mtime_us = h->id.kind == NODE_VERSION ? h->id.ts : cs_now_us() };
	fi->fh = (uintptr_t)h;
	fi->direct_io = 1;
	*hp = h;
	node_id_free(&eff);
	return 0;
fail:
	fileh_free(h);
	node_id_free(&eff);
	return rc;
}

static void fs_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);
	struct view_attr a;
	struct fileh *h;
	int rc;

	req_count(req, OP_CREATE);
	if ((rc = fs_do_create(req, parent, name, mode, fi, &h, &a)))
		req_reply_err(req, -rc);
	else
		reply_new_entry(req, fs, parent, name, &h->id, &a, fi, h);
	req_txn_idle(fs);
}

static void fs_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct fileh *h = fileh_of(fi);
	int rc;

	req_count(req, OP_WRITE);
	if (!h || !h->writable) {
		fuse_reply_err(req, EBADF);
		return;
	}
	if ((rc = fileh_write(req_fs(req), h, buf, size, off)))
		req_reply_err(req, -rc);
	else
		fuse_reply_write(req, size);
}

static void fs_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);
	struct fileh *h = fileh_of(fi);

	req_count(req, OP_FLUSH);
	req_reply_err(req, h && h->writable ? -fileh_flush(fs, h, true) : 0);
	req_txn_idle(fs); /* (a write-back reads: it forgets the directories the store has now) */
}

static void fs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);
	struct fileh *h = fileh_of(fi);
	int rc = 0;

	req_count(req, OP_FSYNC);
	if (h && h->writable)
		rc = fileh_flush(fs, h, false);
	if (!rc && !fs->ro) /* (a read-only store has nothing to sync: LMDB would say EACCES) */
		rc = cs_store_sync(fs->st);
	req_reply_err(req, -rc);
	req_txn_idle(fs);
}

/* fsync of a directory: what changed it (create, unlink, mkdir, rename) is committed already; sync it all,
 * as the usual write-fsync-rename-fsync(dir) sequence expects of a rename. */
static void fs_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);

	req_count(req, OP_FSYNCDIR);
	fuse_reply_err(req, fs->ro ? 0 : -cs_store_sync(fs->st));
}

/* ---- setattr: size and times ---- */

/* truncate(2) on a path: the value cut or zero-extended to SIZE, written as a new version (or, for
 * Q@TS, that cell rewritten). */
static int truncate_path(struct fs *fs, const struct node_id *id, uint64_t size)
{
	void *buf = NULL, *nb;
	size_t len;
	cs_txn *txn;
	int rc;

	if (size > cs_store_max_value(fs->st))
		return -EFBIG;
	if ((rc = req_txn(fs, &txn)) || (rc = view_read(txn, id, &buf, &len)))
		return rc;
	req_txn_idle(fs);
	if (len == size) {
		free(buf);
		return 0;
	}
	if (!(nb = realloc(buf, size ? size : 1))) {
		free(buf);
		return -ENOMEM;
	}
	if (size > len)
		memset((char *)nb + len, 0, size - len);
	WATCH_OWN(fs, rc, edit_put(fs->st, id, EDIT_TS_NEW, nb, size, -1, fs->strict_schema, NULL, NULL));
	free(nb);
	return rc;
}

/* The size of file N set to SIZE: through H, its writable handle the request came with, or by path. */
static int set_size(struct fs *fs, struct node *n, struct fileh *h, uint64_t size)
{
	if (n->id.kind < NODE_COLUMN)
		return -EISDIR;
	return h ? fileh_truncate(fs, h, size) : truncate_path(fs, &n->id, size);
}

/* The time of file N (inode INO) set to TS (NOW: touch's "now"). futimens() comes without the handle, as
 * utimensat() does: a time set on a file open for writing is its handles' (cp -a, tar and rsync set it
 * before close), and *A, *HAVE get their attributes; else it re-stamps the newest cell. */
static int set_mtime(struct fs *fs, struct node *n, uint64_t ino, int64_t ts, bool now, struct view_attr *a,
		     bool *have)
{
	struct view_attr cur;
	cs_txn *txn;
	int rc;

	/* touch (now) where now is not after the column's newest (in the future, or stamped in this very
	 * millisecond): as a write would, it never moves the column back */
	if (now && n->id.kind == NODE_COLUMN && !req_txn(fs, &txn) && !view_getattr(txn, &n->id, &cur) &&
	    ts <= cur.mtime_us)
		return 0;
	if (n->id.kind == NODE_VERSION)
		return 0; /* a Q@TS is named by its timestamp: nothing to move */
	if ((rc = fileh_set_ts(fs, ino, ts, a))) {
		*have = true;
		return rc < 0 ? rc : 0;
	}
	if (n->id.kind == NODE_COLUMN && !(ts % 1000000))
		pending_round_add(&fs->pending, node_column_ino(&n->id), ts);
	WATCH_OWN(fs, rc, edit_restamp(fs->st, &n->id, ts));
	return rc;
}

/* The attributes of file N (inode INO) after a setattr: its writable handle H's, or (HAVE: in *A already)
 * those of the handles open on it, or the store's, or a held directory's. */
static int attr_now(struct fs *fs, struct node *n, uint64_t ino, struct fileh *h, bool have, struct view_attr *a)
{
	struct node_id eff = { 0 };
	const struct node_id *id;
	int64_t mt;
	cs_txn *txn;
	int rc = 0;

	if (h)
		fileh_attr_of(h, a);
	else if (have || !fileh_attr(fs, ino, a))
		; /* (chmod and the like on a file being written: the handle's) */
	else if ((rc = req_txn(fs, &txn)) || (rc = req_dir(txn, n, &eff, &id)) || (rc = view_getattr(txn, id, a))) {
		if (rc == -ENOENT && (pending_has(&fs->pending, node_ino_of(&n->id), &mt) ||
				      pending_has(&fs->pending, ino, &mt))) {
			*a = (struct view_attr){ .dir = true, .nlink = 2, .mtime_us = mt };
			rc = 0;
		}
	}
	node_id_free(&eff);
	return rc;
}

static int fs_do_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi,
			 struct stat *st)
{
	struct fs *fs = req_fs(req);
	struct node n_v, *n = node_get(&fs->nodes, ino, &n_v);
	struct fileh *h = fileh_of(fi);
	struct view_attr a;
	bool have = false;
	int rc = 0;

	if (!n)
		return -ESTALE;
	if (h && !h->writable)
		h = NULL;
	if (fs->ro && (to_set & (FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW)))
		return -EROFS;
	if ((to_set & FUSE_SET_ATTR_MTIME) && !(to_set & FUSE_SET_ATTR_MTIME_NOW) && n->id.kind >= NODE_COLUMN &&
	    ts_of(&attr->st_mtim) < 0)
		return -EINVAL; /* before 1970: refused before anything else of the request is done */
	if (to_set & FUSE_SET_ATTR_SIZE)
		rc = set_size(fs, n, h, (uint64_t)attr->st_size);
	/* Times: a file's mtime is its cell's timestamp; directory times are derived, so setting them (cp -a,
	 * tar, rsync restore directories' times) succeeds without effect, as chmod and chown do. */
	if (!rc && (to_set & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW)) && n->id.kind >= NODE_COLUMN) {
		bool now = to_set & FUSE_SET_ATTR_MTIME_NOW;
		int64_t t = now ? cs_now_us() / 1000 * 1000 : ts_of(&attr->st_mtim);
		if (!(cs_store_caps(fs->st) & CS_CAP_TS_MICROS))
			t -= t % 1000; /* a store of whole milliseconds keeps times as a coarser filesystem would */
		rc = set_mtime(fs, n, ino, t, now, &a, &have);
	}
	if (!rc)
		rc = attr_now(fs, n, ino, h, have, &a);
	if (!rc)
		req_stat(fs, ino, &a, st);
	return rc;
}

static void fs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);
	struct stat st;
	int rc;

	req_count(req, OP_SETATTR);
	if ((rc = fs_do_setattr(req, ino, attr, to_set, fi, &st)))
		req_reply_err(req, -rc);
	else
		fuse_reply_attr(req, &st, fs->attr_timeout);
	req_txn_idle(fs);
}

/* ---- names: unlink, mkdir, rmdir, rename ---- */

/* Whether NAME is a version's name (Q@TS). */
static bool is_version_name(const char *name)
{
	name_result q;
	int64_t ts;

	return !name_decode_version(name, &q, &ts);
}

/* Unlink file F of the store (by process PID). */
static int unlink_found(struct fs *fs, const struct target_found *f, pid_t pid)
{
	int rc;

	if (f->a.dir)
		return -EISDIR;
	if (f->id.kind == NODE_VERSION && pending_round_hit(&fs->pending, node_column_ino(&f->id), f->id.ts))
		return -EINVAL; /* the bare name's newest, at a whole second it may have been rounded to */
	WATCH_OWN(fs, rc, edit_delete(fs->st, &f->id, true)); /* (queued on Bigtable: fs/bigtable.md) */
	if (rc)
		return rc;
	if (f->id.kind == NODE_COLUMN)
		gone_add(fs, node_column_ino(&f->id), pid); /* (rm -r unlinks its versions next) */
	fileh_mark_removed(fs, node_ino_of(&f->id));
	if (f->id.kind == NODE_VERSION) /* the bare name may show another version now */
		fuse_lowlevel_notify_inval_inode(fs->se, node_column_ino(&f->id), 0, 0);
	return 0;
}

static int fs_do_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs *fs = req_fs(req);
	struct node p_v, *p = node_get(&fs->nodes, parent, &p_v);
	struct node_id eff = { 0 };
	const struct node_id *dir = NULL;
	struct target_found f = { 0 };
	cs_txn *txn;
	int rc;

	if (!p)
		return -ESTALE;
	if (fs->ro)
		return -EROFS;
	if (!(rc = req_txn(fs, &txn)) && !(rc = req_dir(txn, p, &eff, &dir)) &&
	    !(rc = target_find_any(txn, dir, name, &f))) {
		rc = unlink_found(fs, &f, fuse_req_ctx(req)->pid);
	} else if (rc == -ENOENT && dir && !fileh_find_new(fs, txn, dir, name, &f.id)) {
		/* created and not written back yet: its handles go on, and write nothing back (POSIX: the
		 * name is gone, the open file stays until its last close) */
		fileh_mark_removed(fs, node_ino_of(&f.id));
		rc = 0;
	} else if (rc == -ENOENT && dir && dir->kind == NODE_FAMILY && is_version_name(name)) {
		/* The kernel still had this version's name (an UNLINK comes only for a name it looked up),
		 * but its cell is gone: `rm Q` deleted the whole column, as `rm -r` does before it reaches
		 * the Q@TS it listed. Gone as asked: success, or rm -r fails on every older version. */
		rc = 0;
	}
	if (!rc)
		rc = keep_emptied(fs, p);
	node_id_free(&f.id);
	node_id_free(&eff);
	return rc;
}

/* The reply of a request on NAME in PARENT (unlink, rmdir) of kind OP, whose work is DO_FN. */
static void name_common(fuse_req_t req, enum fs_op op, fuse_ino_t parent, const char *name,
			int (*do_fn)(fuse_req_t req, fuse_ino_t parent, const char *name))
{
	struct fs *fs = req_fs(req); /* (REQ is gone once replied to) */

	req_count(req, op);
	req_reply_err(req, -do_fn(req, parent, name));
	req_txn_idle(fs);
}

static void fs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	name_common(req, OP_UNLINK, parent, name, fs_do_unlink);
}

/* mkdir at the top: table NAME, with the delimiter of -o delimiter. */
static int mkdir_table(struct fs *fs, struct node *p, const char *name, struct node_id *id, struct view_attr *a)
{
	cs_table_info *info;
	cs_txn *txn;
	int rc;

	if (cs_check_table_name(name))
		return -EINVAL;
	WATCH_OWN(fs, rc, edit_table_create(fs->st, name, fs->delim));
	if (!rc && !(rc = req_txn(fs, &txn)))
		rc = ident_resolve_new(txn, &p->id, name, true, id);
	if (!rc && !cs_table_info_get(txn, name, &info)) {
		a->mtime_us = info->created;
		cs_table_info_free(info);
	}
	return rc;
}

/* mkdir of an escaped key segment NAME (ID): its name says it is a family's, which is made. */
static int mkdir_family(struct fs *fs, cs_txn *txn, const struct node_id *id, const char *name)
{
	size_t segn = strlen(name) - 2; /* the first byte escaped as %XX */
	char fam[CS_MAX_FAMILY + 1];
	int rc;

	memcpy(fam, id->key + id->keyn - segn, segn);
	fam[segn] = 0;
	if (fs->strict_schema)
		return -EINVAL;
	if ((rc = target_clash(txn, id->table, fam)))
		return rc;
	WATCH_OWN(fs, rc, edit_family_ensure(fs->st, id->table, fam));
	return rc ? rc : req_txn(fs, &txn);
}

/* mkdir below a table: a directory the daemon holds until the store has something in it. */
static int mkdir_held(struct fs *fs, cs_txn *txn, struct node *p, fuse_ino_t parent, const char *name,
		      struct node_id *id, const struct view_attr *a)
{
	struct node_id eff = { 0 }, pid;
	const struct node_id *dir;
	struct view_attr have;
	int64_t pmt;
	int rc;

	if ((rc = req_dir(txn, p, &eff, &dir)) || (rc = ident_resolve_new(txn, dir, name, true, id)) < 0)
		goto out;
	/* EEXIST before anything is made: a refused mkdir changes nothing (not even the family below) */
	if (!view_getattr(txn, id, &have)) {
		rc = -EEXIST;
		goto out;
	}
	if (!pending_lookup(&fs->pending, parent, name, &pid, &pmt)) {
		node_id_free(&pid);
		rc = -EEXIST;
		goto out;
	}
	/* (1: an escaped segment; IDENT_UNNAMED: the directory of the name's own bytes, until named) */
	if (rc == 1 && (rc = mkdir_family(fs, txn, id, name)))
		goto out;
	rc = pending_add(&fs->pending, id, parent, name, a->mtime_us);
out:
	node_id_free(&eff);
	return rc;
}

static int fs_do_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, struct node_id *id, struct view_attr *a)
{
	struct fs *fs = req_fs(req);
	struct node p_v, *p = node_get(&fs->nodes, parent, &p_v);
	cs_txn *txn;
	int rc;

	if (!p)
		return -ESTALE;
	if (fs->ro)
		return -EROFS;
	if ((rc = req_txn(fs, &txn)))
		return rc;
	if (p->id.kind == NODE_ROOT)
		return mkdir_table(fs, p, name, id, a);
	return mkdir_held(fs, txn, p, parent, name, id, a);
}

static void fs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct fs *fs = req_fs(req);
	struct node_id id = { 0 };
	struct view_attr a = { .dir = true, .nlink = 2, .mtime_us = cs_now_us() };
	int rc;

	req_count(req, OP_MKDIR);
	if ((rc = fs_do_mkdir(req, parent, name, &id, &a)))
		req_reply_err(req, -rc);
	else
		reply_new_entry(req, fs, parent, name, &id, &a, NULL, NULL);
	node_id_free(&id);
	req_txn_idle(fs);
}

static int fs_do_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs *fs = req_fs(req);
	struct node p_v, *p = node_get(&fs->nodes, parent, &p_v);
	struct node_id eff = { 0 }, id = { 0 };
	const struct node_id *dir;
	struct target_found f = { 0 };
	int64_t mt;
	cs_txn *txn;
	int rc;

	if (!p)
		return -ESTALE;
	if (fs->ro)
		return -EROFS;
	if (p->id.kind == NODE_ROOT) {
		WATCH_OWN(fs, rc, edit_table_drop_empty(fs->st, name));
		return rc;
	}
	if (!(rc = req_txn(fs, &txn)) && !(rc = req_dir(txn, p, &eff, &dir))) {
		rc = target_find(txn, dir, name, &f);
		if (!rc) /* in the store: a directory there always holds something */
			rc = f.a.dir ? -ENOTEMPTY : -ENOTDIR;
		else if (rc == -ENOENT && !(rc = pending_lookup(&fs->pending, parent, name, &id, &mt)) &&
			 !(rc = target_dir_empty(fs, node_ino_of(&id))))
			pending_remove_entry(&fs->pending, parent, name);
	}
	node_id_free(&f.id);
	node_id_free(&id);
	node_id_free(&eff);
	return rc;
}

static void fs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	name_common(req, OP_RMDIR, parent, name, fs_do_rmdir);
}

static int fs_do_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
			const char *newname, unsigned int flags)
{
	struct fs *fs = req_fs(req);
	struct node p_v, np_v, *p = node_get(&fs->nodes, parent, &p_v), *np = node_get(&fs->nodes, newparent, &np_v);
	int rc;

	if (!p || !np)
		return -ESTALE;
	if (fs->ro)
		return -EROFS;
	if (flags & ~(unsigned)RENAME_NOREPLACE)
		return -EINVAL; /* RENAME_EXCHANGE, RENAME_WHITEOUT */
	if (p->id.kind == NODE_ROOT || np->id.kind == NODE_ROOT) /* tables: renamed in place */
		return p->id.kind != np->id.kind ? -EXDEV : move_table(fs, name, newparent, newname, flags);
	if (!(rc = move_entry(fs, p, parent, name, np, newparent, newname, flags)))
		keep_emptied(fs, p); /* (a rename reports its own errors only) */
	return rc;
}

static void fs_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent, const char *newname,
		      unsigned int flags)
{
	struct fs *fs = req_fs(req); /* (REQ is gone once replied to) */

	req_count(req, OP_RENAME);
	req_reply_err(req, -fs_do_rename(req, parent, name, newparent, newname, flags));
	req_txn_idle(fs);
}

/* ---- what the store cannot hold ---- */

/* mknod of a regular file (GNU tar makes a file so, to set its attributes before its data): a new empty
 * file that, like one created and not yet closed, lives in the daemon (its node's made_us) until it is
 * opened for writing and closed, which writes it as a new file. Its name may be a short form nothing holds
 * (IDENT_UNNAMED): then its whole name must come (setxattr user.cellfs.name) before it is written. */
static int fs_do_mknod(struct fs *fs, struct node *p, const char *name, mode_t mode, struct node_id *id,
		       struct view_attr *a)
{
	struct node_id eff = { 0 };
	const struct node_id *dir;
	struct target_found f = { 0 };
	cs_txn *txn;
	int rc;

	if (!p)
		return -ESTALE;
	if (!S_ISREG(mode))
		return -EPERM; /* fifos, sockets, devices */
	if (fs->ro)
		return -EROFS;
	if ((rc = req_txn(fs, &txn)) || (rc = req_dir(txn, p, &eff, &dir)))
		goto out;
	rc = target_find(txn, dir, name, &f);
	if (!rc && !(f.id.kind == NODE_COLUMN && pending_col_has(&fs->pending, node_column_ino(&f.id)))) {
		rc = -EEXIST; /* (a bare name shown by no listing yet is free: see pending.h) */
		goto out;
	}
	if ((rc && rc != -ENOENT) || (rc = ident_resolve_new(txn, dir, name, false, id)) < 0)
		goto out;
	*a = (struct view_attr){ .nlink = 1, .mtime_us = id->kind == NODE_VERSION ? id->ts : cs_now_us() };
	if (dir->kind == NODE_DIR)
		node_set_flag(p, NODE_AS_FAMILY);
	if ((rc = target_family(fs, txn, id)) || (rc = target_version_ts(fs, id)))
		;
	else if (id->kind == NODE_VERSION && pending_round_hit(&fs->pending, node_column_ino(id), id->ts))
		rc = -EINVAL;
	else if (id->kind == NODE_VERSION)
		rc = target_versions_only(fs, txn, id);
out:
	node_id_free(&f.id);
	node_id_free(&eff);
	return rc;
}

static void fs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	struct fs *fs = req_fs(req);
	struct node p_v;
	struct node_id id = { 0 };
	struct view_attr a;
	int rc;

	req_count(req, OP_MKNOD);
	rc = fs_do_mknod(fs, node_get(&fs->nodes, parent, &p_v), name, mode, &id, &a);
	if (rc) {
		req_reply_err(req, -rc);
	} else {
		struct node n_v, *n;
		reply_new_entry(req, fs, parent, name, &id, &a, NULL, NULL);
		if ((n = node_get(&fs->nodes, node_ino_of(&id), &n_v)))
			node_set_made_us(&fs->nodes, n, a.mtime_us); /* the node answers for it until it is written */
	}
	node_id_free(&id);
	req_txn_idle(fs);
}

static void fs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	req_count(req, OP_SYMLINK);
	fuse_reply_err(req, EPERM);
}

static void fs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	req_count(req, OP_LINK);
	fuse_reply_err(req, EPERM);
}

/* ---- extended attributes: the schema on a table directory, the whole name of a short form ---- */

static int fs_do_setxattr(struct fs *fs, struct node *n, const char *name, const char *value, size_t size,
			  int flags)
{
	int rc;

	if (!n)
		return -ESTALE;
	if (fs->ro)
		return -EROFS;
	if (!strcmp(name, XATTR_NAME) && !is_table_dir(&n->id) && n->ino != FUSE_ROOT_ID)
		return move_name(fs, n, value, size, flags);
	if (!is_table_dir(&n->id) || strncmp(name, "user.cellfs.", 12))
		return -EOPNOTSUPP; /* no other attributes are kept */
	WATCH_OWN(fs, rc, edit_xattr_set(fs->st, n->id.table, name, value, size, flags));
	if (rc == -EPERM && !strncmp(name, XATTR_FAMILY, strlen(XATTR_FAMILY)))
		target_clash_log(n->id.table, name + strlen(XATTR_FAMILY));
	/* the table directory's attributes (listxattr) are asked for again; the families show at once */
	return rc;
}

static void fs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size, int flags)
{
	struct fs *fs = req_fs(req);

	req_count(req, OP_SETXATTR);
	struct node n_v;

	req_reply_err(req, -fs_do_setxattr(fs, node_get(&fs->nodes, ino, &n_v), name, value, size, flags));
	req_txn_idle(fs);
}

static void fs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct fs *fs = req_fs(req);
	struct node n_v, *n = node_get(&fs->nodes, ino, &n_v);

	req_count(req, OP_REMOVEXATTR);
	if (!n)
		fuse_reply_err(req, ESTALE);
	else if (fs->ro)
		fuse_reply_err(req, EROFS);
	else if (strncmp(name, "user.", 5))
		fuse_reply_err(req, EOPNOTSUPP);
	else if (!is_table_dir(&n->id) || strncmp(name, XATTR_FAMILY, strlen(XATTR_FAMILY)))
		fuse_reply_err(req, is_table_dir(&n->id) && !strcmp(name, XATTR_DELIM) ? EPERM : ENODATA);
	else {
		int rc;
		WATCH_OWN(fs, rc, edit_family_drop_empty(fs->st, n->id.table, name + strlen(XATTR_FAMILY)));
		req_reply_err(req, rc == -ENOENT ? ENODATA : -rc);
	}
}

void wops_fill(struct fuse_lowlevel_ops *ops)
{
	ops->create = fs_create;
	ops->write = fs_write;
	ops->flush = fs_flush;
	ops->fsync = fs_fsync;
	ops->fsyncdir = fs_fsyncdir;
	ops->setattr = fs_setattr;
	ops->unlink = fs_unlink;
	ops->mkdir = fs_mkdir;
	ops->rmdir = fs_rmdir;
	ops->rename = fs_rename;
	ops->mknod = fs_mknod;
	ops->symlink = fs_symlink;
	ops->link = fs_link;
	ops->setxattr = fs_setxattr;
	ops->removexattr = fs_removexattr;
}
