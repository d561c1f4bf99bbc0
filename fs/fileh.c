/* fileh.c — open files (see fileh.h). A handle open for writing holds a copy of the value. Writes edit the
 * copy; flush (every close(), dup'd descriptors included), fsync and release write it back as ONE version:
 * the first write-back creates the version, later ones rewrite that same version, and a handle with
 * nothing changed writes nothing. A timestamp set on the handle (futimens, as cp -a, tar and rsync do)
 * becomes the version's timestamp; set on an unchanged handle of an existing file (touch -d) it re-stamps
 * the newest cell instead. */
#include "fileh.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edit.h"
#include "gone.h"
#include "ident.h"
#include "name.h"
#include "req.h"
#include "uring.h"
#include "watch.h"

struct fileh *fileh_alloc(void)
{
	struct fileh *h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	pthread_mutex_init(&h->lock, NULL);
	h->set_ts = h->written_ts = -1;
	return h;
}

void fileh_free(struct fileh *h)
{
	if (!h)
		return;
	pthread_mutex_destroy(&h->lock);
	node_id_free(&h->id);
	free(h->buf);
	free(h);
}

struct fileh *fileh_of(struct fuse_file_info *fi)
{
	return fi && fi->fh ? (struct fileh *)(uintptr_t)fi->fh : NULL;
}

void fileh_track(struct fs *fs, struct fileh *h)
{
	pthread_mutex_lock(&fs->hlock);
	if ((h->hnext = fs->handles))
		h->hnext->hpprev = &h->hnext;
	h->hpprev = &fs->handles;
	fs->handles = h;
	pthread_mutex_unlock(&fs->hlock);
}

void fileh_untrack(struct fs *fs, struct fileh *h)
{
	pthread_mutex_lock(&fs->hlock);
	if ((*h->hpprev = h->hnext))
		h->hnext->hpprev = h->hpprev;
	pthread_mutex_unlock(&fs->hlock);
}

void fileh_release_all(struct fs *fs)
{
	while (fs->handles) {
		struct fileh *h = fs->handles;
		fs->handles = h->hnext;
		fileh_free(h);
	}
}

int fileh_read_attr(struct fs *fs, uint64_t ino, struct view_attr *a)
{
	int rc = -ENOENT;
	pthread_mutex_lock(&fs->hlock);
	for (struct fileh *h = fs->handles; h && rc; h = h->hnext)
		if (!h->writable && h->ino == ino) {
			*a = (struct view_attr){ .size = h->len, .mtime_us = h->read_mtime, .nlink = 0 };
			rc = 0;
		}
	pthread_mutex_unlock(&fs->hlock);
	return rc;
}

int fileh_open_write(struct fs *fs, struct fileh *h, int flags)
{
	struct view_attr a;
	cs_txn *txn;
	int rc;

	if (fs->ro)
		return -EROFS;
	h->writable = true;
	h->append = flags & O_APPEND;
	if ((rc = req_txn(fs, &txn)))
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
	if (rc == -ENOENT) { /* gone since the kernel looked it up, or new: written back as a new file */
		int64_t mt;
		h->created = true;
		/* created by another handle that has not written it back yet: what that one wrote so far */
		if (h->ino && (rc = fileh_read_new(fs, h->ino, &h->buf, &h->len, &mt)) != -ENOENT) {
			h->cap = h->len;
			return rc;
		}
		return 0;
	}
	h->cap = h->len;
	return rc;
}

/* Make the handle's copy LEN bytes long (zeros where it grows). Called with the lock held. */
static int resize(struct fs *fs, struct fileh *h, size_t len)
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

int fileh_write(struct fs *fs, struct fileh *h, const char *buf, size_t size, off_t off)
{
	size_t at;
	int rc = 0;

	pthread_mutex_lock(&h->lock);
	at = h->append ? h->len : (size_t)off;
	if (off < 0 || at > SIZE_MAX - size)
		rc = -EFBIG;
	else if (at + size > h->len)
		rc = resize(fs, h, at + size);
	if (rc == -EFBIG)
		h->too_big = true;
	if (!rc && size) {
		memcpy((char *)h->buf + at, buf, size);
		h->changed = true;
		h->reported = 0; /* new data: the release writes it back even after a failed close() */
	}
	pthread_mutex_unlock(&h->lock);
	return rc;
}

