/* wops.c — the write handlers: files written through handles (create, write, truncate, timestamps,
 * write-back on flush, fsync and release), unlink, mkdir, rmdir, rename, the schema's extended attributes,
 * and refusals (links, special files). Each handler is one reply; each change to the store is one write
 * transaction (edit.c), so a failure leaves the store as it was.
 *
 * A handle open for writing holds a copy of the value (struct fileh). Writes edit the copy; flush (every
 * close(), dup'd descriptors included), fsync and release write it back as ONE version: the first
 * write-back creates the version, later ones rewrite that same version, and a handle with nothing changed
 * writes nothing. A timestamp set on the handle (futimens, as cp -a, tar and rsync do) becomes the
 * version's timestamp; set on an unchanged handle of an existing file (touch -d) it re-stamps the newest
 * cell instead. Writable handles use direct I/O: the kernel's page cache, shared by every handle on the
 * inode, only ever holds committed values. */
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "edit.h"
#include "ident.h"
#include "name.h"
#include "ops.h"
#include "watch.h"
#include "xattr.h"

#define XA_FAMILY "user.cellfs.family."
#define XA_DELIM "user.cellfs.delimiter"

/* A time set on a file, in µs; -1 if no cell can have it: before 1970 (Bigtable has no negative
 * timestamps, and storing the epoch instead would change it silently) or past int64's µs. */
static int64_t ts_of(const struct timespec *t)
{
	if (t->tv_sec < 0 || t->tv_sec > (INT64_MAX - 999999) / 1000000)
		return -1;
	return (int64_t)t->tv_sec * 1000000 + t->tv_nsec / 1000;
}

static int64_t now_us(void)
{
	return cs_now_us();
}

static bool is_table_dir(const struct node_id *id)
{
	return id->kind == NODE_DIR && !id->keyn && !id->lead_empty;
}

/* RC = CALL, a write of the daemon's own, noted so that the watcher does not drop every cache for it. */
#define OWN(fs, rc, call)                        \
	do {                                     \
		uint64_t v0_ = fs_watch_write_begin(fs);  \
		(rc) = (call);                   \
		fs_watch_write_end((fs), v0_);            \
	} while (0)

struct found {
	struct node_id id;
	struct view_attr a;
	bool ok;
};

static int take_found(void *arg, const char *name, const struct node_id *id, const struct view_attr *a)
{
	struct found *f = arg;
	(void)name;
	if (node_id_copy(&f->id, id))
		return -ENOMEM;
	f->a = *a;
	f->ok = true;
	return 0;
}

/* NAME in directory DIR, in the store: *F gets a copy. Errors: -ENOENT, ... */
static int find_child(cs_txn *txn, const struct node_id *dir, const char *name, struct found *f)
{
	memset(f, 0, sizeof(*f));
	return view_lookup(txn, dir, name, take_found, f);
}

/* A tool's temporary file NAME in family directory DIR (see ident_resolve_new): the column of NAME's own
 * bytes, if it exists. */
static int find_temp(cs_txn *txn, const struct node_id *dir, const char *name, struct found *f)
{
	int rc;
	memset(f, 0, sizeof(*f));
	if ((rc = ident_resolve_new(txn, dir, name, false, &f->id)))
		return rc < 0 ? rc : -ENOENT;
	if ((rc = view_getattr(txn, &f->id, &f->a)))
		node_id_free(&f->id);
	else
		f->ok = true;
	return rc;
}

static int find_child_or_temp(cs_txn *txn, const struct node_id *dir, const char *name, struct found *f)
{
	int rc = find_child(txn, dir, name, f);
	if (rc == -ENOENT && name[0] == '.' && dir->kind == NODE_FAMILY)
		rc = find_temp(txn, dir, name, f);
	return rc;
}

