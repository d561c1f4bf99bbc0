/* edit.c — tree writes as store mutations (see edit.h). Every function runs one write transaction: it reads
 * what it needs inside it, so nothing another writer commits in between can be lost. */
#include "edit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "xattr.h"

/* Open a scan of column ID's cells with the other options of O (its row and columns are set here).
 * Errors: as cs_scan_open(). */
static int column_scan(cs_txn *txn, const struct node_id *id, cs_read_opts o, cs_scan **s)
{
	cs_bytes row = { id->key, id->keyn }, q = { id->qual, id->qualn };
	cs_column_sel sel = { .family = id->family, .qualifier = &q };
	o.row = &row; /* (the scan copies the row and the qualifier) */
	o.ncolumns = 1;
	o.columns = &sel;
	return cs_scan_open(txn, id->table, &o, s);
}

/* The newest cell's timestamp of column ID, or -ENOENT. */
static int column_newest(cs_txn *txn, const struct node_id *id, int64_t *ts)
{
	const cs_row *r;
	cs_scan *s;
	int rc = column_scan(txn, id, (cs_read_opts){ .keys_only = true, .cells_per_column = 1 }, &s);
	if (rc)
		return rc;
	rc = cs_scan_next(s, &r);
	if (rc == 1) {
		*ts = r->cells[0].ts;
		rc = 0;
	} else if (rc == 0) {
		rc = -ENOENT;
	}
	cs_scan_close(s);
	return rc;
}

/* A bare name's write is its column's newest version: no other cell of the column (but the one at SELF, the
 * version being moved) may lie in [TS, END). -EINVAL if one is newer (the name would go on showing that
 * one), -EEXIST if one has TS (writing would replace it). A re-stamp checks up to CS_TS_MAX; a write-back
 * at a set time (edit_put) only within TS's second when TS is a whole second (a tool that rounds times, like
 * GNU tar's whole seconds, restoring a newest version behind an older one of the same second). */
static int newest_other(cs_txn *txn, const struct node_id *id, int64_t self, int64_t ts, int64_t end)
{
	const cs_row *r;
	cs_scan *s;
	int rc;

	if (end <= ts)
		return 0;
	if ((rc = column_scan(txn, id, (cs_read_opts){ .keys_only = true, .ts_start = ts, .ts_end = end }, &s)))
		return rc;
	rc = cs_scan_next(s, &r);
	if (rc == 1) {
		rc = 0;
		for (size_t i = 0; i < r->ncells && !rc; i++)
			if (r->cells[i].ts != self)
				rc = r->cells[i].ts == ts ? -EEXIST : -EINVAL;
	}
	cs_scan_close(s);
	return rc;
}

/* The timestamps of column ID's cells newer than TS, appended to *GONE (NULL: nothing to do): the cells
 * that newer_delete() removes. Errors: -ENOMEM, as the store. */
static int note_newer(cs_txn *txn, const struct node_id *id, int64_t ts, struct edit_gone *gone)
{
	const cs_row *r;
	cs_scan *s;
	int rc;

	if (!gone || ts == INT64_MAX)
		return 0;
	rc = column_scan(txn, id, (cs_read_opts){ .keys_only = true, .ts_start = ts + 1, .ts_end = CS_TS_MAX }, &s);
	if (rc)
		return rc;
	if ((rc = cs_scan_next(s, &r)) == 1) {
		rc = 0;
		for (size_t i = 0; i < r->ncells && !rc; i++) {
			if (gone->n == gone->cap) {
				size_t cap = gone->cap ? 2 * gone->cap : 8;
				int64_t *v = realloc(gone->ts, cap * sizeof(*v));
				if (!v) {
					rc = -ENOMEM;
					break;
				}
				gone->ts = v;
				gone->cap = cap;
			}
			gone->ts[gone->n++] = r->cells[i].ts;
		}
	}
	cs_scan_close(s);
	return rc;
}

/* The mutation that deletes column ID's cells newer than TS (a file replaced by what is at TS: a rename
 * onto it, a write-back at an older time). */
static cs_mutation newer_delete(const struct node_id *id, int64_t ts)
{
	return (cs_mutation){ .op = CS_DELETE_COLUMN, .family = id->family, .qualifier = { id->qual, id->qualn },
			      .ts_start = ts + 1, .ts_end = CS_TS_MAX };
}

