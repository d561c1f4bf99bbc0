/* ops.c — the reading handlers: lookup, getattr, listings, open, read, release, extended attributes,
 * statfs. Each is split in two: fs_do_x() does the work and returns 0 or a negative errno, fs_x() sends
 * exactly one reply. Every request reads the store through its thread's read transaction (req.c), renewed
 * to the newest snapshot at the start of the request. */
#include "ops.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "cursor.h"
#include "fileh.h"
#include "gone.h"
#include "ident.h"
#include "name.h"
#include "req.h"
#include "view.h"
#include "watch.h"
#include "xattr.h"

/* A view_emit_fn that takes a lookup on the entry found and fills E. */
struct entry_arg {
	struct fs *fs;
	fuse_ino_t parent;
	struct fuse_entry_param e;
};

static int take_entry(void *arg, const char *name, const struct node_id *id, const struct view_attr *a);

/* A Q@TS name NAME in family directory DIR whose column's bare name was unlinked lately (gone.h):
 * an entry for it, never cached (nothing is stored). Errors: -ENOENT (no such ghost), -ENOLINK (another
 * process's ghost: absent to this one, but not to be remembered as absent). */
static int ghost_entry(struct fs *fs, pid_t pid, cs_txn *txn, const struct node_id *dir, const char *name,
		       struct entry_arg *ea)
{
	struct view_attr a = { .nlink = 1 };
	struct node_id id;
	int rc, g = 0;

	if (dir->kind != NODE_FAMILY || (rc = ident_resolve_new(txn, dir, name, false, &id)) < 0)
		return -ENOENT;
	rc = -ENOENT;
	if (id.kind == NODE_VERSION && (g = gone_has(fs, node_column_ino(&id), pid)) > 0) {
		a.mtime_us = id.ts;
		if (!(rc = take_entry(ea, name, &id, &a)))
			ea->e.entry_timeout = ea->e.attr_timeout = 0;
	} else if (g < 0) {
		rc = -ENOLINK; /* (absent, but not to be remembered: the unlinking process may look again) */
	}
	node_id_free(&id);
	return rc;
}

/* ---- lookup, forget, getattr ---- */

static int take_entry(void *arg, const char *name, const struct node_id *id, const struct view_attr *a)
{
	struct entry_arg *ea = arg;
	uint64_t ino;
	int rc;
	if (id->kind == NODE_COLUMN && pending_col_has(&ea->fs->pending, node_ino_of(id)))
		return -ENOENT; /* written only as versions so far (see pending.h) */
	rc = node_ref(&ea->fs->nodes, id, ea->parent, name, &ino);
	if (rc)
		return rc;
	ea->e.ino = ino;
	ea->e.attr_timeout = ea->fs->attr_timeout;
	ea->e.entry_timeout = ea->fs->entry_timeout;
	req_stat(ea->fs, ino, a, &ea->e.attr);
	return 0;
}

static int fs_do_lookup(fuse_req_t req, fuse_ino_t parent, const char *name, struct fuse_entry_param *e)
{
	struct fs *fs = req_fs(req);
	struct node p_v, *p = node_get(&fs->nodes, parent, &p_v);
	struct entry_arg ea = { .fs = fs, .parent = parent };
	struct node_id eff = { 0 };
	const struct node_id *dir;
	cs_txn *txn;
	int rc;

	if (!p)
		return -ESTALE;
	if ((rc = req_txn(fs, &txn)) || (rc = req_dir(txn, p, &eff, &dir)))
		return rc;
	rc = view_lookup(txn, dir, name, take_entry, &ea);
	if (rc == -ENOENT && fs->pending.count) { /* a directory made through the mount, still empty */
		struct node_id id;
		struct view_attr a = { .dir = true, .nlink = 2 };
		if (!pending_lookup(&fs->pending, parent, name, &id, &a.mtime_us)) {
			struct node c_v, *c;
			rc = take_entry(&ea, name, &id, &a);
			if (!rc && (c = node_get(&fs->nodes, ea.e.ino, &c_v)))
				node_set_flag(c, NODE_MADE);
			node_id_free(&id);
		}
	}
	if (rc == -ENOENT && fs->ngone)
		rc = ghost_entry(fs, fuse_req_ctx(req)->pid, txn, dir, name, &ea);
	node_id_free(&eff);
	*e = ea.e;
	return rc;
}