/* Reply with an entry for ID (named NAME in PARENT) with attributes A. */
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
		reply_err(req, -rc);
		return;
	}
	e.ino = ino;
	e.attr_timeout = fs->attr_timeout;
	e.entry_timeout = fs->entry_timeout;
	fill_stat(fs, ino, a, &e.attr);
	if (a->dir) {
		struct node *n = node_get(&fs->nodes, ino);
		if (n)
			n->made = true;
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

/* ---- handles ---- */

int fileh_open_write(struct fs *fs, struct fileh *h, int flags)
{
	struct view_attr a;
	cs_txn *txn;
	int rc;

	if (fs->ro)
		return -EROFS;
	h->writable = true;
	h->append = flags & O_APPEND;
	if ((rc = fs_txn(fs, &txn)))
		return rc;
	if (flags & O_TRUNC) {
		rc = view_getattr(txn, &h->id, &a);
		if (rc == -ENOENT)
			h->created = true;
		else if (rc)
			return rc;
		else
			h->changed = a.size > 0;
		return 0;
	}
	rc = view_read(txn, &h->id, &h->buf, &h->len);
	if (rc == -ENOENT) { /* gone since the kernel looked it up: written back as a new file */
		h->created = true;
		return 0;
	}
	h->cap = h->len;
	return rc;
}

/* Forget the directories above cell ID held by the daemon: the store has them now. */
static void pending_filled(struct fs *fs, const struct node_id *id)
{
	struct node_id d = { .kind = NODE_DIR, .table = id->table, .key = id->key };
	cs_table_info *info;
	cs_txn *txn;
	uint8_t *k;

	if (!fs->pending.count || fs_txn(fs, &txn) || cs_table_info_get(txn, id->table, &info))
		return;
	/* the row's family directory, and the key directory row<delim>family it may have been made as */
	struct node_id f = { .kind = NODE_FAMILY, .table = id->table, .key = id->key, .keyn = id->keyn,
			     .family = id->family };
	pending_remove(&fs->pending, node_ino_of(&f));
	if ((k = malloc(id->keyn + 1 + strlen(id->family)))) {
		memcpy(k, id->key, id->keyn);
		k[id->keyn] = (uint8_t)info->delim;
		memcpy(k + id->keyn + 1, id->family, strlen(id->family));
		d.key = k;
		d.keyn = id->keyn + 1 + strlen(id->family);
		pending_remove(&fs->pending, node_ino_of(&d));
		free(k);
	}
	/* every key directory above the row, and the row's own */
	d.key = id->key;
	for (size_t i = 0; i <= id->keyn; i++) {
		if (i < id->keyn && id->key[i] != (uint8_t)info->delim)
			continue;
		d.keyn = i;
		d.lead_empty = !i;
		pending_remove(&fs->pending, node_ino_of(&d));
	}
	cs_table_info_free(info);
}

int fileh_commit(struct fs *fs, struct fileh *h)
{
	int64_t ts;
	int rc = 0;

	pthread_mutex_lock(&h->lock);
	if (h->too_big && !h->removed) {
		/* (dd past the limit: its first 100 MiB are not the value it meant to write). A version this
		 * handle wrote back before holding nothing (dd's O_TRUNC, flushed when it closed the descriptor
		 * it had dup'd) goes again, so that the column reads what it held before the handle. */
		if (h->id.kind == NODE_COLUMN && h->written_ts >= 0 && h->written_empty) {
			struct node_id v = h->id;
			v.kind = NODE_VERSION;
			v.ts = h->written_ts;
			OWN(fs, rc, edit_delete(fs->st, &v));
			if (rc && rc != -ENOENT)
				goto out;
			h->written_ts = -1;
			fuse_lowlevel_notify_inval_inode(fs->se, column_ino(&h->id), 0, 0);
			fuse_lowlevel_notify_inval_inode(fs->se, h->parent, 0, 0); /* (its Q@TS names) */
		}
		rc = -EFBIG;
		goto out;
	}
	if (h->removed || (!h->changed && h->set_ts < 0 && !(h->created && h->written_ts < 0)))
		goto out; /* nothing to write (or nowhere: an unlinked file's writes go with it) */
	if (h->unnamed) { /* a short form whose bytes never came (user.cellfs.name): close() says so */
		rc = -ENAMETOOLONG;
		goto out;
	}
	if (!h->changed && !h->created && h->written_ts < 0) {
		if (h->id.kind == NODE_COLUMN && !(h->set_ts % 1000000))
			pending_round_add(&fs->pending, column_ino(&h->id), h->set_ts);
		OWN(fs, rc, edit_restamp(fs->st, &h->id, h->set_ts)); /* only a new time: touch -d */
		if (!rc) {
			h->set_ts = -1;
			rc = 1;
		}
		goto out;
	}
	ts = h->set_ts >= 0 ? h->set_ts : h->written_ts >= 0 ? h->written_ts : EDIT_TS_NEW;
	bool in_place = h->written_ts >= 0 && ts == h->written_ts;
	if (h->id.kind == NODE_COLUMN && h->set_ts >= 0 && !(h->set_ts % 1000000))
		pending_round_add(&fs->pending, column_ino(&h->id), h->set_ts);
	OWN(fs, rc, edit_put(fs->st, &h->id, ts, h->buf, h->len, h->written_ts, fs->strict_schema, &ts));
	if (!rc) {
		h->written_ts = ts;
		h->written_empty = !h->len;
		h->set_ts = -1;
		h->changed = false;
		if (h->counted_new) {
			h->counted_new = false;
			atomic_fetch_sub(&fs->nnew, 1);
		}
		pending_filled(fs, &h->id);
		if (fs->ngone)
			gone_drop(fs, column_ino(&h->id));
		if (h->id.kind == NODE_COLUMN)
			pending_col_remove(&fs->pending, column_ino(&h->id));
		else /* the bare name may show this version now */
			fuse_lowlevel_notify_inval_inode(fs->se, column_ino(&h->id), 0, 0);
		rc = in_place ? FILEH_REWROTE : 1;
	}
out:
	pthread_mutex_unlock(&h->lock);
	return rc;
}

static struct fileh *handle_of(struct fuse_file_info *fi)
{
	return fi && fi->fh ? (struct fileh *)(uintptr_t)fi->fh : NULL;
}

/* Make the handle's copy LEN bytes long (zeros where it grows). Called with the lock held. */
static int fileh_resize(struct fs *fs, struct fileh *h, size_t len)
{
	if (len > cs_store_max_value(fs->st))
		return -EFBIG;
	if (len > h->cap) {
		size_t cap = h->cap ? h->cap : 64;
		while (cap < len)
			cap = cap > SIZE_MAX / 2 ? len : cap * 2;
		if (cap > cs_store_max_value(fs->st))
			cap = len;
		void *b = realloc(h->buf, cap);
		if (!b)
			return -ENOMEM;
		h->buf = b;
		h->cap = cap;
	}
	if (len > h->len)
		memset((char *)h->buf + h->len, 0, len - h->len);
	h->len = len;
	return 0;
}

/* A version written (through its Q@TS name) into a column the store does not have yet: the bare name
 * stays absent until written itself (see pending.h). */
static int versions_only(struct fs *fs, cs_txn *txn, const struct node_id *id)
{
	struct node_id c = *id;
	struct view_attr a;
	c.kind = NODE_COLUMN;
	if (view_getattr(txn, &c, &a) != -ENOENT)
		return 0;
	return pending_col_add(&fs->pending, column_ino(id));
}

static bool family_known(cs_txn *txn, const struct node_id *id)
{
	cs_table_info *info;
	bool found = false;
	if (cs_table_info_get(txn, id->table, &info))
		return false;
	for (size_t i = 0; i < info->nfamilies && !found; i++)
		found = !strcmp(info->families[i].name, id->family);
	cs_table_info_free(info);
	return found;
}

/* 0 if family FAMILY of TABLE exists or may be made by a write: -EPERM, logged, if a row key of the table
 * has a segment of that name, whose paths the family would change (they would read %XX-escaped: name.h),
 * so that a path once written never changes its meaning by a later write. */
static int family_clash(cs_txn *txn, const char *table, const char *family)
{
	cs_table_info *info;
	bool found = false;
	int rc;

	if (!cs_table_info_get(txn, table, &info)) {
		for (size_t i = 0; i < info->nfamilies && !found; i++)
			found = !strcmp(info->families[i].name, family);
		cs_table_info_free(info);
	}
	if (found || !(rc = edit_family_clash(txn, table, family)))
		return 0;
	if (rc == 1) {
		fuse_log(FUSE_LOG_ERR, "cellfs: family %s of table %s not made: row keys of the table have a segment "
			 "%s, whose paths would change (cellctl createfamily makes it anyway)\n", family, table, family);
		rc = -EPERM;
	}
	return rc;
}

void fs_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct node *p = node_get(&fs->nodes, parent);
	struct node_id eff = { 0 };
	const struct node_id *dir;
	struct view_attr a = { .nlink = 1 };
	struct fileh *h = NULL;
	cs_txn *txn;
	int rc;

	count_req(req, OP_CREATE);
	if (!p) {
		rc = -ESTALE;
		goto fail;
	}
	if (fs->ro) {
		rc = -EROFS;
		goto fail;
	}
	if (!S_ISREG(mode)) {
		rc = -EPERM;
		goto fail;
	}
	if ((rc = fs_txn(fs, &txn)) || (rc = dir_now(txn, p, &eff, &dir)))
		goto fail;
	rc = -ENOMEM;
	if (!(h = calloc(1, sizeof(*h))))
		goto fail;
	pthread_mutex_init(&h->lock, NULL);
	h->set_ts = h->written_ts = -1;
	if ((rc = ident_resolve_new(txn, dir, name, false, &h->id)) < 0)
		goto fail;
	h->unnamed = rc == IDENT_UNNAMED;
	if (dir->kind == NODE_DIR)
		p->as_family = true; /* its name is a family's now: see dir_now() */
	if (fs->strict_schema && !family_known(txn, &h->id)) {
		rc = -EPERM;
		goto fail;
	}
	if ((rc = family_clash(txn, h->id.table, h->id.family)))
		goto fail;
	/* A new file starts empty. It may be in the store all the same: a column written only as versions
	 * (its bare name absent, see pending.h) or one the kernel's negative entry was too old for; only in
	 * the second case does it open as an existing file would. */
	if ((rc = fileh_open_write(fs, h, h->id.kind == NODE_COLUMN && pending_col_has(&fs->pending, column_ino(&h->id))
						? fi->flags | O_TRUNC : fi->flags)))
		goto fail;
	if (h->id.kind == NODE_VERSION && pending_round_hit(&fs->pending, column_ino(&h->id), h->id.ts)) {
		rc = -EINVAL; /* newer than the bare name written at this whole second: see pending.h */
		goto fail;
	}
	if (h->id.kind == NODE_VERSION && (rc = versions_only(fs, txn, &h->id)))
		goto fail;
	h->created = true;
	h->counted_new = true;
	atomic_fetch_add(&fs->nnew, 1);
	h->parent = parent;
	a.size = h->len;
	a.mtime_us = h->id.kind == NODE_VERSION ? h->id.ts : now_us();
	fi->fh = (uintptr_t)h;
	fi->direct_io = 1;
	node_id_free(&eff);
	reply_new_entry(req, fs, parent, name, &h->id, &a, fi, h);
	txn_idle(fs);
	return;
fail:
	if (h)
		fileh_free(h);
	node_id_free(&eff);
	reply_err(req, -rc);
	txn_idle(fs);
}

void fs_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct fileh *h = handle_of(fi);
	size_t at, len;
	int rc = 0;

	count_req(req, OP_WRITE);
	if (!h || !h->writable) {
		fuse_reply_err(req, EBADF);
		return;
	}
	pthread_mutex_lock(&h->lock);
	at = h->append ? h->len : (size_t)off;
	if (off < 0 || at > SIZE_MAX - size)
		rc = -EFBIG;
	else if (at + size > h->len)
		rc = fileh_resize(fs, h, at + size);
	if (rc == -EFBIG)
		h->too_big = true;
	if (!rc && size) {
		memcpy((char *)h->buf + at, buf, size);
		h->changed = true;
		h->reported = 0; /* new data: the release writes it back even after a failed close() */
	}
	len = h->len;
	pthread_mutex_unlock(&h->lock);
	(void)len;
	if (rc)
		reply_err(req, -rc);
	else
		fuse_reply_write(req, size);
}

/* After a write-back of a version, the directory's listing (a new Q@TS) and times are asked for again
 * (not after a rewrite in place: bash's `echo > f` writes back at its dup'd descriptor's close and again
 * at the real one, same version, same listing). Safe here: close() holds no directory lock, and the
 * directory's cached pages are locked only briefly. */
