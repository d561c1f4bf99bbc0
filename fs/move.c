/* move.c — renames and namings (see move.h). Each changes the store in one transaction of edit.c (or not
 * at all: a directory or a file only the daemon holds), then rewrites the identities it moved. */
#include "move.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "edit.h"
#include "fileh.h"
#include "ident.h"
#include "name.h"
#include "req.h"
#include "target.h"
#include "uring.h"
#include "watch.h"

/* What a rename moved, to rewrite the identities the daemon holds (node_rewrite): a table, a key subtree
 * of a table, or one file. */
struct move {
	enum { MOVE_TABLE, MOVE_KEYS, MOVE_FILE } kind;
	const char *table, *to_table; /* MOVE_TABLE: from, to; MOVE_KEYS: the table */
	const uint8_t *from, *to;     /* MOVE_KEYS */
	size_t fromn, ton;
	char delim;
	const struct node_id *ffrom, *fto; /* MOVE_FILE */
	bool naming;                  /* a short form given its whole name: the handles moved are named */
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

/* The same for the inode table, which keeps its own copy of *OUT. */
static bool move_node_to(const struct node_id *id, void *arg, struct node_id *out)
{
	return moved_id(id, arg, out);
}

static void move_writer(struct fileh *h, const struct node_id *id, void *arg)
{
	const struct move *m = arg;
	struct node_id nid;
	pthread_mutex_lock(&h->lock);
	if (!node_id_copy(&nid, id)) {
		node_id_free(&h->id);
		h->id = nid;
		if (m->naming)
			h->unnamed = false;
	}
	pthread_mutex_unlock(&h->lock);
}

/* After the move M of the entry with inode INO: the identities rewritten, the node named NEWNAME in
 * NEWPARENT. */
static void moved(struct fs *fs, struct move *m, uint64_t ino, uint64_t newparent, const char *newname)
{
	node_rewrite(&fs->nodes, move_node_to, move_writer, m);
	node_moved(&fs->nodes, ino, newparent, newname);
}

int move_table(struct fs *fs, const char *name, uint64_t newparent, const char *newname, unsigned int flags)
{
	struct node_id t = { .kind = NODE_DIR, .table = name, .key = (const uint8_t *)"" };
	struct move m = { .kind = MOVE_TABLE, .table = name, .to_table = newname };
	uint64_t ino = node_ino_of(&t);
	int rc;

	if (cs_check_table_name(newname))
		return -EINVAL;
	/* rename(2) replaces an empty directory (and says ENOTEMPTY for one that is not: mv's "Directory not
	 * empty") */
	WATCH_OWN(fs, rc, edit_table_rename(fs->st, name, newname, !(flags & RENAME_NOREPLACE)));
	if (!rc)
		moved(fs, &m, ino, newparent, newname);
	return rc;
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

/* Whether a file may be written as TO (a rename's target): target_family(); a version noted as such
 * (target_versions_only). */
static int file_target(struct fs *fs, cs_txn *txn, const struct node_id *to)
{
	int rc = target_family(fs, txn, to);
	if (rc || (rc = target_version_ts(fs, to)))
		return rc;
	return to->kind == NODE_VERSION ? target_versions_only(fs, txn, to) : 0;
}

/* A file onto a file name of the same table (in directory NEWPARENT). */
static int rename_file(struct fs *fs, cs_txn *txn, struct target_found *f, const struct node_id *ndir,
		       struct node *np, uint64_t newparent, const char *newname, unsigned int flags, struct move *m,
		       struct node_id *to)
{
	struct target_found t = { 0 };
	struct edit_gone gone = { 0 };
	int rc, ex;

	if ((rc = ident_resolve_new(txn, ndir, newname, false, to)) < 0)
		return rc;
	if (rc == IDENT_UNNAMED && (rc = whole_name_of(fs, txn, &f->id, newname, to)))
		return rc;
	ex = target_find(txn, ndir, newname, &t);
	node_id_free(&t.id);
	if (!ex && t.a.dir)
		return -EISDIR;
	if (!ex && (flags & RENAME_NOREPLACE))
		return -EEXIST;
	if (strcmp(to->table, f->id.table))
		return -EXDEV;
	if ((rc = file_target(fs, txn, to)))
		return rc;
	WATCH_OWN(fs, rc, edit_move(fs->st, &f->id, to, fs->strict_schema, &gone));
	if (rc > 0) { /* the file at the new name was replaced: its handles write nothing back (as after
		       * unlink), and the names of its versions newer than the source's go */
		fileh_mark_removed(fs, node_ino_of(to));
		fileh_versions_gone(fs, to, newparent, &gone, true);
	}
	free(gone.ts);
	if (rc < 0)
		return rc;
	if (to->kind == NODE_COLUMN)
		pending_col_remove(&fs->pending, node_column_ino(to));
	if (ndir->kind == NODE_DIR)
		node_set_flag(np, NODE_AS_FAMILY);
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
	struct target_found t = { 0 };
	struct node_id other;
	int rc, ex;

	if ((rc = ident_resolve_new(txn, ndir, newname, false, to)))
		return rc < 0 ? rc : -EPERM;
	ex = target_find(txn, ndir, newname, &t);
	node_id_free(&t.id);
	if (!ex && t.a.dir)
		return -EISDIR;
	if (ex == -ENOENT && !fileh_find_new(fs, txn, ndir, newname, &other)) {
		node_id_free(&other);
		ex = 0;
	}
	if (!ex && (flags & RENAME_NOREPLACE))
		return -EEXIST;
	if ((rc = file_target(fs, txn, to)))
		return rc;
	if (!node_id_equal(from, to)) /* the file there (in the store, or another new one) replaced: its
					 * handles write nothing back */
		fileh_mark_removed(fs, node_ino_of(to));
	if (ndir->kind == NODE_DIR)
		node_set_flag(np, NODE_AS_FAMILY);
	*m = (struct move){ .kind = MOVE_FILE, .ffrom = from, .fto = to };
	return 0;
}

/* A key directory (a row-key prefix) onto a new name among key directories of the same table. */
static int rename_keydir(struct fs *fs, cs_txn *txn, struct target_found *f, const struct node_id *ndir,
			 const char *newname, struct move *m, struct node_id *to)
{
	cs_table_info *info;
	struct view_attr a;
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
	WATCH_OWN(fs, rc, edit_move_keys(fs->st, to->table, f->id.key, f->id.keyn, to->key, to->keyn, MOVE_MAX_CELLS));
	if (!rc)
		pending_remove(&fs->pending, node_ino_of(to)); /* an empty directory replaced */
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
	int64_t mt;
	int rc = view_getattr(txn, to, &a);

	if (rc != -ENOENT)
		return rc ? rc : a.dir ? -ENOTEMPTY : -ENOTDIR;
	if ((rc = pending_lookup(&fs->pending, newparent, newname, &tid, &mt)))
		return rc == -ENOENT ? 0 : rc;
	rc = target_dir_empty(fs, node_ino_of(&tid));
	node_id_free(&tid);
	return rc;
}

/* An empty directory made through the mount (PID, made at MT, named NAME in PARENT): it moves where the
 * kernel moves it. */
static int rename_pending(struct fs *fs, cs_txn *txn, const struct node_id *pid, int64_t mt, uint64_t parent,
			  const char *name, const struct node_id *ndir, uint64_t newparent, const char *newname,
			  struct move *m, struct node_id *to)
{
	int rc;

	if (pending_has_children(&fs->pending, node_ino_of(pid)))
		return -EXDEV;
	if ((rc = ident_resolve_new(txn, ndir, newname, true, to)) == 1)
		return -EXDEV;
	if (rc < 0)
		return rc;
	if ((rc = dir_target_empty(fs, txn, to, newparent, newname)))
		return rc; /* rename(2) replaces only an empty directory */
	pending_remove_entry(&fs->pending, parent, name);
	if ((rc = pending_add(&fs->pending, to, newparent, newname, mt))) {
		pending_add(&fs->pending, pid, parent, name, mt); /* as it was */
		return rc;
	}
	*m = (struct move){ .kind = MOVE_FILE, .ffrom = pid, .fto = to };
	return 0;
}

int move_entry(struct fs *fs, struct node *p, uint64_t parent, const char *name, struct node *np,
	       uint64_t newparent, const char *newname, unsigned int flags)
{
	struct node_id eff = { 0 }, neff = { 0 }, to = { 0 }, pid = { 0 };
	const struct node_id *dir, *ndir;
	struct target_found f = { 0 };
	struct move m = { .kind = MOVE_FILE };
	int64_t mt;
	cs_txn *txn;
	int rc;

	if ((rc = req_txn(fs, &txn)) || (rc = req_dir(txn, p, &eff, &dir)) || (rc = req_dir(txn, np, &neff, &ndir)))
		goto out;
	rc = target_find_any(txn, dir, name, &f); /* (a tool's temporary file too, by its own bytes) */
	if (!rc && !f.a.dir)
		rc = rename_file(fs, txn, &f, ndir, np, newparent, newname, flags, &m, &to);
	else if (!rc && f.id.kind == NODE_DIR)
		rc = rename_keydir(fs, txn, &f, ndir, newname, &m, &to);
	else if (!rc)
		rc = -EXDEV; /* a family's directory: mv copies */
	else if (rc == -ENOENT && !(rc = pending_lookup(&fs->pending, parent, name, &pid, &mt)))
		rc = rename_pending(fs, txn, &pid, mt, parent, name, ndir, newparent, newname, &m, &to);
	else if (rc == -ENOENT && !(rc = fileh_find_new(fs, txn, dir, name, &f.id)))
		rc = rename_new(fs, txn, &f.id, ndir, np, newname, flags, &m, &to);
	if (!rc)
		moved(fs, &m, m.kind == MOVE_FILE ? node_ino_of(m.ffrom) : node_ino_of(&f.id), newparent, newname);
out:
	node_id_free(&f.id);
	node_id_free(&to);
	node_id_free(&pid);
	node_id_free(&eff);
	node_id_free(&neff);
	return rc;
}

/* ---- the whole name of an entry named in short form (user.cellfs.name, see xattr.h) ---- */

/* After directory FROM was named TO (its rows moved): columns below it written only as versions (pending.h)
 * stay so under their new identities. */
static void name_cols_follow(struct fs *fs, const struct node_id *from, const struct node_id *to, char delim)
{
	cs_read_opts o = { .prefix = { to->key, to->keyn }, .keys_only = true, .cells_per_column = 1 };
	const cs_row *r;
	cs_scan *sc;
	cs_txn *txn;
	uint8_t *k;

	if (!fs->pending.ncols || req_txn(fs, &txn) || cs_scan_open(txn, to->table, &o, &sc))
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
			if (!pending_col_has(&fs->pending, node_column_ino(&c)))
				continue;
			pending_col_remove(&fs->pending, node_column_ino(&c));
			c.key = r->key.data;
			c.keyn = r->key.len;
			pending_col_add(&fs->pending, node_column_ino(&c));
		}
		free(k);
	}
	cs_scan_close(sc);
}