static void fs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs *fs = req_fs(req);
	req_count(req, OP_LOOKUP);
	struct fuse_entry_param e;
	int rc = fs_do_lookup(req, parent, name, &e);
	if (rc == -ENOLINK) { /* another process's ghost (ghost_entry): absent, not remembered */
		fuse_reply_err(req, ENOENT);
	} else if (rc == -ENOENT) { /* a negative entry: the kernel remembers the absence for a while */
		memset(&e, 0, sizeof(e));
		e.entry_timeout = req_fs(req)->neg_timeout;
		fuse_reply_entry(req, &e);
	} else if (rc) {
		req_reply_err(req, -rc);
	} else {
		fuse_reply_entry(req, &e);
	}
	req_txn_idle(fs);
}

static void fs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	req_count(req, OP_FORGET);
	node_forget(&req_fs(req)->nodes, ino, nlookup);
	fuse_reply_none(req);
}

static void fs_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	req_count(req, OP_FORGET);
	for (size_t i = 0; i < count; i++)
		node_forget(&req_fs(req)->nodes, forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

static int fs_do_getattr(fuse_req_t req, fuse_ino_t ino, struct stat *st)
{
	struct fs *fs = req_fs(req);
	struct node n_v, *n = node_get(&fs->nodes, ino, &n_v);
	struct node_id eff = { 0 };
	const struct node_id *id;
	struct view_attr a;
	int64_t made_us;
	cs_txn *txn;
	int rc;

	if (!n)
		return -ESTALE;
	if ((rc = req_txn(fs, &txn)) || (rc = req_dir(txn, n, &eff, &id)))
		return rc;
	if (id->kind >= NODE_COLUMN && !fileh_attr(fs, ino, &a))
		rc = 0; /* a file being written: its handle's size and time */
	else
		rc = view_getattr(txn, id, &a);
	if (rc == -ENOENT && id->kind >= NODE_COLUMN && (made_us = node_made_us(&fs->nodes, n))) {
		a = (struct view_attr){ .nlink = 1, .mtime_us = made_us }; /* made by mknod, not written yet */
		rc = 0;
	}
	if (rc == -ENOENT && (pending_has(&fs->pending, node_ino_of(id), &a.mtime_us) ||
			      pending_has(&fs->pending, ino, &a.mtime_us))) {
		a = (struct view_attr){ .dir = true, .nlink = 2, .mtime_us = a.mtime_us };
		rc = 0;
	} else if (rc == -ENOENT && id->kind >= NODE_COLUMN && !fileh_read_attr(fs, ino, &a)) {
		rc = 0; /* removed while open for reading: fstat goes on working until the last close */
	} else if (rc == -ENOENT && ino == FUSE_ROOT_ID && id->kind != NODE_ROOT) {
		/* -o only= of a prefix with no rows (yet), or of a table dropped since: the root stays, empty,
		 * dated as its table's directory */
		struct node_id table = { .kind = NODE_DIR, .table = id->table, .key = (const uint8_t *)"" };
		if (view_getattr(txn, &table, &a))
			a.mtime_us = 0;
		a = (struct view_attr){ .dir = true, .nlink = 1, .mtime_us = a.mtime_us };
		rc = 0;
	}
	node_id_free(&eff);
	if (rc)
		return rc;
	req_stat(fs, ino, &a, st);
	return 0;
}

static void fs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);
	req_count(req, OP_GETATTR);
	struct stat st;
	int rc = fs_do_getattr(req, ino, &st);
	if (rc)
		req_reply_err(req, -rc);
	else
		fuse_reply_attr(req, &st, req_fs(req)->attr_timeout);
	req_txn_idle(fs);
}

/* ---- directories ---- */

/* Directories are not opened: the kernel lists them with no handle (FUSE_CAP_NO_OPENDIR_SUPPORT) and
 * caches the listing, which the watcher invalidates when the store changes. Where a listing stands
 * between requests is kept in fs->cursors, keyed by the offset the kernel asks for next. */
static void fs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	req_count(req, OP_OPENDIR);
	struct fs *fs = req_fs(req);
	struct node n_v, *n = node_get(&fs->nodes, ino, &n_v);

	if (!n || n->id.kind > NODE_FAMILY) {
		fuse_reply_err(req, n ? ENOTDIR : ESTALE);
		return;
	}
	if (fs->no_opendir) {
		fuse_reply_err(req, ENOSYS); /* success, and no opendir or releasedir from now on */
		return;
	}
	fi->cache_readdir = 1;
	fi->keep_cache = 1;
	fuse_reply_open(req, fi);
}