static int committed(struct fs *fs, struct fileh *h, int rc)
{
	if (rc > 0) {
		if (rc != FILEH_REWROTE)
			fuse_lowlevel_notify_inval_inode(fs->se, h->parent, 0, 0);
		rc = 0;
	}
	h->reported = rc; /* (only this thread's request touches it now: the file's close or fsync) */
	return rc;
}

void fs_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct fileh *h = handle_of(fi);
	count_req(req, OP_FLUSH);
	reply_err(req, h && h->writable ? -committed(fs, h, fileh_commit(fs, h)) : 0);
	txn_idle(fs); /* (a write-back reads: pending_filled()) */
}

void fs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct fileh *h = handle_of(fi);
	int rc = 0;
	count_req(req, OP_FSYNC);
	if (h && h->writable)
		rc = committed(fs, h, fileh_commit(fs, h));
	if (!rc && !fs->ro) /* (a read-only store has nothing to sync: LMDB would say EACCES) */
		rc = cs_store_sync(fs->st);
	reply_err(req, -rc);
	txn_idle(fs);
}

/* fsync of a directory: what changed it (create, unlink, mkdir, rename) is committed already; sync it all,
 * as the usual write-fsync-rename-fsync(dir) sequence expects of a rename. */
void fs_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);

	(void)ino, (void)datasync, (void)fi;
	count_req(req, OP_FSYNCDIR);
	fuse_reply_err(req, fs->ro ? 0 : -cs_store_sync(fs->st));
}

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
	if ((rc = fs_txn(fs, &txn)) || (rc = view_read(txn, id, &buf, &len)))
		return rc;
	txn_idle(fs);
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
	OWN(fs, rc, edit_put(fs->st, id, EDIT_TS_NEW, nb, size, -1, fs->strict_schema, NULL));
	free(nb);
	return rc;
}

/* The attributes a writable handle gives its file. Called with H's lock held. */
static struct view_attr handle_attr(const struct fileh *h)
{
	return (struct view_attr){ .size = h->len, .nlink = h->removed ? 0 : 1,
				   .mtime_us = h->id.kind == NODE_VERSION ? h->id.ts
					       : h->set_ts >= 0	       ? h->set_ts
					       : h->written_ts >= 0       ? h->written_ts
									  : now_us() };
}

struct set_ts {
	struct fs *fs;
	int64_t ts;         /* the time to set, or -1 */
	bool have;
	struct view_attr a; /* the first handle's attributes */
	int rc;             /* of a write-back done at once */
};

/* A time set on a handle becomes its version's when it is next written back. If the handle has written
 * back everything already (the file was closed, its RELEASE not yet come: rsync sets times by name right
 * after close()), that is now: a late write-back from the RELEASE could race a rename of the file. */
static void set_handle_ts(struct fileh *h, void *arg)
{
	struct set_ts *t = arg;
	bool now;
	pthread_mutex_lock(&h->lock);
	if (t->ts >= 0) {
		h->set_ts = t->ts;
		h->reported = 0;
	}
	now = t->ts >= 0 && !h->changed && h->written_ts >= 0 && !h->removed;
	pthread_mutex_unlock(&h->lock);
	if (now) {
		int rc = fileh_commit(t->fs, h);
		if (rc < 0)
			t->rc = rc;
	}
	pthread_mutex_lock(&h->lock);
	if (!t->have || (!t->a.nlink && !h->removed)) /* (a file made again under a removed one's name) */
		t->a = handle_attr(h);
	t->have = true;
	pthread_mutex_unlock(&h->lock);
}

int fileh_attr(struct fs *fs, uint64_t ino, struct view_attr *a)
{
	struct set_ts t = { .fs = fs, .ts = -1 };
	if (!node_foreach_writer(&fs->nodes, ino, set_handle_ts, &t))
		return -ENOENT;
	*a = t.a;
	return 0;
}

void fs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct node *n = node_get(&fs->nodes, ino);
	struct fileh *h = handle_of(fi);
	struct set_ts t = { .fs = fs };
	struct node_id eff = { 0 };
	const struct node_id *id;
	struct view_attr a;
	struct stat st;
	int64_t pend_mtime;
	cs_txn *txn;
	int rc = 0;

	count_req(req, OP_SETATTR);
	if (!n) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	if (h && !h->writable)
		h = NULL;
	if (fs->ro && (to_set & (FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW))) {
		fuse_reply_err(req, EROFS);
		return;
	}
	if ((to_set & FUSE_SET_ATTR_MTIME) && !(to_set & FUSE_SET_ATTR_MTIME_NOW) && n->id.kind >= NODE_COLUMN &&
	    ts_of(&attr->st_mtim) < 0) {
		fuse_reply_err(req, EINVAL); /* before 1970: refused before anything else of the request is done */
		return;
	}
	if (to_set & FUSE_SET_ATTR_SIZE) {
		if (n->id.kind < NODE_COLUMN) {
			rc = -EISDIR;
		} else if (h) {
			pthread_mutex_lock(&h->lock);
			if ((uint64_t)attr->st_size != h->len) {
				rc = fileh_resize(fs, h, (size_t)attr->st_size);
				h->changed = h->changed || !rc;
				if (!rc)
					h->reported = 0;
			}
			pthread_mutex_unlock(&h->lock);
		} else {
			rc = truncate_path(fs, &n->id, (uint64_t)attr->st_size);
		}
	}
	/* Times: a file's mtime is its cell's timestamp; directory times are derived, so setting them (cp -a,
	 * tar, rsync restore directories' times) succeeds without effect, as chmod and chown do. */
	if (!rc && (to_set & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW)) && n->id.kind >= NODE_COLUMN) {
		int64_t ts = to_set & FUSE_SET_ATTR_MTIME_NOW ? now_us() / 1000 * 1000 : ts_of(&attr->st_mtim);
		/* touch (now) where now is not after the column's newest (in the future, or stamped in this
		 * very millisecond): as a write would, it never moves the column back (that was EINVAL, or
		 * EEXIST onto an older version's millisecond) */
		bool keep = (to_set & FUSE_SET_ATTR_MTIME_NOW) && n->id.kind == NODE_COLUMN && !fs_txn(fs, &txn) &&
			    !view_getattr(txn, &n->id, &a) && ts <= a.mtime_us;
		/* futimens() comes without the handle, as utimensat() does: a time set on a file open for
		 * writing is its handles' (cp -a, tar and rsync set it before close) */
		t.ts = ts;
		if (n->id.kind != NODE_VERSION && !keep && /* (a Q@TS is named by its timestamp: nothing to move) */
		    !node_foreach_writer(&fs->nodes, ino, set_handle_ts, &t)) {
			if (n->id.kind == NODE_COLUMN && !(ts % 1000000))
				pending_round_add(&fs->pending, column_ino(&n->id), ts);
			OWN(fs, rc, edit_restamp(fs->st, &n->id, ts));
		}
		if (!rc)
			rc = t.rc;
	}
	if (rc) {
		reply_err(req, -rc);
		return;
	}
	/* The attributes now. */
	if (h) {
		pthread_mutex_lock(&h->lock);
		a = handle_attr(h);
		pthread_mutex_unlock(&h->lock);
	} else if (t.have || (t.ts = -1, node_foreach_writer(&fs->nodes, ino, set_handle_ts, &t))) {
		a = t.a; /* (chmod and the like on a file being written: the handle's) */
	} else if ((rc = fs_txn(fs, &txn)) || (rc = dir_now(txn, n, &eff, &id)) || (rc = view_getattr(txn, id, &a))) {
		if (rc == -ENOENT && (pending_has(&fs->pending, node_ino_of(&n->id), &pend_mtime) ||
				      pending_has(&fs->pending, ino, &pend_mtime))) {
			a = (struct view_attr){ .dir = true, .nlink = 2, .mtime_us = pend_mtime };
			rc = 0;
		}
	}
	node_id_free(&eff);
	txn_idle(fs);
	if (rc) {
		reply_err(req, -rc);
		return;
	}
	fill_stat(fs, ino, &a, &st);
	fuse_reply_attr(req, &st, fs->attr_timeout);
}