int fileh_truncate(struct fs *fs, struct fileh *h, uint64_t size)
{
	int rc = 0;

	pthread_mutex_lock(&h->lock);
	if (size != h->len) {
		rc = resize(fs, h, (size_t)size);
		h->changed = h->changed || !rc;
		if (!rc)
			h->reported = 0;
	}
	pthread_mutex_unlock(&h->lock);
	return rc;
}

/* Forget the directories above cell ID held by the daemon: the store has them now. */
static void pending_filled(struct fs *fs, const struct node_id *id)
{
	struct node_id d = { .kind = NODE_DIR, .table = id->table, .key = id->key, .keyn = id->keyn };
	cs_table_info *info;
	cs_txn *txn;

	if (!fs->pending.count || req_txn(fs, &txn) || cs_table_info_get(txn, id->table, &info))
		return;
	/* the row's family directory, and the directory of the family's name it may have been made as before
	 * the family was (a key directory row<delim>family). Not a key directory of that key made under its
	 * escaped name (%4DD for MD) while the family was there: that one still waits for cells of its own. */
	struct node_id f = { .kind = NODE_FAMILY, .table = id->table, .key = id->key, .keyn = id->keyn,
			     .family = id->family };
	pending_remove(&fs->pending, node_ino_of(&f));
	pending_remove_entry(&fs->pending, node_ino_of(&d), id->family);
	/* every key directory above the row, and the row's own */
	for (size_t i = 0; i <= id->keyn; i++) {
		if (i < id->keyn && id->key[i] != (uint8_t)info->delim)
			continue;
		d.keyn = i;
		d.lead_empty = !i;
		pending_remove(&fs->pending, node_ino_of(&d));
	}
	cs_table_info_free(info);
}

/* A handle that has gone past the value limit (dd past it: its first 100 MiB are not the value it meant to
 * write). A version it wrote back before holding nothing (dd's O_TRUNC, flushed when it closed the
 * descriptor it had dup'd) goes again, so that the column reads what it held before the handle. Returns
 * -EFBIG, or the error of that deletion. Called with the lock held. */
static int commit_too_big(struct fs *fs, struct fileh *h)
{
	int rc;

	if (h->id.kind == NODE_COLUMN && h->written_ts >= 0 && h->written_empty) {
		struct node_id v = h->id;
		v.kind = NODE_VERSION;
		v.ts = h->written_ts;
		WATCH_OWN(fs, rc, edit_delete(fs->st, &v, false));
		if (rc && rc != -ENOENT)
			return rc;
		h->written_ts = -1;
		fuse_lowlevel_notify_inval_inode(fs->se, node_column_ino(&h->id), 0, 0);
		uring_inval_dir(fs->se, h->parent); /* (its Q@TS names) */
	}
	return -EFBIG;
}

void fileh_versions_gone(struct fs *fs, const struct node_id *col, uint64_t parent, const struct edit_gone *gone,
			 bool handles)
{
	char name[NAME_BUFSZ];
	struct node_id v = *col;

	v.kind = NODE_VERSION;
	for (size_t i = 0; i < gone->n; i++) {
		v.ts = gone->ts[i];
		if (handles)
			fileh_mark_removed(fs, node_ino_of(&v));
		if (name_encode_version(col->qual, col->qualn, v.ts, name, sizeof(name)) > 0)
			watch_inval_later(fs, parent, name);
	}
}

/* The write-back of a changed (or new) handle as its version. Called with the lock held. */
static int commit_put(struct fs *fs, struct fileh *h)
{
	int64_t ts = h->set_ts >= 0 ? h->set_ts : h->written_ts >= 0 ? h->written_ts : EDIT_TS_NEW;
	bool in_place = h->written_ts >= 0 && ts == h->written_ts;
	uint64_t col = node_column_ino(&h->id);
	struct edit_gone gone = { 0 };
	int rc;

	if (h->id.kind == NODE_COLUMN && h->set_ts >= 0 && !(h->set_ts % 1000000))
		pending_round_add(&fs->pending, col, h->set_ts);
	WATCH_OWN(fs, rc, edit_put(fs->st, &h->id, ts, h->buf, h->len, h->written_ts, fs->strict_schema, &ts, &gone));
	if (!rc) /* (the file replaced at an older time: the newer versions' names go; not their handles:
		  * this may run under the node table's lock, in fileh_set_ts) */
		fileh_versions_gone(fs, &h->id, h->parent, &gone, false);
	free(gone.ts);
	if (rc)
		return rc;
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
		gone_drop(fs, col);
	if (h->id.kind == NODE_COLUMN)
		pending_col_remove(&fs->pending, col);
	else /* the bare name may show this version now */
		fuse_lowlevel_notify_inval_inode(fs->se, col, 0, 0);
	return in_place ? FILEH_REWROTE : 1;
}