/* Key directory N, whose name stands for the last CURN bytes of its key, named B (BN bytes): rows written
 * under the name's own bytes move to their key. */
static int name_dir(struct fs *fs, cs_txn *txn, struct node *n, size_t curn, const void *b, size_t bn)
{
	struct node_id from = { 0 }, to;
	cs_table_info *info;
	struct view_attr a;
	uint8_t *key = NULL;
	struct move m;
	size_t pre;
	int rc;

	if ((rc = node_id_copy(&from, &n->id)))
		return rc;
	to = from;
	pre = from.keyn - curn;
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
	m = (struct move){ .kind = MOVE_KEYS, .table = from.table, .from = from.key, .fromn = from.keyn, .to = to.key,
			   .ton = to.keyn, .delim = info->delim, .naming = true };
	cs_table_info_free(info);
	if (!view_getattr(txn, &from, &a)) { /* rows were written under the name's own bytes */
		WATCH_OWN(fs, rc, edit_move_keys(fs->st, from.table, from.key, from.keyn, to.key, to.keyn, 0));
		if (rc)
			goto out;
		name_cols_follow(fs, &from, &to, m.delim);
	}
	pending_rewrite(&fs->pending, move_node, &m, n->ino, node_ino_of(&to));
	node_rewrite_alias(&fs->nodes, move_node_to, move_writer, &m);
	uring_inval_dir(fs->se, n->parent);
out:
	free(key);
	node_id_free(&from);
	return rc;
}