/* ---- files created and not written back yet ---- */

struct new_list {
	uint64_t dir;
	struct new_file *v;
	size_t n, cap;
	bool oom;
};

static void collect_new(const struct node *n, void *arg)
{
	struct new_list *l = arg;
	if (n->parent != l->dir || l->oom)
		return;
	for (struct fileh *h = n->writers; h; h = h->next_writer) {
		pthread_mutex_lock(&h->lock);
		bool take = h->created && h->written_ts < 0 && !h->removed;
		struct view_attr a = handle_attr(h);
		pthread_mutex_unlock(&h->lock);
		if (!take)
			continue;
		if (l->n == l->cap) {
			size_t cap = l->cap ? 2 * l->cap : 8;
			struct new_file *v = realloc(l->v, cap * sizeof(*v));
			if (!v) {
				l->oom = true;
				return;
			}
			l->v = v;
			l->cap = cap;
		}
		l->v[l->n].a = a;
		if (!(l->v[l->n].name = strdup(n->name)) || node_id_copy(&l->v[l->n].id, &n->id)) {
			free(l->v[l->n].name);
			l->oom = true;
			return;
		}
		l->n++;
		return; /* one entry per file, whatever its handles */
	}
}

static int by_new_name(const void *a, const void *b)
{
	return strcmp(((const struct new_file *)a)->name, ((const struct new_file *)b)->name);
}

void new_files_free(struct new_file *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		node_id_free(&v[i].id);
	}
	free(v);
}

int new_files(struct fs *fs, uint64_t dir, struct new_file **out, size_t *n)
{
	struct new_list l = { .dir = dir };
	*out = NULL;
	*n = 0;
	if (!atomic_load(&fs->nnew))
		return 0;
	node_foreach(&fs->nodes, collect_new, &l);
	if (l.oom) {
		new_files_free(l.v, l.n);
		return -ENOMEM;
	}
	if (l.n > 1)
		qsort(l.v, l.n, sizeof(*l.v), by_new_name);
	*out = l.v;
	*n = l.n;
	return 0;
}

/* ---- names: unlink, mkdir, rmdir ---- */

/* After a removal in directory N: the directories the store no longer has (it held nothing else) stay,
 * held by the daemon, until rmdir removes them, as directories do. */
static void keep_emptied(struct fs *fs, struct node *n)
{
	struct view_attr a;
	cs_txn *txn;

	while (n && n->id.kind != NODE_ROOT && !is_table_dir(&n->id)) {
		if (fs_txn(fs, &txn) || view_getattr(txn, &n->id, &a) != -ENOENT)
			break;
		if (pending_add(&fs->pending, &n->id, n->parent, n->name, now_us()))
			break;
		n = node_get(&fs->nodes, n->parent);
	}
}

static void mark_removed(struct fileh *h, void *arg)
{
	(void)arg;
	pthread_mutex_lock(&h->lock);
	h->removed = true;
	pthread_mutex_unlock(&h->lock);
}

struct new_probe {
	const struct node_id *id;
	bool found;
};

static void probe_new(struct fileh *h, void *arg)
{
	struct new_probe *q = arg;
	pthread_mutex_lock(&h->lock);
	if (h->created && h->written_ts < 0 && !h->removed && node_id_equal(&h->id, q->id))
		q->found = true;
	pthread_mutex_unlock(&h->lock);
}

/* A file created as NAME in DIR and not written back yet, which only its handles hold: its identity into
 * *ID (owned). Errors: -ENOENT (there is none), as ident_resolve_new(). */
static int find_new(struct fs *fs, cs_txn *txn, const struct node_id *dir, const char *name, struct node_id *id)
{
	struct new_probe q = { .id = id };
	int rc;

	if (!atomic_load(&fs->nnew))
		return -ENOENT;
	if ((rc = ident_resolve_new(txn, dir, name, false, id))) {
		if (rc > 0)
			node_id_free(id);
		return rc < 0 ? rc : -ENOENT;
	}
	node_foreach_writer(&fs->nodes, node_ino_of(id), probe_new, &q);
	if (!q.found) {
		node_id_free(id);
		return -ENOENT;
	}
	return 0;
}

/* Whether NAME is a version's name (Q@TS). */
static bool is_version_name(const char *name)
{
	name_result q;
	int64_t ts;

	return !name_decode_version(name, &q, &ts);
}

void fs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs *fs = fs_of(req);
	struct node *p = node_get(&fs->nodes, parent);
	struct node_id eff = { 0 };
	const struct node_id *dir = NULL;
	struct found f = { 0 };
	cs_txn *txn;
	int rc;

	count_req(req, OP_UNLINK);
	if (!p)
		rc = -ESTALE;
	else if (fs->ro)
		rc = -EROFS;
	else if (!(rc = fs_txn(fs, &txn)) && !(rc = dir_now(txn, p, &eff, &dir)) &&
		 !(rc = find_child_or_temp(txn, dir, name, &f))) {
		if (f.a.dir)
			rc = -EISDIR;
		else if (f.id.kind == NODE_VERSION && pending_round_hit(&fs->pending, column_ino(&f.id), f.id.ts))
			rc = -EINVAL; /* the bare name's newest, at a whole second it may have been rounded to */
		else
			OWN(fs, rc, edit_delete(fs->st, &f.id));
		if (!rc && f.id.kind == NODE_COLUMN)
			gone_add(fs, column_ino(&f.id), fuse_req_ctx(req)->pid); /* (rm -r unlinks its versions next) */
		if (!rc) {
			node_foreach_writer(&fs->nodes, node_ino_of(&f.id), mark_removed, NULL);
			if (f.id.kind == NODE_VERSION) /* the bare name may show another version now */
				fuse_lowlevel_notify_inval_inode(fs->se, column_ino(&f.id), 0, 0);
		}
	} else if (rc == -ENOENT && dir && !find_new(fs, txn, dir, name, &f.id)) {
		/* created and not written back yet: its handles go on, and write nothing back (POSIX: the
		 * name is gone, the open file stays until its last close) */
		node_foreach_writer(&fs->nodes, node_ino_of(&f.id), mark_removed, NULL);
		rc = 0;
	} else if (rc == -ENOENT && dir && dir->kind == NODE_FAMILY && is_version_name(name)) {
		/* The kernel still had this version's name (an UNLINK comes only for a name it looked up),
		 * but its cell is gone: `rm Q` deleted the whole column, as `rm -r` does before it reaches
		 * the Q@TS it listed. Gone as asked: success, or rm -r fails on every older version. */
		rc = 0;
	}
	if (!rc)
		keep_emptied(fs, p);
	node_id_free(&f.id);
	node_id_free(&eff);
	reply_err(req, -rc);
	txn_idle(fs);
}

void fs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct fs *fs = fs_of(req);
	struct node *p = node_get(&fs->nodes, parent);
	struct node_id eff = { 0 }, id = { 0 };
	const struct node_id *dir;
	struct view_attr a = { .dir = true, .nlink = 2, .mtime_us = now_us() };
	cs_txn *txn;
	int rc;

	count_req(req, OP_MKDIR);
	if (!p)
		rc = -ESTALE;
	else if (fs->ro)
		rc = -EROFS;
	else
		rc = fs_txn(fs, &txn);
	if (!rc && p->id.kind == NODE_ROOT) {
		if (cs_check_table_name(name))
			rc = -EINVAL;
		else
			OWN(fs, rc, edit_table_create(fs->st, name, fs->delim));
		if (!rc && !(rc = fs_txn(fs, &txn)))
			rc = ident_resolve_new(txn, &p->id, name, true, &id);
		if (!rc) {
			cs_table_info *info;
			if (!cs_table_info_get(txn, name, &info)) {
				a.mtime_us = info->created;
				cs_table_info_free(info);
			}
		}
	} else if (!rc && !(rc = dir_now(txn, p, &eff, &dir)) && (rc = ident_resolve_new(txn, dir, name, true, &id)) >= 0) {
		struct view_attr have;
		struct node_id pid;
		int64_t pmt;
		bool as_family = rc == 1; /* (IDENT_UNNAMED: the directory of the name's own bytes, until named) */
		rc = 0;
		/* EEXIST before anything is made: a refused mkdir changes nothing (not even the family below) */
		if (!view_getattr(txn, &id, &have)) {
			rc = -EEXIST;
		} else if (!pending_lookup(&fs->pending, parent, name, &pid, &pmt)) {
			node_id_free(&pid);
			rc = -EEXIST;
		} else if (as_family) { /* an escaped segment says its name is a family's: make that family */
			size_t segn = strlen(name) - 2; /* the first byte escaped as %XX */
			char fam[CS_MAX_FAMILY + 1];
			memcpy(fam, id.key + id.keyn - segn, segn);
			fam[segn] = 0;
			if (fs->strict_schema)
				rc = -EINVAL;
			else if (!(rc = family_clash(txn, id.table, fam)))
				OWN(fs, rc, edit_family_ensure(fs->st, id.table, fam));
			if (!rc)
				rc = fs_txn(fs, &txn);
		}
		if (!rc)
			rc = pending_add(&fs->pending, &id, parent, name, a.mtime_us);
	}
	if (rc)
		reply_err(req, -rc);
	else
		reply_new_entry(req, fs, parent, name, &id, &a, NULL, NULL);
	node_id_free(&id);
	node_id_free(&eff);
	txn_idle(fs);
}