int fileh_commit(struct fs *fs, struct fileh *h)
{
	int rc = 0;

	pthread_mutex_lock(&h->lock);
	if (h->too_big && !h->removed)
		rc = commit_too_big(fs, h);
	else if (h->removed || (!h->changed && h->set_ts < 0 && !(h->created && h->written_ts < 0)))
		rc = 0; /* nothing to write (or nowhere: an unlinked file's writes go with it) */
	else if (h->unnamed)
		rc = -ENAMETOOLONG; /* a short form whose bytes never came (user.cellfs.name): close() says so */
	else if (!h->changed && !h->created && h->written_ts < 0) { /* only a new time: touch -d */
		if (h->id.kind == NODE_COLUMN && !(h->set_ts % 1000000))
			pending_round_add(&fs->pending, node_column_ino(&h->id), h->set_ts);
		WATCH_OWN(fs, rc, edit_restamp(fs->st, &h->id, h->set_ts));
		if (!rc) {
			h->set_ts = -1;
			rc = 1;
		}
	} else {
		rc = commit_put(fs, h);
	}
	pthread_mutex_unlock(&h->lock);
	return rc;
}

/* After a write-back of a version, the directory's listing (a new Q@TS) and times are asked for again
 * (not after a rewrite in place: bash's `echo > f` writes back at its dup'd descriptor's close and again
 * at the real one, same version, same listing). Safe here: close() holds no directory lock, and the
 * directory's cached pages are locked only briefly. */
int fileh_flush(struct fs *fs, struct fileh *h, bool at_close)
{
	int rc;
	if (at_close && fs->expiring) {
		/* A file just made, with nothing written: bash's `echo v > f` closes its first descriptor
		 * (dup'd to stdout) before it writes. On a store where each write-back is a call, the empty
		 * version waits for the next write-back (the real close, or the release), not one of its own. */
		bool bare;
		pthread_mutex_lock(&h->lock);
		bare = h->created && h->written_ts < 0 && !h->changed && h->set_ts < 0 && !h->len && !h->too_big &&
		       !h->removed && !h->unnamed;
		pthread_mutex_unlock(&h->lock);
		if (bare)
			return 0;
	}
	rc = fileh_commit(fs, h);
	if (rc > 0) {
		if (rc != FILEH_REWROTE)
			uring_inval_dir(fs->se, h->parent);
		rc = 0;
	}
	h->reported = rc; /* (only this thread's request touches it now: the file's close or fsync) */
	return rc;
}

void fileh_release(struct fs *fs, struct fileh *h, uint64_t ino)
{
	if (h->writable) {
		/* normally nothing is left: the flush of close(), which reports errors, wrote it back. Still
		 * among the node's writers meanwhile, so that a rename of the file moves this handle too. */
		/* A write-back that failed at close() (or fsync) with nothing changed since is not tried again:
		 * the error was returned, and the file must not appear later behind the writer's back. */
		int rc = h->reported < 0 ? 0 : fileh_commit(fs, h);
		node_remove_writer(&fs->nodes, h->ino, h);
		if (h->counted_new) {
			h->counted_new = false;
			atomic_fetch_sub(&fs->nnew, 1);
		}
		if (rc > 0 && rc != FILEH_REWROTE)
			uring_inval_dir(fs->se, h->parent);
		if (h->created && h->written_ts < 0 && !h->removed) {
			/* created but never written (its write-backs failed): gone with its last handle */
			fuse_lowlevel_notify_inval_inode(fs->se, h->ino, 0, 0);
			uring_inval_dir(fs->se, h->parent);
		}
		else if (rc && rc != h->reported) /* (an error close() returned already is not news) */
			fuse_log(FUSE_LOG_ERR, "cellfs: writing back %s on release: %s\n", h->id.table, strerror(-rc));
	}
	if (h->cached)
		node_close_file(&fs->nodes, ino, true);
	fileh_untrack(fs, h);
	fileh_free(h);
}