/* A copy of one cell of file ID: the newest (a NODE_COLUMN) or exactly ID's (a NODE_VERSION). A copy,
 * because a scan's bytes may not outlive writes in the same transaction. *VAL is the caller's.
 * Errors: -ENOENT, as the store. */
static int copy_cell(cs_txn *txn, const struct node_id *id, int64_t *ts, void **val, size_t *len)
{
	cs_read_opts o = { 0 };
	const cs_row *r;
	cs_scan *s;
	int rc;

	if (id->kind == NODE_VERSION) {
		o.ts_start = id->ts;
		o.ts_end = id->ts == INT64_MAX ? CS_TS_MAX : id->ts + 1;
	} else {
		o.cells_per_column = 1;
	}
	if ((rc = column_scan(txn, id, o, &s)))
		return rc;
	rc = cs_scan_next(s, &r);
	if (rc == 1 && (id->kind != NODE_VERSION || r->cells[0].ts == id->ts)) {
		*ts = r->cells[0].ts;
		*len = r->cells[0].value.len;
		rc = (*val = malloc(*len ? *len : 1)) ? 0 : -ENOMEM;
		if (*val && *len)
			memcpy(*val, r->cells[0].value.data, *len);
	} else if (rc >= 0) {
		rc = -ENOENT;
	}
	cs_scan_close(s);
	return rc;
}

int edit_any_cell(cs_txn *txn, const char *table, const char *family)
{
	cs_column_sel sel = { .family = family };
	cs_read_opts o = { .keys_only = true, .cells_per_column = 1, .limit = 1 };
	const cs_row *r;
	cs_scan *s;
	int rc;

	if (family) {
		o.ncolumns = 1;
		o.columns = &sel;
	}
	if ((rc = cs_scan_open(txn, table, &o, &s)))
		return rc;
	rc = cs_scan_next(s, &r);
	cs_scan_close(s);
	return rc;
}

int edit_family_clash(cs_txn *txn, const char *table, const char *family)
{
	cs_read_opts o = { .keys_only = true, .cells_per_column = 1 };
	size_t fn = strlen(family);
	cs_table_info *info;
	const cs_row *r;
	cs_scan *s;
	uint8_t delim;
	int rc;

	if ((rc = cs_table_info_get(txn, table, &info)))
		return rc;
	delim = (uint8_t)info->delim;
	cs_table_info_free(info);
	if ((rc = cs_scan_open(txn, table, &o, &s)))
		return rc;
	while ((rc = cs_scan_next(s, &r)) == 1) {
		const uint8_t *k = r->key.data;
		size_t n = r->key.len;
		for (size_t i = 0, seg = 0; i <= n; i++)
			if (i == n || k[i] == delim) {
				if (i - seg == fn && !memcmp(k + seg, family, fn))
					goto found;
				seg = i + 1;
			}
	}
found:
	cs_scan_close(s);
	return rc;
}

static int ensure_family(cs_txn *txn, const char *table, const char *family, bool strict)
{
	cs_table_info *info;
	bool found = false;
	int rc = cs_table_info_get(txn, table, &info);
	if (rc)
		return rc;
	for (size_t i = 0; i < info->nfamilies && !found; i++)
		found = !strcmp(info->families[i].name, family);
	cs_table_info_free(info);
	if (found)
		return 0;
	if (strict)
		return -EPERM;
	if ((rc = edit_family_clash(txn, table, family))) /* (the daemon refuses before: target_family()) */
		return rc == 1 ? -EPERM : rc;
	return cs_family_create(txn, table, family, NULL);
}

static int finish(cs_txn *txn, int rc)
{
	if (rc) {
		cs_txn_abort(txn);
		return rc;
	}
	return cs_txn_commit(txn);
}