void fs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs *fs = fs_of(req);
	struct node *p = node_get(&fs->nodes, parent);
	struct node_id eff = { 0 }, id = { 0 };
	const struct node_id *dir;
	struct found f = { 0 };
	int64_t mt;
	cs_txn *txn;
	int rc;

	count_req(req, OP_RMDIR);
	if (!p)
		rc = -ESTALE;
	else if (fs->ro)
		rc = -EROFS;
	else if (p->id.kind == NODE_ROOT)
		OWN(fs, rc, edit_table_drop_empty(fs->st, name));
	else if (!(rc = fs_txn(fs, &txn)) && !(rc = dir_now(txn, p, &eff, &dir))) {
		rc = find_child(txn, dir, name, &f);
		if (!rc) /* in the store: a directory there always holds something */
			rc = f.a.dir ? -ENOTEMPTY : -ENOTDIR;
		else if (rc == -ENOENT && !(rc = pending_lookup(&fs->pending, parent, name, &id, &mt)))
		{
			struct new_file *nf;
			size_t nn = 0;
			rc = new_files(fs, node_ino_of(&id), &nf, &nn);
			if (!rc && (nn || pending_has_children(&fs->pending, node_ino_of(&id))))
				rc = -ENOTEMPTY; /* (a file being written counts: it is there) */
			else if (!rc)
				pending_remove_entry(&fs->pending, parent, name);
			new_files_free(nf, nn);
		}
	}
	node_id_free(&f.id);
	node_id_free(&id);
	node_id_free(&eff);
	reply_err(req, -rc);
	txn_idle(fs);
}

/* ---- rename ---- */

#define MOVE_MAX_CELLS 100000 /* a directory rename moves at most this many cells, else EXDEV (mv copies) */

/* What a rename moved, to rewrite the identities the daemon holds (node_rewrite): a table, a key subtree
 * of a table, or one file. */
struct move {
	enum { MOVE_TABLE, MOVE_KEYS, MOVE_FILE } kind;
	const char *table, *to_table; /* MOVE_TABLE: from, to; MOVE_KEYS: the table */
	const uint8_t *from, *to;     /* MOVE_KEYS */
	size_t fromn, ton;
	char delim;
	const struct node_id *ffrom, *fto; /* MOVE_FILE */
};

/* The identity ID becomes after the move M, into *OUT (owned); false if M does not touch it. */
static bool moved_id(const struct node_id *id, const struct move *m, struct node_id *out)
{
	struct node_id t = *id;
	uint8_t *k = NULL;
	bool ok;

	if (id->kind == NODE_ROOT)
		return false;
	switch (m->kind) {
	case MOVE_FILE:
		return node_id_equal(id, m->ffrom) && !node_id_copy(out, m->fto);
	case MOVE_TABLE:
		if (strcmp(id->table, m->table))
			return false;
		t.table = m->to_table;
		return !node_id_copy(out, &t);
	case MOVE_KEYS:
		if (strcmp(id->table, m->table) || id->keyn < m->fromn || memcmp(id->key, m->from, m->fromn) ||
		    (id->keyn > m->fromn && id->key[m->fromn] != (uint8_t)m->delim))
			return false;
		if (!(k = malloc(m->ton + id->keyn - m->fromn + 1)))
			return false;
		memcpy(k, m->to, m->ton);
		memcpy(k + m->ton, id->key + m->fromn, id->keyn - m->fromn);
		t.key = k;
		t.keyn = m->ton + id->keyn - m->fromn;
		t.lead_empty = false;
		ok = !node_id_copy(out, &t);
		free(k);
		return ok;
	}
	return false;
}

static bool move_node(struct node_id *id, void *arg)
{
	struct node_id nid;
	if (!moved_id(id, arg, &nid))
		return false;
	node_id_free(id);
	*id = nid;
	return true;
}

static void move_writer(struct fileh *h, const struct node_id *id, void *arg)
{
	struct node_id nid;
	pthread_mutex_lock(&h->lock);
	if (!node_id_copy(&nid, id)) {
		node_id_free(&h->id);
		h->id = nid;
	}
	pthread_mutex_unlock(&h->lock);
}

/* A rename of file FROM onto short-form name NEWNAME that nothing holds (TO, the column of the name's own
 * bytes): TO gets the whole name FROM was given (user.cellfs.name on a tool's temporary file, as rsync -X
 * sets it before its rename), if NEWNAME is its short form. Errors: -ENAMETOOLONG (no such name: the
 * file cannot be stored under NEWNAME), -ENOMEM. */
static int whole_name_of(struct fs *fs, cs_txn *txn, const struct node_id *from, const char *newname,
			 struct node_id *to)
{
	char want[NAME_BUFSZ];
	uint8_t *b;
	size_t n;
	int rc = node_fullname(&fs->nodes, node_ino_of(from), &b, &n);

	if (rc)
		return rc == -ENOENT ? -ENAMETOOLONG : rc;
	if (ident_part_name(txn, to, b, n, want) < 0 || strcmp(want, newname)) {
		free(b);
		return -ENAMETOOLONG;
	}
	free((void *)to->qual);
	to->qual = b;
	to->qualn = n;
	return 0;
}

/* Whether a file may be written as TO (a rename's target): its family known under -o strict_schema, not
 * one whose making would rename key segments; a version noted as such (versions_only). */
static int file_target(struct fs *fs, cs_txn *txn, const struct node_id *to)
{
	int rc;

	if (fs->strict_schema && !family_known(txn, to))
		return -EPERM;
	if ((rc = family_clash(txn, to->table, to->family)))
		return rc;
	return to->kind == NODE_VERSION ? versions_only(fs, txn, to) : 0;
}

/* A file onto a file name of the same table. */
static int rename_file(struct fs *fs, cs_txn *txn, struct found *f, const struct node_id *ndir, struct node *np,
		       const char *newname, unsigned int flags, struct move *m, struct node_id *to)
{
	struct found t = { 0 };
	int rc, ex;

	if ((rc = ident_resolve_new(txn, ndir, newname, false, to)) < 0)
		return rc;
	if (rc == IDENT_UNNAMED && (rc = whole_name_of(fs, txn, &f->id, newname, to)))
		return rc;
	ex = find_child(txn, ndir, newname, &t);
	node_id_free(&t.id);
	if (!ex && t.a.dir)
		return -EISDIR;
	if (!ex && (flags & RENAME_NOREPLACE))
		return -EEXIST;
	if (strcmp(to->table, f->id.table))
		return -EXDEV;
	if ((rc = file_target(fs, txn, to)))
		return rc;
	OWN(fs, rc, edit_move(fs->st, &f->id, to, fs->strict_schema));
	if (rc)
		return rc;
	if (to->kind == NODE_COLUMN)
		pending_col_remove(&fs->pending, column_ino(to));
	if (ndir->kind == NODE_DIR)
		np->as_family = true;
	*m = (struct move){ .kind = MOVE_FILE, .ffrom = &f->id, .fto = to };
	return 0;
}

