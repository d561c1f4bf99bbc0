/* ops.h — what the handler files (ops.c: reading, wops.c: writing) share. */
#ifndef CELLFS_OPS_H
#define CELLFS_OPS_H

#include "fs.h"
#include "view.h"

struct fs *fs_of(fuse_req_t req);
void count_req(fuse_req_t req, enum fs_op op);
/* fuse_reply_err(REQ, ERR), and an EIO (the store could not be read) logged with the request's kind
 * (the last one count_req() saw on this thread); rate-limited. */
void reply_err(fuse_req_t req, int err);

/* This thread's read transaction on the newest snapshot (ops.c). Errors: as cs_txn_begin(). */
int fs_txn(struct fs *fs, cs_txn **out);
/* Let go of it once the request is answered (see ops.c). */
void txn_idle(struct fs *fs);

/* The directory node N stands for now: *DIR points at N's identity or, for a key directory a file written
 * in it has made a family's (node->as_family, ident_effective()), at *EFF (owned: node_id_free()).
 * Errors: as the store. */
int dir_now(cs_txn *txn, const struct node *n, struct node_id *eff, const struct node_id **dir);

/* The inode number of the column file ID (a column or one of its versions) is shown as. */
uint64_t column_ino(const struct node_id *id);

/* Ghosts: column COL's bare name was unlinked by process PID (gone_add), so for a while (GONE_US) a lookup
 * by that process (rm -r) of one of its Q@TS names, whose cells went with it, finds an empty file that the
 * next unlink removes (fs_unlink succeeds for a version name already gone); other processes never see
 * one (a restore must not take it for the version); written again through the mount (gone_drop), it has
 * none. */
#define GONE_US (60 * 1000000)
void gone_add(struct fs *fs, uint64_t col, pid_t pid);
void gone_drop(struct fs *fs, uint64_t col);

void fill_stat(struct fs *fs, uint64_t ino, const struct view_attr *a, struct stat *st);

/* A view_emit_fn that takes a lookup on the entry found and fills E. */
struct entry_arg {
	struct fs *fs;
	fuse_ino_t parent;
	struct fuse_entry_param e;
};
int take_entry(void *arg, const char *name, const struct node_id *id, const struct view_attr *a);

/* An open file: a copy of the value taken at open, so a reader sees one consistent value; a handle open
 * for writing edits its copy and writes it back as one version (wops.c). */
struct fileh {
	struct fileh *next_writer; /* first: the node table chains writable handles through it (node.h) */
	struct fileh *hnext, **hpprev; /* in fs->handles, while open (fileh_track) */
	uint64_t ino;          /* the file's inode (writable handles, to leave the node's list) */
	pthread_mutex_t lock;  /* writable handles: writes, flushes and setattr may run in parallel */
	void *buf;
	size_t len, cap;
	bool cached;           /* reads through the page cache (counted in the node) */
	bool writable;
	bool append;           /* O_APPEND: every write goes at the end */
	bool created;          /* a new file: written back even if empty */
	bool changed;          /* the copy differs from what was last written back (or read at open) */
	bool removed;          /* its file was removed (unlink, rename away): nothing is written back */
	bool counted_new;      /* counted in fs->nnew: created, not yet written back */
	bool unnamed;          /* created with a short-form name nothing holds: written back only once its
	                        * whole name (user.cellfs.name) has come, see ident_resolve_new */
	bool too_big;          /* a write failed with EFBIG: the copy is a part of what the writer meant, so
	                        * nothing is written back; every flush returns EFBIG */
	bool written_empty;    /* its last write-back wrote an empty value (only O_TRUNC had changed it) */
	int reported;          /* the write-back error close() or fsync() last returned, until the handle
	                        * changes again (0: none); the release does not retry it */
	int64_t set_ts;        /* a timestamp set on the handle (futimens), or -1 */
	int64_t written_ts;    /* the version this handle has written back, or -1 */
	int64_t read_mtime;    /* a handle open for reading: its value's time (its file's, once removed) */
	struct node_id id;     /* owned: the file (its node may go before the handle) */
	uint64_t parent;       /* the inode of the directory it was opened in */
};

/* Free H, its copy and its identity. */
void fileh_free(struct fileh *h);
/* Enter H in fs->handles once it is open / take it out at its release. */
void fileh_track(struct fs *fs, struct fileh *h);
void fileh_untrack(struct fs *fs, struct fileh *h);
/* The attributes of file INO as a handle open for reading on it has them (the file removed since, as
 * POSIX keeps an open file until its last close): its value, nlink 0. Errors: -ENOENT (no such handle). */
int fileh_read_attr(struct fs *fs, uint64_t ino, struct view_attr *a);

/* Write handlers (wops.c). */
void fs_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, struct fuse_file_info *fi);
void fs_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off, struct fuse_file_info *fi);
void fs_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void fs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);
void fs_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);
void fs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi);
void fs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);
void fs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode);
void fs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);
void fs_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent, const char *newname,
	       unsigned int flags);
void fs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev);
void fs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name);
void fs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname);
void fs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size, int flags);
void fs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);

/* A writable handle opened on an existing file (wops.c): fills H from the open flags. Errors: -errno. */
int fileh_open_write(struct fs *fs, struct fileh *h, int flags);
/* The attributes a file open for writing has (its first writable handle's). Errors: -ENOENT (none). */
int fileh_attr(struct fs *fs, uint64_t ino, struct view_attr *a);

/* Files created in directory DIR (its inode) and not yet written back: their names, sorted, each with its
 * identity (owned) and attributes. Errors: -ENOMEM. */
struct new_file {
	char *name;
	struct node_id id;
	struct view_attr a;
};
int new_files(struct fs *fs, uint64_t dir, struct new_file **out, size_t *n);
void new_files_free(struct new_file *v, size_t n);

/* Write a writable handle back if it changed (flush, fsync, release). Returns 1 if it wrote a version
 * (new, or at a new time: the directory's listing or times may change), FILEH_REWROTE if it rewrote its
 * version in place (same timestamp: nothing but that file changed), 0 if there was nothing to write.
 * Errors: as edit_put(). */
#define FILEH_REWROTE 2
int fileh_commit(struct fs *fs, struct fileh *h);

#endif