/* The attributes a writable handle gives its file. Called with H's lock held. */
static struct view_attr handle_attr(const struct fileh *h)
{
	return (struct view_attr){ .size = h->len, .nlink = h->removed ? 0 : 1,
				   .mtime_us = h->id.kind == NODE_VERSION ? h->id.ts
					       : h->set_ts >= 0	       ? h->set_ts
					       : h->written_ts >= 0       ? h->written_ts
									  : cs_now_us() };
}

void fileh_attr_of(struct fileh *h, struct view_attr *a)
{
	pthread_mutex_lock(&h->lock);
	*a = handle_attr(h);
	pthread_mutex_unlock(&h->lock);
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

int fileh_set_ts(struct fs *fs, uint64_t ino, int64_t ts, struct view_attr *a)
{
	struct set_ts t = { .fs = fs, .ts = ts };
	if (!node_foreach_writer(&fs->nodes, ino, set_handle_ts, &t))
		return 0;
	*a = t.a;
	return t.rc ? t.rc : 1;
}

int fileh_attr(struct fs *fs, uint64_t ino, struct view_attr *a)
{
	return fileh_set_ts(fs, ino, -1, a) ? 0 : -ENOENT;
}

static void mark_removed(struct fileh *h, void *arg)
{
	(void)arg;
	pthread_mutex_lock(&h->lock);
	h->removed = true;
	pthread_mutex_unlock(&h->lock);
}

void fileh_mark_removed(struct fs *fs, uint64_t ino)
{
	node_foreach_writer(&fs->nodes, ino, mark_removed, NULL);
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

int fileh_find_new(struct fs *fs, cs_txn *txn, const struct node_id *dir, const char *name, struct node_id *id)
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

struct read_new {
	void *buf;
	size_t len;
	int64_t mtime;
	int rc; /* -ENOENT until a new file's handle is found */
};

static void copy_new(struct fileh *h, void *arg)
{
	struct read_new *c = arg;
	pthread_mutex_lock(&h->lock);
	if (c->rc == -ENOENT && h->created && h->written_ts < 0 && !h->removed) {
		c->len = h->len;
		c->mtime = handle_attr(h).mtime_us;
		c->rc = (c->buf = malloc(h->len ? h->len : 1)) ? 0 : -ENOMEM;
		if (c->buf && h->len)
			memcpy(c->buf, h->buf, h->len);
	}
	pthread_mutex_unlock(&h->lock);
}

int fileh_read_new(struct fs *fs, uint64_t ino, void **buf, size_t *len, int64_t *mtime)
{
	struct read_new c = { .rc = -ENOENT };

	if (!atomic_load(&fs->nnew))
		return -ENOENT;
	node_foreach_writer(&fs->nodes, ino, copy_new, &c);
	if (!c.rc) {
		*buf = c.buf;
		*len = c.len;
		*mtime = c.mtime;
	}
	return c.rc;
}

struct new_list {
	uint64_t dir;
	struct fileh_new *v;
	size_t n, cap;
	bool oom;
};

static void collect_new(const struct node *n, void *arg)
{
	struct new_list *l = arg;
	if (n->parent != l->dir || l->oom)
		return;
	for (struct fileh *h = node_writers(n); h; h = h->next_writer) {
		pthread_mutex_lock(&h->lock);
		bool take = h->created && h->written_ts < 0 && !h->removed;
		struct view_attr a = handle_attr(h);
		pthread_mutex_unlock(&h->lock);
		if (!take)
			continue;
		if (l->n == l->cap) {
			size_t cap = l->cap ? 2 * l->cap : 8;
			struct fileh_new *v = realloc(l->v, cap * sizeof(*v));
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
	return strcmp(((const struct fileh_new *)a)->name, ((const struct fileh_new *)b)->name);
}

void fileh_new_files_free(struct fileh_new *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		node_id_free(&v[i].id);
	}
	free(v);
}

int fileh_new_files(struct fs *fs, uint64_t dir, struct fileh_new **out, size_t *n)
{
	struct new_list l = { .dir = dir };
	*out = NULL;
	*n = 0;
	if (!atomic_load(&fs->nnew))
		return 0;
	node_foreach(&fs->nodes, collect_new, &l);
	if (l.oom) {
		fileh_new_files_free(l.v, l.n);
		return -ENOMEM;
	}
	if (l.n > 1)
		qsort(l.v, l.n, sizeof(*l.v), by_new_name);
	*out = l.v;
	*n = l.n;
	return 0;
}
