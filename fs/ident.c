/* ident.c — names as identities when writing (see ident.h): a new name's identity, a key directory turned
 * into a family's, and an identity's own part with its name.
 */
#include "ident.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "name.h"
#include "view.h"

/* Split key directory K = P<delim>X into its row part P and last segment X. Returns false if K has no
 * delimiter (a first-level directory: no row above it). */
static bool split_last(const struct node_id *dir, char delim, size_t *pn)
{
	const uint8_t *k = dir->key;
	for (size_t i = dir->keyn; i-- > 0;)
		if (k[i] == (uint8_t)delim) {
			*pn = i;
			return true;
		}
	return false;
}

/* ---- an identity's own part ---- */

int ident_part(cs_txn *txn, const struct node_id *id, const uint8_t **b, size_t *n)
{
	cs_table_info *info;
	size_t pn;
	int rc;

	switch (id->kind) {
	case NODE_DIR:
		if (!view_below_table(id))
			return -EINVAL;
		if ((rc = cs_table_info_get(txn, id->table, &info)))
			return rc;
		if (split_last(id, info->delim, &pn)) {
			*b = id->key + pn + 1;
			*n = id->keyn - pn - 1;
		} else {
			*b = id->key;
			*n = id->keyn;
		}
		cs_table_info_free(info);
		return 0;
	case NODE_COLUMN:
	case NODE_VERSION:
		*b = id->qual;
		*n = id->qualn;
		return 0;
	default:
		return -EINVAL;
	}
}

int ident_part_name(cs_txn *txn, const struct node_id *id, const void *b, size_t n, char *out)
{
	struct view_table t = { 0 };
	int rc;

	switch (id->kind) {
	case NODE_DIR:
		if ((rc = view_table_load(txn, id->table, &t)))
			return rc;
		rc = name_encode(NAME_SEGMENT, b, n, &t.seg, out, NAME_BUFSZ);
		cs_table_info_free(t.info);
		return rc;
	case NODE_COLUMN:
		return name_encode(NAME_QUALIFIER, b, n, NULL, out, NAME_BUFSZ);
	case NODE_VERSION:
		return name_encode_version(b, n, id->ts, out, NAME_BUFSZ);
	default:
		return -EINVAL;
	}
}

int ident_part_is_short(cs_txn *txn, const struct node_id *id)
{
	char name[NAME_BUFSZ];
	const uint8_t *b;
	size_t n;
	int rc;

	if (id->kind == NODE_ROOT || id->kind == NODE_FAMILY || (id->kind == NODE_DIR && !view_below_table(id)))
		return 0;
	if ((rc = ident_part(txn, id, &b, &n)) || (rc = ident_part_name(txn, id, b, n, name)) < 0)
		return rc == -EINVAL ? 0 : rc; /* (a segment with the delimiter: the table's first directory) */
	return strstr(name, "%~") != NULL;
}

/* ---- names of things that do not exist yet (writing) ---- */

int ident_effective(cs_txn *txn, const struct node_id *dir, const char *name, struct node_id *out)
{
	struct view_table t = { 0 };
	size_t pn;
	int rc;

	memset(out, 0, sizeof(*out));
	if (dir->kind != NODE_DIR || !dir->keyn || !name)
		return 0;
	if ((rc = view_table_load(txn, dir->table, &t)))
		return rc == -ENOENT ? 0 : rc;
	if (split_last(dir, t.info->delim, &pn) && dir->keyn - pn - 1 == strlen(name) &&
	    !memcmp(dir->key + pn + 1, name, dir->keyn - pn - 1) && view_is_family(t.info, name, strlen(name))) {
		struct node_id f = { .kind = NODE_FAMILY, .table = dir->table, .key = dir->key, .keyn = pn,
				     .lead_empty = false, .family = name };
		rc = node_id_copy(out, &f) ? -ENOMEM : 1;
	}
	cs_table_info_free(t.info);
	return rc;
}

static int take_id(void *arg, const char *name, const struct node_id *id, const struct view_attr *a)
{
	(void)name, (void)a;
	return node_id_copy(arg, id);
}

/* Whether the N bytes at NAME may name a family, one the table need not have (a name_segctx.is_family). */
static bool could_be_family(const void *arg, const char *name, size_t n)
{
	char f[CS_MAX_FAMILY + 1];
	(void)arg;
	if (!n || n > CS_MAX_FAMILY || memchr(name, 0, n))
		return false;
	memcpy(f, name, n);
	f[n] = 0;
	return !cs_check_family_name(f);
}