int edit_put(cs_store *st, const struct node_id *id, int64_t ts, const void *val, size_t len, int64_t drop_ts,
	     bool strict, int64_t *ts_out, struct edit_gone *gone)
{
	cs_mutation m[3];
	size_t n = 0;
	bool replaced = false;
	cs_txn *txn;
	int rc;

	if (id->kind != NODE_COLUMN && id->kind != NODE_VERSION)
		return -EISDIR;
	if ((rc = cs_txn_begin(st, 0, &txn)))
		return rc;
	if (id->kind == NODE_VERSION) {
		ts = id->ts;
	} else if (ts < 0) {
		int64_t newest, now = cs_now_us() / 1000 * 1000;
		rc = column_newest(txn, id, &newest);
		if (rc && rc != -ENOENT)
			return finish(txn, rc);
		ts = !rc && newest >= now ? (newest / 1000 + 1) * 1000 : now;
	} else if (ts != drop_ts) { /* (a version rewritten where it is needs no check) */
		int64_t second = ts % 1000000 || ts > INT64_MAX - 1000000 ? ts : ts + 1000000;
		if ((rc = newest_other(txn, id, drop_ts, ts, second)))
			return finish(txn, rc);
		if ((replaced = ts < INT64_MAX)) /* the file replaced: what was newer goes */
			m[n++] = newer_delete(id, ts);
		if (replaced && (rc = note_newer(txn, id, ts, gone)))
			return finish(txn, rc);
	}
	if (drop_ts >= 0 && drop_ts != ts && !(replaced && drop_ts > ts))
		m[n++] = (cs_mutation){ .op = CS_DELETE_COLUMN, .family = id->family, .qualifier = { id->qual, id->qualn },
					.ts_start = drop_ts, .ts_end = drop_ts + 1 };
	m[n++] = (cs_mutation){ .op = CS_SET_CELL, .family = id->family, .qualifier = { id->qual, id->qualn },
				.ts = ts, .value = { val, len } };
	rc = cs_row_mutate(txn, id->table, (cs_bytes){ id->key, id->keyn }, m, n);
	if (rc == -ENOENT && !(rc = ensure_family(txn, id->table, id->family, strict))) /* a new family */
		rc = cs_row_mutate(txn, id->table, (cs_bytes){ id->key, id->keyn }, m, n);
	if (!(rc = finish(txn, rc)) && ts_out)
		*ts_out = ts;
	return rc;
}

int edit_restamp(cs_store *st, const struct node_id *id, int64_t ts)
{
	cs_bytes row = { id->key, id->keyn }, q = { id->qual, id->qualn };
	cs_txn *txn;
	int64_t old = 0;
	void *val = NULL;
	size_t len = 0;
	int rc;

	if (id->kind != NODE_COLUMN)
		return id->kind == NODE_VERSION ? 0 : -EISDIR;
	if ((rc = cs_txn_begin(st, 0, &txn)))
		return rc;
	rc = copy_cell(txn, id, &old, &val, &len);
	if (!rc && old != ts && !(rc = newest_other(txn, id, old, ts, CS_TS_MAX))) {
		cs_mutation m[2] = {
			{ .op = CS_SET_CELL, .family = id->family, .qualifier = q, .ts = ts, .value = { val, len } },
			{ .op = CS_DELETE_COLUMN, .family = id->family, .qualifier = q, .ts_start = old, .ts_end = old + 1 },
		};
		rc = cs_row_mutate(txn, id->table, row, m, 2);
	}
	free(val);
	return finish(txn, rc);
}

int edit_delete(cs_store *st, const struct node_id *id, bool defer)
{
	cs_mutation m = { .op = CS_DELETE_COLUMN, .family = id->family, .qualifier = { id->qual, id->qualn } };
	cs_txn *txn;
	int rc;

	if (id->kind != NODE_COLUMN && id->kind != NODE_VERSION)
		return -EISDIR;
	if (id->kind == NODE_VERSION) {
		m.ts_start = id->ts;
		m.ts_end = id->ts == INT64_MAX ? CS_TS_MAX : id->ts + 1;
	}
	if ((rc = cs_txn_begin(st, defer ? CS_TXN_DEFER : 0, &txn)))
		return rc;
	rc = cs_row_mutate(txn, id->table, (cs_bytes){ id->key, id->keyn }, &m, 1);
	return finish(txn, rc);
}

int edit_table_create(cs_store *st, const char *name, char delim)
{
	cs_txn *txn;
	int rc = cs_txn_begin(st, 0, &txn);
	if (rc)
		return rc;
	return finish(txn, cs_table_create(txn, name, delim));
}

