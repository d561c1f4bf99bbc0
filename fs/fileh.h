/* fileh.h — open files (fileh.c). A handle holds a copy of the value taken at open, so a reader sees one
 * consistent value; a handle open for writing edits its copy and writes it back as one version on flush,
 * fsync and release. Every handle is in fs->handles (under fs->hlock) while open; writable ones are also
 * on their node's list of writers (node_add_writer). */
#ifndef CELLFS_FILEH_H
#define CELLFS_FILEH_H

#include "fs.h"
#include "view.h"

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

/* A new handle: no file yet (ID zeroed), no time set or written; NULL if out of memory. Free it with
 * fileh_free() (which accepts NULL): its copy, its identity and itself. */
struct fileh *fileh_alloc(void);
void fileh_free(struct fileh *h);

/* The handle FI carries (fi->fh), or NULL. */
struct fileh *fileh_of(struct fuse_file_info *fi);

/* Enter H in fs->handles once it is open / take it out at its release. */
void fileh_track(struct fs *fs, struct fileh *h);
void fileh_untrack(struct fs *fs, struct fileh *h);

/* Free the handles still open once the session has ended: the kernel's RELEASE for a file closed just
 * before an unmount or a signal may never have reached the daemon. Nothing is written back: a handle
 * commits on close() and fsync(), which have returned. */
void fileh_release_all(struct fs *fs);

/* Make H (its ID set, and its INO if the file has one) writable, as opened with FLAGS on an existing file:
 * its copy is the file's value (none with O_TRUNC), or for a file created and not written back yet what its
 * writer has written so far (fileh_read_new); a file gone since the kernel looked it up is written back as
 * a new one. Errors: -EROFS, -ENOMEM, as the store. */
int fileh_open_write(struct fs *fs, struct fileh *h, int flags);

/* Write SIZE bytes at BUF into writable H's copy at OFF (at its end for O_APPEND). Errors: -EFBIG (past the
 * store's value limit: from then on H writes nothing back), -ENOMEM. */
int fileh_write(struct fs *fs, struct fileh *h, const char *buf, size_t size, off_t off);

/* Cut or zero-extend writable H's copy to SIZE. Errors: -EFBIG, -ENOMEM. */
int fileh_truncate(struct fs *fs, struct fileh *h, uint64_t size);

/* Write writable H back if it changed. Returns 1 if it wrote a version (new, or at a new time: the
 * directory's listing or times may change), FILEH_REWROTE if it rewrote its version in place (same
 * timestamp: nothing but that file changed), 0 if there was nothing to write.
 * Errors: -EFBIG (H is too_big), -ENAMETOOLONG (H is unnamed), as edit_put(). */
#define FILEH_REWROTE 2
int fileh_commit(struct fs *fs, struct fileh *h);

/* The write-back of a close() (AT_CLOSE) or fsync(): fileh_commit(), the directory's listing dropped from
 * the kernel after a new version, and the error kept as the one returned (the release does not retry it).
 * On a store whose data expires (fs->expiring: each write-back is a call to a service), a close() of a
 * file made by this handle and not written yet writes nothing: the next write-back (a later close of a
 * dup'd descriptor, fsync, or the release) makes the version. Returns 0 or the error of fileh_commit(). */
int fileh_flush(struct fs *fs, struct fileh *h, bool at_close);

/* The release of H on file INO: a writable handle writes back what it has not (unless close() returned
 * its error already) and leaves its node; then H is untracked and freed. Errors are logged. */
void fileh_release(struct fs *fs, struct fileh *h, uint64_t ino);

/* The attributes writable H gives its file. */
void fileh_attr_of(struct fileh *h, struct view_attr *a);

/* A time TS (>= 0) set on file INO while handles have it open for writing becomes theirs (the version's
 * when it is written back; at once for a handle that has written back everything already). TS -1 sets
 * nothing. *A gets the attributes the first handle gives the file. Returns 1 if INO has writable handles,
 * 0 if it has none (*A untouched), or the error of a write-back done at once (as fileh_commit()). */
int fileh_set_ts(struct fs *fs, uint64_t ino, int64_t ts, struct view_attr *a);

/* The attributes a file open for writing has (its first writable handle's). Errors: -ENOENT (none). */
int fileh_attr(struct fs *fs, uint64_t ino, struct view_attr *a);

/* The attributes of file INO as a handle open for reading on it has them (the file removed since, as
 * POSIX keeps an open file until its last close): its value, nlink 0. Errors: -ENOENT (no such handle). */
int fileh_read_attr(struct fs *fs, uint64_t ino, struct view_attr *a);

/* File INO was removed (unlink, or replaced by a rename): its writable handles write nothing back. */
void fileh_mark_removed(struct fs *fs, uint64_t ino);

/* The versions GONE of column COL (a file of directory PARENT, its family directory) were removed, the
 * file replaced (edit_put, edit_move): the kernel forgets their names soon (watch_inval_later), and if
 * HANDLES their writable handles write nothing back (fileh_mark_removed: not under the node table's lock,
 * which it takes). */
struct edit_gone;
void fileh_versions_gone(struct fs *fs, const struct node_id *col, uint64_t parent, const struct edit_gone *gone,
			 bool handles);

/* A file created as NAME in DIR and not written back yet, which only its handles hold: its identity into
 * *ID (owned). Errors: -ENOENT (there is none), as ident_resolve_new(). */
int fileh_find_new(struct fs *fs, cs_txn *txn, const struct node_id *dir, const char *name, struct node_id *id);

/* A copy of what the writer of file INO, created and not written back yet, has written so far (a file
 * opened for reading by name while its creator still writes it): into *BUF (the caller frees it), *LEN, and
 * its time into *MTIME. Errors: -ENOENT (INO is no such file), -ENOMEM. */
int fileh_read_new(struct fs *fs, uint64_t ino, void **buf, size_t *len, int64_t *mtime);

/* Files created in directory DIR (its inode) and not yet written back: their names, sorted, each with its
 * identity and attributes; *OUT the caller's, freed with fileh_new_files_free(). Errors: -ENOMEM. */
struct fileh_new {
	char *name;
	struct node_id id;
	struct view_attr a;
};
int fileh_new_files(struct fs *fs, uint64_t dir, struct fileh_new **out, size_t *n);
void fileh_new_files_free(struct fileh_new *v, size_t n);

#endif