/* The qualifier a short-form file name NAME stands for while nothing holds its bytes: the name's own
 * bytes, up to its last '@' for a version (KIND NODE_VERSION). */
static size_t literal_qualn(const char *name, enum node_kind kind)
{
	return kind == NODE_VERSION ? (size_t)(strrchr(name, '@') - name) : strlen(name);
}

int ident_resolve_new(cs_txn *txn, const struct node_id *dir, const char *name, bool want_dir, struct node_id *out)
{
	struct view_table t = { 0 };
	struct node_id id = { 0 };
	name_result res;
	uint8_t *key = NULL;
	size_t keyn, pn;
	bool escaped_family, unnamed = false;
	int rc;

	memset(out, 0, sizeof(*out));
	if (strlen(name) > NAME_MAX)
		return -ENAMETOOLONG;
	if (dir->kind == NODE_ROOT) {
		if (!want_dir)
			return -EPERM; /* the top holds tables only */
		if (cs_check_table_name(name))
			return -EINVAL;
		id = (struct node_id){ .kind = NODE_DIR, .table = name, .key = (const uint8_t *)"" };
		return node_id_copy(out, &id);
	}
	if (dir->kind > NODE_FAMILY)
		return -ENOTDIR;
	if ((rc = view_table_load(txn, dir->table, &t)))
		return rc;
	if (dir->kind == NODE_FAMILY) {
		if (want_dir) {
			rc = -EPERM; /* a family holds columns only */
			goto out;
		}
		rc = view_column_name(dir, name, &id, &res);
		if (rc < 0) {
			rc = rc == -ENOENT ? -EINVAL : rc;
			goto out;
		}
		if (!rc && res.partial) {
			uint8_t *q = NULL;
			bool held = !(rc = view_find_qualifier(txn, dir, &res, &q, &id.qualn)); /* (its versions) */
			if (rc && rc != -ENOENT)
				goto out;
			/* else a short form nothing holds: its own bytes until named */
			id.qual = held ? q : (const uint8_t *)name;
			if (!held)
				id.qualn = literal_qualn(name, id.kind);
			rc = node_id_copy(out, &id);
			free(q);
			if (!rc && !held)
				rc = IDENT_UNNAMED;
			goto out;
		}
		rc = node_id_copy(out, &id);
		goto out;
	}
	if (!want_dir) {
		/* A file in key directory P<delim>F: row P, family F. */
		if (!view_below_table(dir) || !split_last(dir, t.info->delim, &pn) || !pn) {
			rc = -EPERM; /* no row above this directory to hold a cell */
			goto out;
		}
		{
			size_t fn = dir->keyn - pn - 1;
			char fam[CS_MAX_FAMILY + 1];
			if (fn > CS_MAX_FAMILY || !fn) {
				rc = -EINVAL;
				goto out;
			}
			memcpy(fam, dir->key + pn + 1, fn);
			fam[fn] = 0;
			if (strlen(fam) != fn || cs_check_family_name(fam)) {
				rc = -EINVAL;
				goto out;
			}
			if (view_is_family(t.info, fam, fn)) {
				rc = -EPERM; /* reached as a key segment (its name escaped): not the family */
				goto out;
			}
			struct node_id f = { .kind = NODE_FAMILY, .table = dir->table, .key = dir->key, .keyn = pn,
					     .family = fam };
			cs_table_info_free(t.info);
			return ident_resolve_new(txn, &f, name, false, out);
		}
	}
	if (view_below_table(dir) && view_is_family(t.info, name, strlen(name))) {
		id = (struct node_id){ .kind = NODE_FAMILY, .table = dir->table, .key = dir->key, .keyn = dir->keyn,
				       .family = name };
		rc = node_id_copy(out, &id);
		goto out;
	}
	rc = name_decode(NAME_SEGMENT, name, &t.seg, &res);
	if (rc == -ENOENT) {
		/* A segment named like a family the table does not have yet, escaped as it will need to be
		 * once that family exists (a backup restored in any order makes it before the family). */
		name_segctx later = t.seg;
		later.is_family = could_be_family;
		rc = name_decode(NAME_SEGMENT, name, &later, &res) ? -EINVAL : 1;
	}
	if (rc < 0)
		goto out;
	escaped_family = rc == 1;
	if (res.partial) {
		if ((rc = view_lookup_listed(txn, dir, name, take_id, out)) != -ENOENT)
			goto out; /* it exists: that directory */
		/* a short form nothing holds: its own bytes until named */
		if (memchr(name, t.info->delim, strlen(name))) {
			rc = -ENAMETOOLONG;
			goto out;
		}
		res.len = strlen(name);
		memcpy(res.bytes, name, res.len);
		unnamed = true;
	}
	rc = view_child_key(&t, dir, res.bytes, res.len, &key, &keyn);
	if (rc == -ENAMETOOLONG && view_below_table(dir) && !escaped_family && could_be_family(NULL, name, strlen(name))) {
		/* no room for another segment: a name that can be a family's is the row's new family */
		id = (struct node_id){ .kind = NODE_FAMILY, .table = dir->table, .key = dir->key, .keyn = dir->keyn,
				       .family = name };
		rc = node_id_copy(out, &id);
		goto out;
	}
	if (rc)
		goto out;
	id = (struct node_id){ .kind = NODE_DIR, .table = dir->table, .key = key, .keyn = keyn, .lead_empty = !keyn };
	rc = node_id_copy(out, &id);
	if (!rc && escaped_family)
		rc = 1;
	if (!rc && unnamed)
		rc = IDENT_UNNAMED;
out:
	free(key);
	cs_table_info_free(t.info);
	return rc;
}