static void fs_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	req_count(req, OP_RELEASEDIR);
	fuse_reply_err(req, 0);
}

struct fill {
	fuse_req_t req;
	struct fs *fs;
	fuse_ino_t dir;
	bool plus;
	char *buf;
	size_t size, used;
	off_t *next_off;
	off_t skip; /* entries still to skip (after a seek to an earlier offset) */
};

static int fill_entry(void *arg, const char *name, const struct node_id *id, const struct view_attr *a)
{
	struct fill *f = arg;
	char vname[NAME_BUFSZ];
	struct node_id vid;
	size_t need;

	if (id->kind == NODE_COLUMN && pending_col_has(&f->fs->pending, node_ino_of(id))) {
		/* written only as versions so far: its newest is listed as Q@TS too (see pending.h) */
		vid = *id;
		vid.kind = NODE_VERSION;
		vid.ts = a->mtime_us;
		if (name_encode_version(id->qual, id->qualn, a->mtime_us, vname, sizeof(vname)) < 0)
			return -EIO;
		name = vname;
		id = &vid;
	}

	if (f->skip) {
		f->skip--;
		(*f->next_off)++;
		return 0;
	}
	need = f->plus ? fuse_add_direntry_plus(f->req, NULL, 0, name, NULL, 0) : fuse_add_direntry(f->req, NULL, 0, name, NULL, 0);
	if (f->used + need > f->size)
		return 1;
	if (f->plus) {
		struct fuse_entry_param e = { 0 };
		uint64_t ino;
		int rc = node_ref(&f->fs->nodes, id, f->dir, name, &ino);
		if (rc)
			return rc;
		e.ino = ino;
		e.attr_timeout = f->fs->attr_timeout;
		e.entry_timeout = f->fs->entry_timeout;
		req_stat(f->fs, ino, a, &e.attr);
		f->used += fuse_add_direntry_plus(f->req, f->buf + f->used, f->size - f->used, name, &e, *f->next_off + 1);
	} else {
		struct stat st = { .st_ino = node_ino_of(id), .st_mode = a->dir ? S_IFDIR : S_IFREG };
		f->used += fuse_add_direntry(f->req, f->buf + f->used, f->size - f->used, name, &st, *f->next_off + 1);
	}
	(*f->next_off)++;
	return 0;
}

/* "." and "..", entries 1 and 2 of every listing, as ls -a expects. In readdirplus they carry node id 0,
 * so the kernel takes no lookup on them (it never does for these names). Returns 1 if the buffer is full. */
static int fill_dots(struct fill *f, const struct node *n)
{
	while (*f->next_off < 2) {
		const char *name = *f->next_off ? ".." : ".";
		struct stat st = { .st_ino = *f->next_off ? (n->parent ? n->parent : FUSE_ROOT_ID) : n->ino,
				   .st_mode = S_IFDIR };
		size_t need;

		if (f->skip) {
			f->skip--;
			(*f->next_off)++;
			continue;
		}
		need = f->plus ? fuse_add_direntry_plus(f->req, NULL, 0, name, NULL, 0) : fuse_add_direntry(f->req, NULL, 0, name, NULL, 0);
		if (f->used + need > f->size)
			return 1;
		if (f->plus) {
			struct fuse_entry_param e = { .attr = st };
			f->used += fuse_add_direntry_plus(f->req, f->buf + f->used, f->size - f->used, name, &e, *f->next_off + 1);
		} else {
			f->used += fuse_add_direntry(f->req, f->buf + f->used, f->size - f->used, name, &st, *f->next_off + 1);
		}
		(*f->next_off)++;
	}
	return 0;
}

static int exists(void *arg, const char *name, const struct node_id *id, const struct view_attr *a)
{
	return 0;
}

