/* share.c — a shared mount's options (see share.h): the owner and modes every entry shows, and the root
 * -o only= names. */
#include "share.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ident.h"

void share_opts_release(struct share_opts *o)
{
	free(o->only);
	free(o->uid);
	free(o->gid);
	free(o->file_mode);
	free(o->dir_mode);
	memset(o, 0, sizeof(*o));
}

/* TEXT as a decimal id below (id_t)-1 (which means "unchanged" to chown): 0, or -EINVAL. */
static int parse_id(const char *text, unsigned long *out)
{
	char *end;
	if (*text < '0' || *text > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoul(text, &end, 10);
	return errno || *end || *out >= (unsigned long)(uid_t)-1 ? -EINVAL : 0;
}

/* TEXT as octal permission bits, at most 07777: 0, or -EINVAL. */
static int parse_mode(const char *text, mode_t *out)
{
	char *end;
	unsigned long m;
	if (*text < '0' || *text > '7' || strlen(text) > 5)
		return -EINVAL;
	m = strtoul(text, &end, 8);
	if (*end || m > 07777)
		return -EINVAL;
	*out = (mode_t)m;
	return 0;
}

int share_owner(const struct share_opts *o, struct fs *fs)
{
	unsigned long id;

	fs->uid = getuid();
	fs->gid = getgid();
	fs->file_mode = 0644;
	fs->dir_mode = 0755;
	if (o->uid) {
		struct passwd *pw;
		if (!parse_id(o->uid, &id)) {
			fs->uid = (uid_t)id;
		} else if (*o->uid && (pw = getpwnam(o->uid))) {
			fs->uid = pw->pw_uid;
		} else {
			fprintf(stderr, "cellfs: -o uid=%s: not a user id (a number) or a user's name\n", o->uid);
			return -1;
		}
	}
	if (o->gid) {
		struct group *gr;
		if (!parse_id(o->gid, &id)) {
			fs->gid = (gid_t)id;
		} else if (*o->gid && (gr = getgrnam(o->gid))) {
			fs->gid = gr->gr_gid;
		} else {
			fprintf(stderr, "cellfs: -o gid=%s: not a group id (a number) or a group's name\n", o->gid);
			return -1;
		}
	}
	if (o->file_mode && parse_mode(o->file_mode, &fs->file_mode)) {
		fprintf(stderr, "cellfs: -o file_mode=%s: not permission bits in octal (0644, 0640; at most 07777)\n",
			o->file_mode);
		return -1;
	}
	if (o->dir_mode && parse_mode(o->dir_mode, &fs->dir_mode)) {
		fprintf(stderr, "cellfs: -o dir_mode=%s: not permission bits in octal (0755, 0750; at most 07777)\n",
			o->dir_mode);
		return -1;
	}
	return 0;
}

int share_root(cs_store *st, const char *only, struct node_table *nodes)
{
	struct node_id root = { 0 };
	const char *name = strrchr(only, '/');
	char why[512];
	cs_txn *txn;
	int rc;

	if (!(rc = cs_txn_begin(st, CS_TXN_RDONLY, &txn))) {
		rc = ident_root(txn, only, &root, why, sizeof(why));
		cs_txn_abort(txn);
	} else {
		why[0] = '\0';
	}
	/* the root's name in its parent: its last segment's (a table's directory has no name to follow) */
	if (!rc && nodes && (rc = node_set_root(nodes, &root, name ? name + 1 : only)))
		why[0] = '\0';
	if (rc && why[0])
		fuse_log(FUSE_LOG_ERR, "cellfs: -o only=%s: %s\n", only, why);
	else if (rc)
		fuse_log(FUSE_LOG_ERR, "cellfs: -o only=%s: cannot read the store: %s\n", only,
			 cs_last_error() ? cs_last_error() : strerror(-rc));
	node_id_free(&root);
	return rc;
}