int edit_table_drop_empty(cs_store *st, const char *name)
{
	cs_txn *txn;
	int rc = cs_txn_begin(st, 0, &txn);
	if (rc)
		return rc;
	rc = edit_any_cell(txn, name, NULL);
	rc = rc == 1 ? -ENOTEMPTY : rc ? rc : cs_table_delete(txn, name);
	return finish(txn, rc);
}

/* The cells a move writes: CS_SET_CELL mutations holding copies of the values (a scan's bytes may not
 * outlive writes in the same transaction), owned; BYTES their total size. */
struct sets {
	cs_mutation *m;
	size_t n, cap, bytes;
};

static void sets_release(struct sets *s)
{
	for (size_t i = 0; i < s->n; i++)
		free((void *)s->m[i].value.data);
	free(s->m);
	*s = (struct sets){ 0 };
}

/* Append to S a copy of value V as column TO's cell at TS. Errors: -ENOMEM. */
static int sets_add(struct sets *s, const struct node_id *to, int64_t ts, cs_bytes v)
{
	void *val;

	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		cs_mutation *m = realloc(s->m, cap * sizeof(*m));
		if (!m)
			return -ENOMEM;
		s->m = m;
		s->cap = cap;
	}
	if (!(val = malloc(v.len ? v.len : 1)))
		return -ENOMEM;
	if (v.len)
		memcpy(val, v.data, v.len);
	s->m[s->n++] = (cs_mutation){ .op = CS_SET_CELL, .family = to->family, .qualifier = { to->qual, to->qualn },
				      .ts = ts, .value = { val, v.len } };
	s->bytes += v.len;
	return 0;
}

/* The newest cell of file ID (a column, or exactly a version's cell) older than END (CS_TS_MAX: any), or
 * with SKIP 1 the one after it, or with ALL every cell from there down, appended to S as column TO's cells
 * at their own timestamps, or (the first alone) at TO's for a version TO. Returns 1 with the first cell's
 * timestamp in *FIRST and the last one's in *LAST, 0 if there is none, or an error. */
static int take_cells(cs_txn *txn, const struct node_id *id, int64_t end, unsigned skip, bool all,
		      const struct node_id *to, struct sets *s, int64_t *first, int64_t *last)
{
	cs_read_opts o = { .cells_per_column = all ? 0 : 1 + skip, .ts_end = end };
	const cs_row *r;
	cs_scan *sc;
	int rc;

	if (id->kind == NODE_VERSION) {
		o.ts_start = id->ts;
		o.ts_end = id->ts == INT64_MAX ? CS_TS_MAX : id->ts + 1;
	}
	if ((rc = column_scan(txn, id, o, &sc)))
		return rc;
	if ((rc = cs_scan_next(sc, &r)) == 1 && r->ncells <= skip) {
		rc = 0;
	} else if (rc == 1) {
		size_t n = all && to->kind != NODE_VERSION ? r->ncells : skip + 1;
		*first = r->cells[skip].ts;
		for (size_t i = skip; i < n && rc == 1; i++) {
			*last = r->cells[i].ts;
			if ((rc = sets_add(s, to, to->kind == NODE_VERSION ? to->ts : *last, r->cells[i].value)) == 0)
				rc = 1;
		}
	}
	cs_scan_close(sc);
	return rc;
}

static bool same_row(const struct node_id *a, const struct node_id *b)
{
	return !strcmp(a->table, b->table) && a->keyn == b->keyn && !memcmp(a->key, b->key, a->keyn);
}

static bool same_column(const struct node_id *a, const struct node_id *b)
{
	return same_row(a, b) && !strcmp(a->family, b->family) && a->qualn == b->qualn &&
	       !memcmp(a->qual, b->qual, a->qualn);
}

/* A version moved onto its own column's bare name (mv q@TS q): it becomes the newest, the newer cells go. */
static int move_to_own_column(cs_txn *txn, const struct node_id *from, const struct node_id *to,
			      struct edit_gone *gone)
{
	struct sets s = { 0 };
	cs_mutation del = newer_delete(to, from->ts);
	int64_t ts;
	int rc = take_cells(txn, from, CS_TS_MAX, 0, false, to, &s, &ts, &ts); /* (only to learn that it is there) */

	sets_release(&s);
	if (rc == 0)
		return -ENOENT;
	if (rc < 0 || from->ts == INT64_MAX)
		return rc < 0 ? rc : 0;
	if ((rc = note_newer(txn, to, from->ts, gone)))
		return rc;
	return cs_row_mutate(txn, to->table, (cs_bytes){ to->key, to->keyn }, &del, 1);
}