/* A file created and not written back yet (FROM: only its handles hold it) onto a file name: its handles
 * follow (node_rewrite), so that their write-back lands under the new name; nothing changes in the store
 * until then. A file of the store at the new name gets that write-back as its new version, as rename_file
 * makes the source's cell one; another such new file there is removed. */
static int rename_new(struct fs *fs, cs_txn *txn, const struct node_id *from, const struct node_id *ndir,
		      struct node *np, const char *newname, unsigned int flags, struct move *m, struct node_id *to)
{
	struct found t = { 0 };
	struct node_id other;
	bool other_new = false;
	int rc, ex;

	if ((rc = ident_resolve_new(txn, ndir, newname, false, to)))
		return rc < 0 ? rc : -EPERM;
	ex = find_child(txn, ndir, newname, &t);
	node_id_free(&t.id);
	if (!ex && t.a.dir)
		return -EISDIR;
	if (ex == -ENOENT && !find_new(fs, txn, ndir, newname, &other)) {
		node_id_free(&other);
		ex = 0;
		other_new = !node_id_equal(from, to);
	}
	if (!ex && (flags & RENAME_NOREPLACE))
		return -EEXIST;
	if ((rc = file_target(fs, txn, to)))
		return rc;
	if (other_new) /* another new file there: replaced, its handles write nothing back */
		node_foreach_writer(&fs->nodes, node_ino_of(to), mark_removed, NULL);
	if (ndir->kind == NODE_DIR)
		np->as_family = true;
	*m = (struct move){ .kind = MOVE_FILE, .ffrom = from, .fto = to };
	return 0;
}

/* A key directory (a row-key prefix) onto a new name among key directories of the same table. */
static int rename_keydir(struct fs *fs, cs_txn *txn, struct found *f, const struct node_id *ndir, uint64_t newparent,
			 const char *newname, struct move *m, struct node_id *to)
{
	cs_table_info *info;
	struct view_attr a;
	cs_txn *w;
	int64_t mt;
	int rc;

	if ((rc = ident_resolve_new(txn, ndir, newname, true, to)) && rc != IDENT_UNNAMED)
		return rc == 1 ? -EXDEV : rc; /* (a family to make first: mv copies, through mkdir) */
	if (to->kind != NODE_DIR || strcmp(to->table, f->id.table) || !f->id.keyn || !to->keyn)
		return -EXDEV;
	if ((rc = cs_table_info_get(txn, to->table, &info)))
		return rc;
	*m = (struct move){ .kind = MOVE_KEYS, .table = to->table, .from = f->id.key, .fromn = f->id.keyn,
			    .to = to->key, .ton = to->keyn, .delim = info->delim };
	cs_table_info_free(info);
	if (!view_getattr(txn, to, &a))
		return -ENOTEMPTY; /* the store's directories are never empty */
	if (pending_under(&fs->pending, f->id.table, f->id.key, f->id.keyn, m->delim))
		return -EXDEV; /* empty directories below: mv copies them */
	if (pending_has(&fs->pending, node_ino_of(to), &mt) && pending_has_children(&fs->pending, node_ino_of(to)))
		return -ENOTEMPTY;
	uint64_t v0 = fs_watch_write_begin(fs);
	if (!(rc = cs_txn_begin(fs->st, 0, &w))) {
		rc = cs_move_prefix(w, to->table, (cs_bytes){ f->id.key, f->id.keyn }, (cs_bytes){ to->key, to->keyn },
				    MOVE_MAX_CELLS, NULL);
		if (rc)
			cs_txn_abort(w);
		else
			rc = cs_txn_commit(w);
	}
	fs_watch_write_end(fs, v0);
	if (!rc)
		pending_remove(&fs->pending, node_ino_of(to)); /* an empty directory replaced */
	(void)newparent;
	return rc;
}

/* Whether directory TO (named NEWNAME in NEWPARENT) may be replaced by a directory renamed onto it: 0 if
 * it is not there or empty; -ENOTEMPTY if it holds something (the store's directories always do: a row
 * cannot be empty), -ENOTDIR if the store has a file there. */
static int dir_target_empty(struct fs *fs, cs_txn *txn, const struct node_id *to, uint64_t newparent,
			    const char *newname)
{
	struct node_id tid;
	struct view_attr a;
	struct new_file *nf;
	size_t nn = 0;
	int64_t mt;
	int rc = view_getattr(txn, to, &a);

	if (rc != -ENOENT)
		return rc ? rc : a.dir ? -ENOTEMPTY : -ENOTDIR;
	if ((rc = pending_lookup(&fs->pending, newparent, newname, &tid, &mt)))
		return rc == -ENOENT ? 0 : rc;
	rc = new_files(fs, node_ino_of(&tid), &nf, &nn);
	if (!rc && (nn || pending_has_children(&fs->pending, node_ino_of(&tid))))
		rc = -ENOTEMPTY; /* (a file being written counts: it is there) */
	new_files_free(nf, nn);
	node_id_free(&tid);
	return rc;
}

void fs_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent, const char *newname,
	       unsigned int flags)
{
	struct fs *fs = fs_of(req);
	struct node *p = node_get(&fs->nodes, parent), *np = node_get(&fs->nodes, newparent);
	struct node_id eff = { 0 }, neff = { 0 }, to = { 0 }, pid = { 0 };
	const struct node_id *dir, *ndir;
	struct found f = { 0 };
	struct move m = { .kind = MOVE_FILE };
	bool moved = false;
	int64_t mt;
	cs_txn *txn;
	int rc;

	count_req(req, OP_RENAME);
	if (!p || !np)
		rc = -ESTALE;
	else if (fs->ro)
		rc = -EROFS;
	else if (flags & ~(unsigned)RENAME_NOREPLACE)
		rc = -EINVAL; /* RENAME_EXCHANGE, RENAME_WHITEOUT */
	else if (p->id.kind == NODE_ROOT || np->id.kind == NODE_ROOT) {
		/* tables: renamed in place, cells and schema kept */
		if (p->id.kind != np->id.kind)
			rc = -EXDEV;
		else if (cs_check_table_name(newname))
			rc = -EINVAL;
		else {
			cs_txn *w;
			uint64_t v0 = fs_watch_write_begin(fs);
			if (!(rc = cs_txn_begin(fs->st, 0, &w))) {
				rc = cs_table_rename(w, name, newname);
				if (rc == -EEXIST && !(flags & RENAME_NOREPLACE)) { /* rename(2) replaces an empty directory */
					int any = edit_any_cell(w, newname, NULL);
					rc = any == 1 ? -ENOTEMPTY : any ? any : cs_table_delete(w, newname);
					if (!rc)
						rc = cs_table_rename(w, name, newname);
				}
				if (rc)
					cs_txn_abort(w);
				else
					rc = cs_txn_commit(w);
			}
			fs_watch_write_end(fs, v0);
			if (rc == -EEXIST && !(flags & RENAME_NOREPLACE))
				rc = -ENOTEMPTY; /* (mv: "Directory not empty") */
			m = (struct move){ .kind = MOVE_TABLE, .table = name, .to_table = newname };
			moved = !rc;
		}
	} else if (!(rc = fs_txn(fs, &txn)) && !(rc = dir_now(txn, p, &eff, &dir)) &&
		   !(rc = dir_now(txn, np, &neff, &ndir))) {
		rc = find_child(txn, dir, name, &f);
		if (rc == -ENOENT && name[0] == '.' && dir->kind == NODE_FAMILY)
			rc = find_temp(txn, dir, name, &f); /* a tool's temporary file, by its own bytes */
		if (!rc && !f.a.dir) {
			rc = rename_file(fs, txn, &f, ndir, np, newname, flags, &m, &to);
		} else if (!rc && f.id.kind == NODE_DIR) {
			rc = rename_keydir(fs, txn, &f, ndir, newparent, newname, &m, &to);
		} else if (!rc) {
			rc = -EXDEV; /* a family's directory: mv copies */
		} else if (rc == -ENOENT && !(rc = pending_lookup(&fs->pending, parent, name, &pid, &mt))) {
			/* an empty directory made through the mount: it moves where the kernel moves it */
			uint64_t ino = node_ino_of(&pid);
			if (pending_has_children(&fs->pending, ino))
				rc = -EXDEV;
			else if ((rc = ident_resolve_new(txn, ndir, newname, true, &to)) == 1)
				rc = -EXDEV;
			else if (rc >= 0 && (rc = dir_target_empty(fs, txn, &to, newparent, newname)))
				; /* rename(2) replaces only an empty directory */
			else if (!rc) {
				pending_remove_entry(&fs->pending, parent, name);
				if ((rc = pending_add(&fs->pending, &to, newparent, newname, mt)))
					pending_add(&fs->pending, &pid, parent, name, mt); /* as it was */
				m = (struct move){ .kind = MOVE_FILE, .ffrom = &pid, .fto = &to };
			}
		} else if (rc == -ENOENT && !(rc = find_new(fs, txn, dir, name, &f.id))) {
			rc = rename_new(fs, txn, &f.id, ndir, np, newname, flags, &m, &to);
		}
		moved = !rc;
	}
	if (moved) {
		uint64_t ino = m.kind == MOVE_FILE ? node_ino_of(m.ffrom) : node_ino_of(&f.id);
		if (m.kind == MOVE_TABLE) {
			struct node_id t = { .kind = NODE_DIR, .table = name, .key = (const uint8_t *)"" };
			ino = node_ino_of(&t);
		}
		node_rewrite(&fs->nodes, move_node, move_writer, &m);
		node_moved(&fs->nodes, ino, newparent, newname);
		if (m.kind != MOVE_TABLE)
			keep_emptied(fs, p);
	}
	node_id_free(&f.id);
	node_id_free(&to);
	node_id_free(&pid);
	node_id_free(&eff);
	node_id_free(&neff);
	reply_err(req, -rc);
	txn_idle(fs);
}