/* File N (a column or a version) named B (BN bytes): its handles write it back under B. */
static int name_file(struct fs *fs, cs_txn *txn, struct node *n, const void *b, size_t bn)
{
	struct node_id from = { 0 }, to;
	struct move m;
	int rc;

	if ((rc = node_id_copy(&from, &n->id)))
		return rc;
	to = from;
	if (bn > CS_MAX_QUALIFIER) {
		rc = -ENAMETOOLONG;
		goto out;
	}
	to.qual = b;
	to.qualn = bn;
	m = (struct move){ .kind = MOVE_FILE, .ffrom = &from, .fto = &to, .naming = true };
	node_rewrite_alias(&fs->nodes, move_node_to, move_writer, &m);
	if (to.kind == NODE_VERSION) { /* the bare name stays absent if only versions are written */
		pending_col_remove(&fs->pending, node_column_ino(&from));
		rc = target_versions_only(fs, txn, &to);
	}
	uring_inval_dir(fs->se, n->parent);
out:
	node_id_free(&from);
	return rc;
}

int move_name(struct fs *fs, struct node *n, const void *b, size_t bn, int flags)
{
	char want[NAME_BUFSZ];
	const uint8_t *cur;
	size_t curn, litn;
	cs_txn *txn;
	int rc;

	if ((rc = req_txn(fs, &txn)))
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
	return n->id.kind == NODE_DIR ? name_dir(fs, txn, n, curn, b, bn) : name_file(fs, txn, n, b, bn);
}