#define MOVE_BATCH_BYTES (64u << 20) /* a move across rows writes the cells it copied in batches this large */

int edit_move(cs_store *st, const struct node_id *from, const struct node_id *to, bool strict, struct edit_gone *gone)
{
	cs_bytes frow = { from->key, from->keyn }, trow = { to->key, to->keyn };
	cs_mutation del = { .op = CS_DELETE_COLUMN, .family = from->family, .qualifier = { from->qual, from->qualn } };
	cs_mutation *all = NULL;
	struct sets s = { 0 };
	bool row = same_row(from, to), found = false, fam = false;
	int64_t newest = -1, end = CS_TS_MAX, prev = 0, first = 0, ts;
	unsigned skip = 0;
	size_t n = 0;
	cs_txn *txn;
	int rc;

	if (from->kind < NODE_COLUMN || to->kind < NODE_COLUMN)
		return -EISDIR;
	if (same_column(from, to) && (from->kind == NODE_COLUMN || (to->kind == NODE_VERSION && from->ts == to->ts)))
		return 0; /* the cell is a version of the target already */
	/* within one row, one mutation, atomic on every store; across rows only in a store with transactions */
	if (!row && !(cs_store_caps(st) & CS_CAP_TXN))
		return -EXDEV; /* mv copies and unlinks instead */
	if ((rc = cs_txn_begin(st, 0, &txn)))
		return rc;
	if (same_column(from, to))
		return (rc = finish(txn, move_to_own_column(txn, from, to, gone))) ? rc : 1;
	/* every cell of the source, newest first (one for a version, or onto a version's name): within a row,
	 * in one read (the cells go in one mutation anyway), across rows one by one, written in batches; the
	 * target's family made before the first write into it, once the source is known to be there */
	while ((rc = take_cells(txn, from, end, skip, row, to, &s, &first, &ts)) == 1) {
		if (found && first >= prev) {
			rc = -EIO; /* (a store that answered a range with a cell outside it) */
			break;
		}
		if (!found)
			newest = first;
		found = true;
		prev = ts;
		if (row || from->kind == NODE_VERSION || to->kind == NODE_VERSION || ts == 0)
			break;
		if (ts == INT64_MAX) /* (no range can end below it: the next cell is the second from the top) */
			skip = 1;
		else {
			end = ts;
			skip = 0;
		}
		if (!row && s.bytes >= MOVE_BATCH_BYTES) { /* (a store with transactions: atomic all the same) */
			if ((!fam && (rc = ensure_family(txn, to->table, to->family, strict))) ||
			    (rc = cs_row_mutate(txn, to->table, trow, s.m, s.n)))
				break;
			fam = true;
			sets_release(&s);
		}
	}
	if (rc < 0 || (!found && (rc = -ENOENT)) || (!fam && (rc = ensure_family(txn, to->table, to->family, strict))))
		goto out;
	if (from->kind == NODE_VERSION) {
		del.ts_start = from->ts;
		del.ts_end = from->ts == INT64_MAX ? CS_TS_MAX : from->ts + 1;
	}
	/* [the source's deletion first (the target may be in its row), the target's newer cells, the cells] */
	rc = -ENOMEM;
	if (!(all = malloc((s.n + 2) * sizeof(*all))))
		goto out;
	if (row)
		all[n++] = del;
	if (to->kind == NODE_COLUMN && newest < INT64_MAX) {
		all[n++] = newer_delete(to, newest); /* the target replaced: what was newer goes */
		if ((rc = note_newer(txn, to, newest, gone)))
			goto out;
	}
	if (s.n)
		memcpy(all + n, s.m, s.n * sizeof(*all));
	n += s.n;
	if (row)
		rc = cs_row_mutate(txn, from->table, frow, all, n);
	else if (!(rc = cs_row_mutate(txn, from->table, frow, &del, 1)))
		rc = cs_row_mutate(txn, to->table, trow, all, n);
out:
	free(all);
	sets_release(&s);
	return (rc = finish(txn, rc)) ? rc : 1;
}