/* ---- what the store cannot hold ---- */

/* mknod of a regular file (GNU tar makes a file so, to set its attributes before its data): a new empty
 * file that, like one created and not yet closed, lives in the daemon (its node's made_us) until it is
 * opened for writing and closed, which writes it as a new file. Its name may be a short form nothing holds
 * (IDENT_UNNAMED): then its whole name must come (fs_setxattr) before it is written. */
static int fs_do_mknod(struct fs *fs, struct node *p, const char *name, mode_t mode, struct node_id *id,
		       struct view_attr *a)
{
	struct node_id eff = { 0 };
	const struct node_id *dir;
	struct found f = { 0 };
	cs_txn *txn;
	int rc;

	if (!p)
		return -ESTALE;
	if (!S_ISREG(mode))
		return -EPERM; /* fifos, sockets, devices */
	if (fs->ro)
		return -EROFS;
	if ((rc = fs_txn(fs, &txn)) || (rc = dir_now(txn, p, &eff, &dir)))
		goto out;
	rc = find_child(txn, dir, name, &f);
	if (!rc && !(f.id.kind == NODE_COLUMN && pending_col_has(&fs->pending, column_ino(&f.id)))) {
		rc = -EEXIST; /* (a bare name shown by no listing yet is free: see pending.h) */
		goto out;
	}
	if (rc && rc != -ENOENT)
		goto out;
	if ((rc = ident_resolve_new(txn, dir, name, false, id)) < 0)
		goto out;
	rc = 0;
	*a = (struct view_attr){ .nlink = 1, .mtime_us = id->kind == NODE_VERSION ? id->ts : now_us() };
	if (dir->kind == NODE_DIR)
		p->as_family = true;
	if (fs->strict_schema && !family_known(txn, id))
		rc = -EPERM;
	else if ((rc = family_clash(txn, id->table, id->family)))
		;
	else if (id->kind == NODE_VERSION && pending_round_hit(&fs->pending, column_ino(id), id->ts))
		rc = -EINVAL;
	else if (id->kind == NODE_VERSION)
		rc = versions_only(fs, txn, id);
out:
	node_id_free(&f.id);
	node_id_free(&eff);
	return rc;
}

void fs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	struct fs *fs = fs_of(req);
	struct node_id id = { 0 };
	struct view_attr a;
	int rc;

	(void)rdev;
	count_req(req, OP_MKNOD);
	rc = fs_do_mknod(fs, node_get(&fs->nodes, parent), name, mode, &id, &a);
	if (rc) {
		reply_err(req, -rc);
	} else {
		struct node *n;
		reply_new_entry(req, fs, parent, name, &id, &a, NULL, NULL);
		if ((n = node_get(&fs->nodes, node_ino_of(&id))))
			n->made_us = a.mtime_us; /* the node answers for it until it is written */
	}
	node_id_free(&id);
	txn_idle(fs);
}

void fs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	count_req(req, OP_SYMLINK);
	fuse_reply_err(req, EPERM);
}

void fs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	count_req(req, OP_LINK);
	fuse_reply_err(req, EPERM);
}

/* ---- the schema as extended attributes of the table directory ---- */

/* 0 if FAMILY of TABLE has value type TYPE; -ENOENT if there is no such family; -EINVAL if it has another
 * type (a family's type is fixed when it is made: a restore onto a plain family is refused, not merged). */
static int family_type_is(cs_txn *txn, const char *table, const char *family, cs_value_type type)
{
	cs_table_info *info;
	int rc = cs_table_info_get(txn, table, &info);
	if (rc)
		return rc;
	rc = -ENOENT;
	for (size_t i = 0; i < info->nfamilies; i++)
		if (!strcmp(info->families[i].name, family))
			rc = info->families[i].type == type ? 0 : -EINVAL;
	cs_table_info_free(info);
	return rc;
}

/* ---- the whole name of an entry named in short form (user.cellfs.name, see xattr.h) ---- */

static void name_writer(struct fileh *h, const struct node_id *id, void *arg)
{
	struct node_id nid;
	(void)arg;
	pthread_mutex_lock(&h->lock);
	if (!node_id_copy(&nid, id)) {
		node_id_free(&h->id);
		h->id = nid;
		h->unnamed = false;
	}
	pthread_mutex_unlock(&h->lock);
}

static bool name_pending(struct node_id *id, void *arg)
{
	return move_node(id, arg);
}

/* After directory FROM was named TO (its rows moved): columns below it written only as versions (pending.h)
 * stay so under their new identities. */
static void name_cols_follow(struct fs *fs, const struct node_id *from, const struct node_id *to, char delim)
{
	cs_read_opts o = { .prefix = { to->key, to->keyn }, .keys_only = true, .cells_per_column = 1 };
	const cs_row *r;
	cs_scan *sc;
	cs_txn *txn;
	uint8_t *k;

	if (!fs->pending.ncols || fs_txn(fs, &txn) || cs_scan_open(txn, to->table, &o, &sc))
		return;
	while (cs_scan_next(sc, &r) == 1) {
		size_t rest = r->key.len - to->keyn;
		if (rest && ((const uint8_t *)r->key.data)[to->keyn] != (uint8_t)delim)
			continue;
		if (!(k = malloc(from->keyn + rest + 1)))
			break;
		memcpy(k, from->key, from->keyn);
		memcpy(k + from->keyn, (const uint8_t *)r->key.data + to->keyn, rest);
		for (size_t i = 0; i < r->ncells; i++) {
			struct node_id c = { .kind = NODE_COLUMN, .table = to->table, .key = k, .keyn = from->keyn + rest,
					     .family = r->cells[i].family, .qual = r->cells[i].qualifier.data,
					     .qualn = r->cells[i].qualifier.len };
			if (!pending_col_has(&fs->pending, column_ino(&c)))
				continue;
			pending_col_remove(&fs->pending, column_ino(&c));
			c.key = r->key.data;
			c.keyn = r->key.len;
			pending_col_add(&fs->pending, column_ino(&c));
		}
		free(k);
	}
	cs_scan_close(sc);
}

/* Node N (a key directory, a column or a version) is given the whole name B (BN bytes). Its own name
 * already: nothing to do. A tool's temporary file keeps B for its rename onto B's short form
 * (whole_name_of). An entry made with a short-form name nothing held (standing for the name's own bytes,
 * ident_resolve_new) becomes B if the name is B's short form: a directory's rows move to their key (one
 * transaction), a file not yet written is named (its handles write it back under B). Errors: -EINVAL (N
 * is named otherwise: B is not what its name stands for), -EEXIST (XATTR_CREATE, or B's directory holds
 * rows already), -ENAMETOOLONG (the row key would pass CS_MAX_ROW_KEY, a qualifier CS_MAX_QUALIFIER),
 * -EOPNOTSUPP (a family directory), store errors. */