/* After the store's entries, the directories made through the mount that the store does not have yet. */
static int fill_pending(struct fill *f, cs_txn *txn, const struct node_id *dir, struct view_pos *pos)
{
	char **names;
	size_t n;
	int rc = pending_children(&f->fs->pending, f->dir, &names, &n);
	if (rc)
		return rc;
	for (; !rc && pos->extra < n; pos->extra++) {
		struct view_attr a = { .dir = true, .nlink = 2 };
		struct node_id id;
		if (view_lookup(txn, dir, names[pos->extra], exists, NULL) != -ENOENT)
			continue; /* the store has it (listed already) */
		if (pending_lookup(&f->fs->pending, f->dir, names[pos->extra], &id, &a.mtime_us))
			continue; /* gone meanwhile */
		rc = fill_entry(f, names[pos->extra], &id, &a);
		node_id_free(&id);
		if (rc == 1)
			break; /* full: this one comes first next time */
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (rc)
		return rc < 0 ? rc : 0;
	/* then the files created here and not written back yet: they are there for their writers' ls */
	struct fileh_new *nf;
	size_t nn;
	if ((rc = fileh_new_files(f->fs, f->dir, &nf, &nn)))
		return rc;
	for (; !rc && pos->extra - n < nn; pos->extra++) {
		struct fileh_new *e = &nf[pos->extra - n];
		if (view_lookup(txn, dir, e->name, exists, NULL) != -ENOENT)
			continue;
		if ((rc = fill_entry(f, e->name, &e->id, &e->a)) == 1)
			break;
	}
	fileh_new_files_free(nf, nn);
	return rc < 0 ? rc : 0;
}

/* Entries from offset OFF on. Offsets are entry numbers: a request at the offset where a listing stopped
 * continues from its saved position; any other offset lists again from the start and skips. */
static int fs_do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus, char **buf,
			 size_t *used)
{
	struct fs *fs = req_fs(req);
	struct node n_v, *n = node_get(&fs->nodes, ino, &n_v);
	struct view_pos pos;
	bool full;
	off_t next_off = off;
	struct fill f = { .req = req, .fs = fs, .dir = ino, .plus = plus, .size = size, .next_off = &next_off };
	struct node_id eff = { 0 };
	const struct node_id *dir = NULL;
	cs_txn *txn;
	int rc;

	if (!n)
		return -ESTALE;
	if (off < 0)
		return -EINVAL;
	if (!(f.buf = malloc(size)))
		return -ENOMEM;
	if (!cursor_take(&fs->cursors, ino, (uint64_t)off, &pos)) {
		next_off = 0;
		f.skip = off;
	}
	rc = req_txn(fs, &txn);
	if (!rc)
		rc = req_dir(txn, n, &eff, &dir);
	full = !rc && fill_dots(&f, n);
	while (!rc && !full && pos.phase != 2) {
		size_t before = f.used;
		off_t skip = f.skip;
		rc = view_list(txn, dir, &pos, fill_entry, &f);
		if (rc == -ENOENT && ino == FUSE_ROOT_ID) { /* -o only= of a table dropped since: empty */
			rc = 0;
			pos.phase = 2;
		}
		if (f.used == before && f.skip == skip)
			break; /* the buffer is full (or the listing ended) */
	}
	if (!rc && !full && pos.phase == 2 && (fs->pending.count || atomic_load(&fs->nnew)))
		rc = fill_pending(&f, txn, dir, &pos);
	node_id_free(&eff);
	if (rc || !f.used) { /* an error, or the end: the kernel will not ask again */
		view_pos_release(&pos);
		if (rc) {
			free(f.buf);
			return rc;
		}
	} else {
		cursor_put(&fs->cursors, ino, (uint64_t)next_off, &pos);
	}
	*buf = f.buf;
	*used = f.used;
	return 0;
}

static void readdir_common(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi, bool plus)
{
	char *buf;
	size_t used;
	int rc = fs_do_readdir(req, ino, size, off, plus, &buf, &used);
	if (!rc && !off && req_fs(req)->expiring) /* (the kernel keeps the listing until told) */
		watch_expire_later(req_fs(req), ino);
	if (rc) {
		req_reply_err(req, -rc);
		return;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void fs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);
	req_count(req, OP_READDIR);
	readdir_common(req, ino, size, off, fi, false);
	req_txn_idle(fs);
}

static void fs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);
	req_count(req, OP_READDIRPLUS);
	readdir_common(req, ino, size, off, fi, true);
	req_txn_idle(fs);
}

/* ---- files ---- */

/* What identifies a value for the page cache: FNV-1a over its length and bytes (never 0). */
static uint64_t value_id(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t h = 0xcbf29ce484222325u ^ len;
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3u;
	return h ? h : 1;
}