int edit_family_drop_empty(cs_store *st, const char *table, const char *family)
{
	cs_txn *txn;
	int rc = cs_txn_begin(st, 0, &txn);
	if (rc)
		return rc;
	rc = edit_any_cell(txn, table, family);
	rc = rc == 1 ? -ENOTEMPTY : rc ? rc : cs_family_delete(txn, table, family);
	return finish(txn, rc);
}

int edit_family_ensure(cs_store *st, const char *table, const char *family)
{
	cs_txn *txn;
	int rc = cs_txn_begin(st, 0, &txn);
	if (rc)
		return rc;
	return finish(txn, ensure_family(txn, table, family, false));
}

int edit_move_keys(cs_store *st, const char *table, const uint8_t *from, size_t fromn, const uint8_t *to, size_t ton,
		   uint64_t max_cells)
{
	cs_txn *txn;
	int rc = cs_txn_begin(st, 0, &txn);
	if (rc)
		return rc;
	return finish(txn, cs_move_prefix(txn, table, (cs_bytes){ from, fromn }, (cs_bytes){ to, ton }, max_cells, NULL));
}

int edit_table_rename(cs_store *st, const char *from, const char *to, bool replace)
{
	cs_txn *txn;
	int rc = cs_txn_begin(st, 0, &txn);
	if (rc)
		return rc;
	rc = cs_table_rename(txn, from, to);
	if (rc == -EEXIST && replace) {
		int any = edit_any_cell(txn, to, NULL);
		rc = any == 1 ? -ENOTEMPTY : any ? any : cs_table_delete(txn, to);
		if (!rc)
			rc = cs_table_rename(txn, from, to);
	}
	rc = finish(txn, rc);
	return rc == -EEXIST && replace ? -ENOTEMPTY : rc;
}

/* The delimiter attribute set to VAL (SIZE bytes): it is fixed when the table is made. */
static int delim_set(cs_txn *txn, const char *table, const char *val, size_t size, int flags)
{
	cs_table_info *info;
	int rc = cs_table_info_get(txn, table, &info);
	if (rc)
		return rc;
	rc = size == 1 && val[0] == info->delim ? (flags & XATTR_CREATE ? -EEXIST : 0) : -EPERM;
	cs_table_info_free(info);
	return rc;
}

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

/* The attribute of FAMILY set to TEXT, "POLICY" or "POLICY:TYPE" (SIZE bytes, TEXT NUL-terminated). */
static int family_set(cs_txn *txn, const char *table, const char *family, char *text, size_t size, int flags)
{
	char *colon = strchr(text, ':');
	cs_value_type type = CS_TYPE_BYTES;
	int rc;

	if (colon) /* POLICY:TYPE, an aggregate family (as the attribute reads) */
		*colon = 0;
	if (strlen(text) + (colon ? strlen(colon + 1) + 1 : 0) != size || cs_check_gc_policy(text, NULL) ||
	    (colon && (cs_value_type_parse(colon + 1, &type) || type == CS_TYPE_BYTES)))
		return -EINVAL;
	rc = family_type_is(txn, table, family, type);
	if (!rc)
		rc = cs_family_set_gc(txn, table, family, text);
	if (rc == -ENOENT && !(flags & XATTR_REPLACE)) {
		int clash = edit_family_clash(txn, table, family);
		rc = clash == 1 ? -EPERM : clash ? clash : -ENOENT;
	}
	if (rc == -ENOENT)
		return flags & XATTR_REPLACE ? -ENODATA : cs_family_create_typed(txn, table, family, text, type);
	return !rc && (flags & XATTR_CREATE) ? -EEXIST : rc;
}

int edit_xattr_set(cs_store *st, const char *table, const char *name, const void *value, size_t size, int flags)
{
	char *text;
	cs_txn *txn;
	int rc;

	if (!(text = malloc(size + 1)))
		return -ENOMEM;
	memcpy(text, value, size);
	text[size] = 0;
	if ((rc = cs_txn_begin(st, 0, &txn))) {
		free(text);
		return rc;
	}
	if (!strcmp(name, XATTR_DELIM))
		rc = delim_set(txn, table, text, size, flags);
	else if (!strncmp(name, XATTR_FAMILY, strlen(XATTR_FAMILY)))
		rc = family_set(txn, table, name + strlen(XATTR_FAMILY), text, size, flags);
	else
		rc = -EOPNOTSUPP;
	free(text);
	return finish(txn, rc);
}
