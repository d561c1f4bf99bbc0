/* share.h — what a shared mount shows, as gcsfuse's users expect it: `-o only=TABLE[/PREFIX]` (one table
 * or one key prefix as the root) and `-o uid=,gid=,file_mode=,dir_mode=` (the owner and modes of every
 * entry). The options as given (struct share_opts, filled by cellfs.c's option table), read into the
 * daemon's context (share.c). The root is resolved by ident_root(); this module says what is wrong. */
#ifndef CELLFS_SHARE_H
#define CELLFS_SHARE_H

#include "fs.h"

/* The options, as fuse_opt_parse() stores them ("only=%s" and so on): strings the caller frees with
 * share_opts_release(), NULL where not given. */
struct share_opts {
	char *only;                   /* TABLE or TABLE/SEG/... */
	char *uid, *gid;              /* a number, or a user's (group's) name */
	char *file_mode, *dir_mode;   /* octal permission bits */
};
void share_opts_release(struct share_opts *o);

/* FS's uid, gid, file_mode and dir_mode from O: those not given are the mounting user's uid and gid,
 * 0644 and 0755. Returns 0, or -1 with one line on stderr naming the option and what is wrong with it (a
 * name no user or group has, a mode that is not octal or over 07777). Before the daemon starts. */
int share_owner(const struct share_opts *o, struct fs *fs);

/* Resolve -o only=ONLY in store ST (ident_root(), in a read transaction of its own) and, with NODES, make
 * it the root of that inode table (node_set_root()); without, only check it. Returns 0, or a negative
 * errno with one line logged (fuse_log) naming the value and what is wrong. */
int share_root(cs_store *st, const char *only, struct node_table *nodes);

#endif