/* ---- the mount's root (-o only=) ---- */

static int take_root(void *arg, const char *name, const struct node_id *id, const struct view_attr *a)
{
	(void)name, (void)a;
	node_id_free(arg);
	return node_id_copy(arg, id);
}

int ident_root(cs_txn *txn, const char *spec, struct node_id *out, char *why, size_t whyn)
{
	struct node_id top = { .kind = NODE_ROOT };
	cs_table_info *info;
	const char *seg = spec, *slash;
	char name[NAME_MAX + 2];
	size_t n;
	int rc;

	memset(out, 0, sizeof(*out));
	*why = '\0';
	for (bool first = true;; first = false, seg = slash + 1) {
		slash = strchr(seg, '/');
		n = slash ? (size_t)(slash - seg) : strlen(seg);
		if (!n) {
			snprintf(why, whyn, "an empty %s (give TABLE or TABLE/PREFIX, PREFIX one or more key segments "
				 "as the mount names them: quotes/NASDAQ)", first ? "table name" : "segment");
			rc = -EINVAL;
			goto fail;
		}
		if (n > NAME_MAX) {
			snprintf(why, whyn, "\"%.*s...\" is longer than a file name", 64, seg);
			rc = -ENAMETOOLONG;
			goto fail;
		}
		memcpy(name, seg, n);
		name[n] = '\0';
		if (first) {
			if (cs_check_table_name(name)) {
				snprintf(why, whyn, "\"%s\" is not a table name (Bigtable allows [_a-zA-Z0-9][-_.a-zA-Z0-9]*, "
					 "at most 50 bytes)", name);
				rc = -EINVAL;
				goto fail;
			}
			if ((rc = cs_table_info_get(txn, name, &info))) {
				if (rc == -ENOENT)
					snprintf(why, whyn, "no table \"%s\" in the store", name);
				goto fail;
			}
			cs_table_info_free(info);
			rc = view_lookup(txn, &top, name, take_root, out);
		} else {
			struct node_id next = { 0 };
			rc = view_lookup(txn, out, name, take_root, &next);
			if (rc == -ENOENT) /* a prefix with no rows yet: the directory mkdir would make */
				rc = ident_resolve_new(txn, out, name, true, &next);
			if (rc >= 0 && next.kind == NODE_FAMILY) {
				snprintf(why, whyn, "\"%s\" is family %s's directory, not a key segment (only= takes a "
					 "table and key segments)", name, next.family);
				rc = -ENOTDIR;
			} else if (rc == 1 || rc == IDENT_UNNAMED || rc == -EINVAL || rc == -ENOENT) {
				snprintf(why, whyn, "\"%s\" is not the name of a key segment as the mount shows it "
					 "(bytes escaped as %%XX, a family's name as a segment escaped)", name);
				rc = -EINVAL;
			} else if (rc == -ENAMETOOLONG) {
				snprintf(why, whyn, "\"%s\": the row-key prefix would be over %d bytes", name, CS_MAX_ROW_KEY);
			}
			node_id_free(out);
			if (rc) {
				node_id_free(&next);
				goto fail;
			}
			*out = next;
		}
		if (rc)
			goto fail;
		if (!slash)
			return 0;
	}
fail:
	node_id_free(out);
	return rc;
}