static int fs_do_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);
	struct node n_v, *n = node_get(&fs->nodes, ino, &n_v);
	struct view_attr a;
	struct fileh *h;
	cs_txn *txn;
	int rc;

	if (!n)
		return -ESTALE;
	if (n->id.kind < NODE_COLUMN)
		return -EISDIR;
	if (!(h = fileh_alloc()))
		return -ENOMEM;
	h->parent = n->parent;
	if (node_id_copy(&h->id, &n->id)) {
		fileh_free(h);
		return -ENOMEM;
	}
	if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC)) {
		bool made = node_made_us(&fs->nodes, n); /* made by mknod, never written: a new file (an older version aside) */
		h->ino = ino; /* (a new file another handle writes: fileh_open_write starts from its copy) */
		if ((rc = fileh_open_write(fs, h, made ? fi->flags | O_TRUNC : fi->flags))) {
			fileh_free(h);
			return rc;
		}
		if (made) {
			h->created = true;
			node_set_made_us(&fs->nodes, n, 0);
		}
		fi->fh = (uintptr_t)h;
		fi->direct_io = 1; /* its own copy, never the page cache other handles share */
		h->ino = ino;
		node_add_writer(&fs->nodes, ino, h);
		return 0;
	}
	if (!(rc = req_txn(fs, &txn)))
		rc = view_read_attr(txn, &n->id, &h->buf, &h->len, &a);
	if (rc == -ENOENT && !(rc = fileh_read_new(fs, ino, &h->buf, &h->len, &a.mtime_us))) {
		/* a file created and not written back yet (NamedTemporaryFile reopened by name): a copy of what
		 * its writer has written so far, never through the page cache (it is not committed) */
		h->ino = ino;
		h->read_mtime = a.mtime_us;
		fi->fh = (uintptr_t)h;
		fi->noflush = 1;
		fi->direct_io = 1;
		return 0;
	}
	if (rc) {
		fileh_free(h);
		return rc;
	}
	h->ino = ino;
	h->read_mtime = a.mtime_us;
	fi->fh = (uintptr_t)h;
	fi->noflush = 1; /* nothing to write back: no FLUSH on close */
	/* The handle reads its own copy; the kernel's page cache, shared by all handles on the inode, is
	 * used only while every handle reading through it holds this same value. */
	switch (node_open_file(&fs->nodes, ino, value_id(h->buf, h->len))) {
	case NODE_CACHE_KEEP:
		fi->keep_cache = 1;
		h->cached = true;
		break;
	case NODE_CACHE_DROP:
		h->cached = true;
		break;
	case NODE_CACHE_DIRECT:
		fi->direct_io = 1;
		break;
	}
	return 0;
}

static void fs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);
	req_count(req, OP_OPEN);
	int rc = fs_do_open(req, ino, fi);
	if (rc) {
		req_reply_err(req, -rc);
	} else {
		/* (before the reply, after which its RELEASE may come on another thread; if the reply finds the
		 * open interrupted, no RELEASE will: the handle stays until exit, as in libfuse) */
		fileh_track(fs, (struct fileh *)(uintptr_t)fi->fh);
		fuse_reply_open(req, fi);
	}
	req_txn_idle(fs);
}

static void fs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	req_count(req, OP_READ);
	struct fileh *h = (struct fileh *)(uintptr_t)fi->fh;
	bool locked = h->writable; /* (read before the reply: once it is sent, RELEASE may free H) */
	if (locked)
		pthread_mutex_lock(&h->lock);
	if (off < 0 || (size_t)off >= h->len)
		fuse_reply_buf(req, NULL, 0);
	else
		fuse_reply_buf(req, (char *)h->buf + off, h->len - (size_t)off < size ? h->len - (size_t)off : size);
	if (locked)
		pthread_mutex_unlock(&h->lock); /* safe: its FLUSH, which precedes RELEASE, waits for the lock */
}

static void fs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);
	req_count(req, OP_RELEASE);
	fileh_release(fs, (struct fileh *)(uintptr_t)fi->fh, ino);
	fuse_reply_err(req, 0);
	req_txn_idle(fs); /* (a write-back reads) */
}

/* ---- extended attributes, statfs ---- */

static void reply_xattr(fuse_req_t req, size_t size, int rc, char *val, size_t len)
{
	if (rc)
		req_reply_err(req, -rc);
	else if (!size)
		fuse_reply_xattr(req, len);
	else if (len > size)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, val, len);
	free(val);
}

static void fs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	req_count(req, OP_LISTXATTR);
	struct fs *fs = req_fs(req);
	struct node n_v, *n = node_get(&fs->nodes, ino, &n_v);
	char *val = NULL;
	size_t len = 0;
	cs_txn *txn;
	int rc = n ? req_txn(fs, &txn) : -ESTALE;
	if (!rc)
		rc = xattr_list(txn, &n->id, &val, &len);
	reply_xattr(req, size, rc, val, len);
	req_txn_idle(fs);
}