static int name_set(struct fs *fs, struct node *n, const void *b, size_t bn, int flags)
{
	char want[NAME_BUFSZ];
	struct node_id from = { 0 }, to = { 0 };
	struct move m;
	const uint8_t *cur;
	size_t curn, litn;
	uint8_t *key = NULL;
	struct view_attr a;
	cs_txn *txn;
	int rc;

	if ((rc = fs_txn(fs, &txn)))
		return rc;
	if ((rc = ident_part(txn, &n->id, &cur, &curn)))
		return rc == -EINVAL ? -EOPNOTSUPP : rc;
	if (curn == bn && !memcmp(cur, b, bn))
		return flags & XATTR_CREATE ? -EEXIST : 0;
	if (flags & XATTR_REPLACE)
		return -ENODATA;
	if (n->id.kind != NODE_DIR && n->name[0] == '.' && curn == strlen(n->name) && !memcmp(cur, n->name, curn))
		return bn > CS_MAX_QUALIFIER ? -ENAMETOOLONG : node_set_fullname(&fs->nodes, n->ino, b, bn);
	if ((rc = ident_part_name(txn, &n->id, b, bn, want)) < 0)
		return rc;
	litn = n->id.kind == NODE_VERSION && strrchr(n->name, '@') ? (size_t)(strrchr(n->name, '@') - n->name)
								    : strlen(n->name);
	if (strcmp(want, n->name) || curn != litn || memcmp(cur, n->name, litn))
		return -EINVAL;
	if ((rc = node_id_copy(&from, &n->id)))
		return rc;
	to = from;
	if (n->id.kind == NODE_DIR) {
		size_t pre = from.keyn - curn;
		cs_table_info *info;
		if (pre + bn > CS_MAX_ROW_KEY) {
			rc = -ENAMETOOLONG;
			goto out;
		}
		if (!(key = malloc(pre + bn + 1))) {
			rc = -ENOMEM;
			goto out;
		}
		memcpy(key, from.key, pre);
		memcpy(key + pre, b, bn);
		to.key = key;
		to.keyn = pre + bn;
		if ((rc = cs_table_info_get(txn, from.table, &info)))
			goto out;
		m = (struct move){ .kind = MOVE_KEYS, .table = from.table, .from = from.key, .fromn = from.keyn,
				   .to = to.key, .ton = to.keyn, .delim = info->delim };
		cs_table_info_free(info);
		if (!view_getattr(txn, &from, &a)) { /* rows were written under the name's own bytes */
			cs_txn *w;
			uint64_t v0 = fs_watch_write_begin(fs);
			if (!(rc = cs_txn_begin(fs->st, 0, &w))) {
				rc = cs_move_prefix(w, from.table, (cs_bytes){ from.key, from.keyn },
						    (cs_bytes){ to.key, to.keyn }, 0, NULL);
				if (rc)
					cs_txn_abort(w);
				else
					rc = cs_txn_commit(w);
			}
			fs_watch_write_end(fs, v0);
			if (rc)
				goto out;
			name_cols_follow(fs, &from, &to, m.delim);
		}
		pending_rewrite(&fs->pending, name_pending, &m, n->ino, node_ino_of(&to));
		node_rewrite_alias(&fs->nodes, move_node, name_writer, &m);
	} else {
		if (bn > CS_MAX_QUALIFIER) {
			rc = -ENAMETOOLONG;
			goto out;
		}
		to.qual = b;
		to.qualn = bn;
		m = (struct move){ .kind = MOVE_FILE, .ffrom = &from, .fto = &to };
		node_rewrite_alias(&fs->nodes, move_node, name_writer, &m);
		if (to.kind == NODE_VERSION) { /* the bare name stays absent if only versions are written */
			pending_col_remove(&fs->pending, column_ino(&from));
			rc = versions_only(fs, txn, &to);
		}
	}
	fuse_lowlevel_notify_inval_inode(fs->se, n->parent, 0, 0);
out:
	free(key);
	node_id_free(&from);
	return rc;
}

void fs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size, int flags)
{
	struct fs *fs = fs_of(req);
	struct node *n = node_get(&fs->nodes, ino);
	char *text = NULL;
	cs_txn *txn = NULL;
	uint64_t v0;
	int rc;

	count_req(req, OP_SETXATTR);
	if (!n) {
		rc = -ESTALE;
		goto out;
	}
	if (fs->ro) {
		rc = -EROFS;
		goto out;
	}
	if (!strcmp(name, XATTR_NAME) && !is_table_dir(&n->id) && n->id.kind != NODE_ROOT) {
		rc = name_set(fs, n, value, size, flags);
		goto out;
	}
	if (!is_table_dir(&n->id) || strncmp(name, "user.cellfs.", 12)) {
		rc = -EOPNOTSUPP; /* no other attributes are kept */
		goto out;
	}
	if (!(text = malloc(size + 1))) {
		rc = -ENOMEM;
		goto out;
	}
	memcpy(text, value, size);
	text[size] = 0;
	v0 = fs_watch_write_begin(fs);
	if ((rc = cs_txn_begin(fs->st, 0, &txn))) {
		fs_watch_write_end(fs, v0);
		goto out;
	}
	if (!strcmp(name, XA_DELIM)) {
		cs_table_info *info;
		if (!(rc = cs_table_info_get(txn, n->id.table, &info))) {
			/* The delimiter is fixed when the table is made (-o delimiter=C for mkdir). */
			rc = size == 1 && text[0] == info->delim ? (flags & XATTR_CREATE ? -EEXIST : 0) : -EPERM;
			cs_table_info_free(info);
		}
	} else if (!strncmp(name, XA_FAMILY, strlen(XA_FAMILY))) {
		const char *fam = name + strlen(XA_FAMILY);
		char *colon = strchr(text, ':');
		cs_value_type type = CS_TYPE_BYTES;
		if (colon) /* POLICY:TYPE, an aggregate family (as the attribute reads) */
			*colon = 0;
		if (strlen(text) + (colon ? strlen(colon + 1) + 1 : 0) != size || cs_check_gc_policy(text, NULL) ||
		    (colon && (cs_value_type_parse(colon + 1, &type) || type == CS_TYPE_BYTES))) {
			rc = -EINVAL;
		} else {
			rc = family_type_is(txn, n->id.table, fam, type);
			if (!rc)
				rc = cs_family_set_gc(txn, n->id.table, fam, text);
			if (rc == -ENOENT && !(flags & XATTR_REPLACE) && (rc = family_clash(txn, n->id.table, fam)) == 0)
				rc = -ENOENT;
			if (rc == -ENOENT)
				rc = flags & XATTR_REPLACE ? -ENODATA
							   : cs_family_create_typed(txn, n->id.table, fam, text, type);
			else if (!rc && (flags & XATTR_CREATE))
				rc = -EEXIST;
		}
	} else {
		rc = -EOPNOTSUPP;
	}
	if (rc)
		cs_txn_abort(txn);
	else
		rc = cs_txn_commit(txn);
	fs_watch_write_end(fs, v0);
	/* the table directory's attributes (listxattr) are asked for again; the families show at once */
out:
	free(text);
	reply_err(req, -rc);
}

void fs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct fs *fs = fs_of(req);
	struct node *n = node_get(&fs->nodes, ino);

	count_req(req, OP_REMOVEXATTR);
	if (!n)
		fuse_reply_err(req, ESTALE);
	else if (fs->ro)
		fuse_reply_err(req, EROFS);
	else if (strncmp(name, "user.", 5))
		fuse_reply_err(req, EOPNOTSUPP);
	else if (!is_table_dir(&n->id) || strncmp(name, XA_FAMILY, strlen(XA_FAMILY)))
		fuse_reply_err(req, is_table_dir(&n->id) && !strcmp(name, XA_DELIM) ? EPERM : ENODATA);
	else {
		int rc;
		OWN(fs, rc, edit_family_drop_empty(fs->st, n->id.table, name + strlen(XA_FAMILY)));
		reply_err(req, rc == -ENOENT ? ENODATA : -rc);
	}
}