static void fs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	req_count(req, OP_GETXATTR);
	struct fs *fs = req_fs(req);
	struct node n_v, *n = node_get(&fs->nodes, ino, &n_v);
	char *val = NULL;
	size_t len = 0;
	cs_txn *txn;
	int rc;
	/* Only user.* attributes exist here. Any other namespace (security.selinux, system.posix_acl_*) is
	 * "not supported" rather than "no such attribute": ls -l remembers that for the filesystem and stops
	 * asking, where ENODATA costs it two requests for every file it lists. */
	if (strncmp(name, "user.", 5)) {
		reply_xattr(req, size, -EOPNOTSUPP, NULL, 0);
		return;
	}
	rc = n ? req_txn(fs, &txn) : -ESTALE;
	if (!rc && ino == FUSE_ROOT_ID && !strcmp(name, REQ_XA_STATS))
		rc = req_stats(fs, &val, &len);
	else if (!rc)
		rc = xattr_get(txn, &n->id, name, &val, &len);
	reply_xattr(req, size, rc, val, len);
	req_txn_idle(fs);
}

static void fs_statfs(fuse_req_t req, fuse_ino_t ino)
{
	req_count(req, OP_STATFS);
	struct statvfs sv = { .f_bsize = 4096, .f_frsize = 4096, .f_namemax = 255 };
	fuse_reply_statfs(req, &sv);
}

static void fs_init(void *userdata, struct fuse_conn_info *conn)
{
	struct fs *fs = userdata;
	if (conn->capable & FUSE_CAP_READDIRPLUS)
		conn->want |= FUSE_CAP_READDIRPLUS;
	conn->want &= ~(unsigned)FUSE_CAP_READDIRPLUS_AUTO; /* always plus: ls -l needs no more requests */
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC; /* O_TRUNC comes with the open: the handle starts empty */
	conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE; /* writes reach the handle as they are made */
	fs->no_opendir = conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT;
}

static void fs_destroy(void *userdata)
{
	(void)userdata;
}

/* The tables the root leaves out (view_set_skip_hook), each logged once: the root is read again and
 * again, the log should say it once. The names logged, under the lock. */
static pthread_mutex_t skipped_lock = PTHREAD_MUTEX_INITIALIZER;
static char **skipped;
static size_t nskipped;

static void log_skipped_table(const char *table)
{
	char shown[4 * 64 + 1], **v;
	size_t k = 0, i;

	pthread_mutex_lock(&skipped_lock);
	for (i = 0; i < nskipped; i++)
		if (!strcmp(skipped[i], table))
			goto out;
	if ((v = realloc(skipped, (nskipped + 1) * sizeof(*v))) && (v[nskipped] = strdup(table)))
		nskipped++;
	if (v)
		skipped = v;
	/* the name as C escapes bytes outside printable ASCII, cut at 64 of them: one line whatever it holds */
	for (i = 0; table[i] && i < 64; i++) {
		unsigned char c = (unsigned char)table[i];
		if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
			k += (size_t)snprintf(shown + k, sizeof(shown) - k, "\\x%02x", c);
		else
			shown[k++] = (char)c;
	}
	shown[k] = '\0';
	fuse_log(FUSE_LOG_WARNING, "cellfs: table \"%s%s\" is not shown: Bigtable allows no such name "
		 "([_a-zA-Z0-9][-_.a-zA-Z0-9]*, at most 50 bytes)\n", shown, table[i] ? "..." : "");
out:
	pthread_mutex_unlock(&skipped_lock);
}

void ops_fill(struct fuse_lowlevel_ops *ops)
{
	view_set_skip_hook(log_skipped_table);
	ops->init = fs_init;
	ops->destroy = fs_destroy;
	ops->lookup = fs_lookup;
	ops->forget = fs_forget;
	ops->forget_multi = fs_forget_multi;
	ops->getattr = fs_getattr;
	ops->opendir = fs_opendir;
	ops->readdir = fs_readdir;
	ops->readdirplus = fs_readdirplus;
	ops->releasedir = fs_releasedir;
	ops->open = fs_open;
	ops->read = fs_read;
	ops->release = fs_release;
	ops->listxattr = fs_listxattr;
	ops->getxattr = fs_getxattr;
	ops->statfs = fs_statfs;
}
