/* view.c — the store seen as a tree (see view.h and fs/CONTRACT.md, "The tree").
 *
 * A key directory stands for a row-key prefix K = s1#...#sn (the table itself when n = 0; K is empty for
 * n = 1 too, the empty first segment of keys that start with '#', which node_id.lead_empty tells). It lists
 * the families of row K (if that row exists) and then, streaming in key order, the distinct next segments
 * of the rows under K#. A segment whose rows are all deeper (K#s#...) is found at its first row and the
 * listing then seeks past K#s# in one step, so a directory of a million rows with few distinct next
 * segments costs a few seeks, and memory stays flat. Directory times are stable: a key directory carries
 * its table's creation time, a family directory its newest cell's timestamp. Directories other than
 * family directories report one link ("not counted", as tools like find understand) because counting
 * their subdirectories would mean listing them.
 */
#include "view.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool view_is_family(const void *arg, const char *name, size_t n)
{
	const cs_table_info *info = arg;
	size_t lo = 0, hi = info->nfamilies;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const char *f = info->families[mid].name;
		int c = strncmp(f, name, n);
		if (!c)
			c = f[n] ? 1 : 0;
		if (!c)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

int view_table_load(cs_txn *txn, const char *table, struct view_table *t)
{
	int rc = cs_table_info_get(txn, table, &t->info);
	if (rc)
		return rc;
	t->seg.delim = (unsigned char)t->info->delim;
	t->seg.is_family = view_is_family;
	t->seg.arg = t->info;
	return 0;
}

/* ---- existence checks, each one small scan ---- */

/* Read row KEY's first (or only: PER_ROW 0) cells, newest per column, in FAMILY or any: cs_scan_next's
 * result, with *R valid until the caller closes *S (opened whatever the result). */
static int scan_row(cs_txn *txn, const char *table, const uint8_t *key, size_t keyn, const char *family,
		    uint32_t per_row, cs_scan **s, const cs_row **r)
{
	cs_bytes row = { key, keyn };
	cs_column_sel sel = { .family = family };
	cs_read_opts o = { .row = &row, .keys_only = true, .cells_per_column = 1, .cells_per_row = per_row,
			   .ncolumns = family ? 1 : 0, .columns = family ? &sel : NULL };
	int rc;

	*s = NULL;
	if ((rc = cs_scan_open(txn, table, &o, s)))
		return rc;
	return cs_scan_next(*s, r);
}

/* The newest timestamp of row KEY's cells (in FAMILY, or any), or -ENOENT if it has none. */
static int row_newest(cs_txn *txn, const char *table, const uint8_t *key, size_t keyn, const char *family,
		      int64_t *newest)
{
	const cs_row *r;
	cs_scan *s;
	int rc;

	if (!keyn)
		return -ENOENT; /* the empty first segment: row keys are never empty */
	rc = scan_row(txn, table, key, keyn, family, 0, &s, &r);
	if (rc == 1) {
		*newest = 0;
		for (size_t i = 0; i < r->ncells; i++)
			if (r->cells[i].ts > *newest)
				*newest = r->cells[i].ts;
		rc = 0;
	} else if (rc == 0) {
		rc = -ENOENT;
	}
	cs_scan_close(s);
	return rc;
}

/* Whether row KEY has a cell (in FAMILY, or any): 1, 0, or an error. One cell is read, however wide the
 * row (cells_per_row), where row_newest reads every column. */
static int row_has_cells(cs_txn *txn, const char *table, const uint8_t *key, size_t keyn, const char *family)
{
	const cs_row *r;
	cs_scan *s;
	int rc;

	if (!keyn)
		return 0; /* the empty first segment: row keys are never empty */
	rc = scan_row(txn, table, key, keyn, family, 1, &s, &r);
	cs_scan_close(s);
	return rc;
}

/* Whether some row starts with PREFIX (PREFIXN > 0). */
static int prefix_exists(cs_txn *txn, const char *table, const uint8_t *prefix, size_t prefixn)
{
	cs_read_opts o = { .prefix = { prefix, prefixn }, .keys_only = true, .cells_per_column = 1, .limit = 1 };
	const cs_row *r;
	cs_scan *s;
	int rc = cs_scan_open(txn, table, &o, &s);
	if (rc)
		return rc;
	rc = cs_scan_next(s, &r);
	cs_scan_close(s);
	return rc;
}

bool view_below_table(const struct node_id *d)
{
	return d->keyn || d->lead_empty;
}

int view_child_key(const struct view_table *t, const struct node_id *dir, const void *b, size_t n, uint8_t **key,
		   size_t *keyn)
{
	size_t kn = view_below_table(dir) ? dir->keyn + 1 + n : n;
	uint8_t *k;

	if (kn > CS_MAX_ROW_KEY)
		return -ENAMETOOLONG;
	if (!(k = malloc(kn + 1)))
		return -ENOMEM;
	memcpy(k, dir->key, dir->keyn);
	if (view_below_table(dir))
		k[dir->keyn] = (uint8_t)t->info->delim;
	memcpy(k + kn - n, b, n);
	*key = k;
	*keyn = kn;
	return 0;
}

/* Whether key directory K (below its table) exists: row K, or rows under K#. */
static int keydir_exists(cs_txn *txn, const struct view_table *t, const uint8_t *key, size_t keyn)
{
	uint8_t *p;
	int rc;

	if ((rc = row_has_cells(txn, t->info->name, key, keyn, NULL)))
		return rc;
	if (!(p = malloc(keyn + 1)))
		return -ENOMEM;
	memcpy(p, key, keyn);
	p[keyn] = (uint8_t)t->info->delim;
	rc = prefix_exists(txn, t->info->name, p, keyn + 1);
	free(p);
	return rc;
}

/* One cell: the newest of F:Q (TS < 0) or exactly F:Q@TS. Sets *A, and *VAL (caller frees) if VAL. */
static int cell_get(cs_txn *txn, const struct node_id *id, int64_t ts, struct view_attr *a, void **val, size_t *vlen)
{
	cs_bytes row = { id->key, id->keyn }, q = { id->qual, id->qualn };
	cs_column_sel sel = { .family = id->family, .qualifier = &q };
	cs_read_opts o = { .row = &row, .ncolumns = 1, .columns = &sel, .keys_only = !val };
	const cs_row *r;
	cs_scan *s;
	int rc;

	if (ts >= 0) {
		o.ts_start = ts;
		o.ts_end = ts == INT64_MAX ? CS_TS_MAX : ts + 1;
	} else {
		o.cells_per_column = 1;
	}
	if ((rc = cs_scan_open(txn, id->table, &o, &s)))
		return rc;
	rc = cs_scan_next(s, &r);
	if (rc == 1 && (ts < 0 || r->cells[0].ts == ts)) {
		const cs_cell *c = &r->cells[0];
		a->dir = false;
		a->size = c->value_len;
		a->mtime_us = c->ts;
		a->nlink = 1;
		rc = 0;
		if (val) {
			*vlen = c->value.len;
			if (!(*val = node_dup_bytes(c->value.data, c->value.len)))
				rc = -ENOMEM;
		}
	} else if (rc >= 0) {
		rc = -ENOENT;
	}
	cs_scan_close(s);
	return rc;
}

static void dir_attr(struct view_attr *a, int64_t mtime, uint32_t nlink)
{
	a->dir = true;
	a->size = 0;
	a->mtime_us = mtime;
	a->nlink = nlink;
}

static void (*skip_hook)(const char *table);

void view_set_skip_hook(void (*fn)(const char *table))
{
	skip_hook = fn;
}

/* The store's tables the root shows, into *NAMES and *N (cs_strv_free()): all but those whose names
 * cellfs's rules refuse (cs_check_table_name()), which no lookup could find and no path could name; a
 * Bigtable instance may hold such a table, made by another client through the emulator, which takes any
 * name. Each one left out goes to the skip hook. */
static int root_tables(cs_txn *txn, char ***names, size_t *n)
{
	size_t kept = 0;
	int rc = cs_table_list(txn, names, n);
	if (rc)
		return rc;
	for (size_t i = 0; i < *n; i++) {
		if (!cs_check_table_name((*names)[i])) {
			(*names)[kept++] = (*names)[i];
			continue;
		}
		if (skip_hook)
			skip_hook((*names)[i]);
		free((*names)[i]);
	}
	*n = kept;
	return 0;
}

/* ---- attributes ---- */

static int root_attr(cs_txn *txn, struct view_attr *a)
{
	char **names;
	size_t n;
	int rc = root_tables(txn, &names, &n);
	if (rc)
		return rc;
	cs_strv_free(names, n);
	dir_attr(a, 0, (uint32_t)(2 + n));
	return 0;
}

int view_getattr(cs_txn *txn, const struct node_id *id, struct view_attr *a)
{
	struct view_table t = { 0 };
	int64_t ts;
	int rc;

	switch (id->kind) {
	case NODE_ROOT:
		return root_attr(txn, a);
	case NODE_DIR:
		if ((rc = view_table_load(txn, id->table, &t)))
			return rc;
		rc = view_below_table(id) ? keydir_exists(txn, &t, id->key, id->keyn) : 1;
		if (rc == 1) {
			dir_attr(a, t.info->created, 1);
			rc = 0;
		} else if (rc == 0) {
			rc = -ENOENT;
		}
		cs_table_info_free(t.info);
		return rc;
	case NODE_FAMILY:
		if ((rc = row_newest(txn, id->table, id->key, id->keyn, id->family, &ts)))
			return rc;
		dir_attr(a, ts, 2);
		return 0;
	case NODE_COLUMN:
		return cell_get(txn, id, -1, a, NULL, NULL);
	case NODE_VERSION:
		return cell_get(txn, id, id->ts, a, NULL, NULL);
	}
	return -EINVAL;
}

int view_exists(cs_txn *txn, const struct node_id *id)
{
	struct view_attr a;
	int rc;

	if (id->kind == NODE_FAMILY)
		return row_has_cells(txn, id->table, id->key, id->keyn, id->family);
	rc = view_getattr(txn, id, &a);
	return rc == -ENOENT ? 0 : rc ? rc : 1;
}

int view_read(cs_txn *txn, const struct node_id *id, void **buf, size_t *len)
{
	struct view_attr a;
	return view_read_attr(txn, id, buf, len, &a);
}

int view_read_attr(cs_txn *txn, const struct node_id *id, void **buf, size_t *len, struct view_attr *a)
{
	if (id->kind < NODE_COLUMN)
		return -EISDIR;
	return cell_get(txn, id, id->kind == NODE_VERSION ? id->ts : -1, a, buf, len);
}

/* ---- listings ---- */

void view_pos_release(struct view_pos *pos)
{
	free(pos->resume);
	memset(pos, 0, sizeof(*pos));
}

static int set_resume(struct view_pos *pos, const uint8_t *k, size_t n, int extra)
{
	uint8_t *r = malloc(n + 1);
	if (!r)
		return -ENOMEM;
	memcpy(r, k, n);
	if (extra >= 0)
		r[n++] = (uint8_t)extra;
	free(pos->resume);
	pos->resume = r;
	pos->resumen = n;
	pos->resume_set = true;
	return 0;
}

static int list_root(cs_txn *txn, struct view_pos *pos, view_emit_fn emit, void *arg)
{
	char **names;
	size_t n;
	int rc = root_tables(txn, &names, &n);
	if (rc)
		return rc;
	for (; pos->index < n; pos->index++) {
		struct node_id id = { .kind = NODE_DIR, .table = names[pos->index], .key = (const uint8_t *)"" };
		struct view_attr a;
		cs_table_info *info;
		if ((rc = cs_table_info_get(txn, names[pos->index], &info)) == -ENOENT) {
			rc = 0; /* deleted since it was listed (Bigtable: no snapshot) */
			continue;
		}
		if (rc)
			break;
		dir_attr(&a, info->created, 1);
		cs_table_info_free(info);
		if ((rc = emit(arg, names[pos->index], &id, &a)))
			break;
	}
	if (!rc)
		pos->phase = 2;
	cs_strv_free(names, n);
	return rc < 0 ? rc : 0;
}

/* Phase 0 of a key directory: the families row K has cells in. */
static int list_families(cs_txn *txn, const struct node_id *dir, struct view_pos *pos, view_emit_fn emit, void *arg)
{
	cs_bytes row = { dir->key, dir->keyn };
	cs_read_opts o = { .row = &row, .keys_only = true, .cells_per_column = 1 };
	const cs_row *r;
	cs_scan *s;
	uint64_t k = 0;
	int rc;

	if (!dir->keyn) {
		pos->phase = 1;
		return 0;
	}
	if ((rc = cs_scan_open(txn, dir->table, &o, &s)))
		return rc;
	rc = cs_scan_next(s, &r);
	for (size_t i = 0; rc == 1 && i < r->ncells;) {
		const char *fam = r->cells[i].family;
		int64_t newest = 0;
		for (; i < r->ncells && r->cells[i].family == fam; i++)
			if (r->cells[i].ts > newest)
				newest = r->cells[i].ts;
		if (k++ < pos->index)
			continue;
		struct node_id id = { .kind = NODE_FAMILY, .table = dir->table, .key = dir->key, .keyn = dir->keyn,
				      .family = fam };
		struct view_attr a;
		dir_attr(&a, newest, 2);
		int e = emit(arg, fam, &id, &a);
		if (e) {
			cs_scan_close(s);
			return e < 0 ? e : 0;
		}
		pos->index++;
	}
	cs_scan_close(s);
	if (rc < 0)
		return rc;
	pos->phase = 1;
	pos->index = 0;
	return 0;
}

/* The rows a segment listing's scan returned without a deeper segment that are prefixes of the row at
 * hand (a chain: "a", "ab", "ab!"), so that a deeper row "ab#x" knows whether row "ab" was listed. */
#define PLAIN_MAX 8
struct plain_rows {
	uint8_t *key[PLAIN_MAX];
	size_t len[PLAIN_MAX];
	size_t n;
	bool lost; /* one was not kept (more than PLAIN_MAX, or no memory) */
};

/* Whether row KEY[0..N) was returned by the scan that started at START (rows >= START): 1 (it was, so its
 * segment is listed), 0 (it does not exist: the scan would have returned it before the rows it is a prefix
 * of), -1 (not known from the scan: it lies before START, or a row was not kept). */
static int plain_seen(const struct plain_rows *p, const uint8_t *key, size_t n, const uint8_t *start, size_t startn)
{
	int c = memcmp(key, start, n < startn ? n : startn);
	for (size_t i = 0; i < p->n; i++)
		if (p->len[i] == n && !memcmp(p->key[i], key, n))
			return 1;
	if (c < 0 || (c == 0 && n < startn) || p->lost)
		return -1;
	return 0;
}

/* Phase 1 of a key directory: the next key segments under K#, each once, in key order. */
static int list_segments(cs_txn *txn, const struct view_table *t, const struct node_id *dir, struct view_pos *pos,
			 view_emit_fn emit, void *arg)
{
	uint8_t delim = (uint8_t)t->info->delim, *pfx;
	size_t pn = view_below_table(dir) ? dir->keyn + 1 : 0;
	cs_read_opts o = { .keys_only = true, .cells_per_column = 1 };
	struct plain_rows plain = { .n = 0 };
	const cs_row *r;
	cs_scan *s;
	int rc;

	if (!(pfx = malloc(pn + 1)))
		return -ENOMEM;
	memcpy(pfx, dir->key, dir->keyn);
	if (pn)
		pfx[dir->keyn] = delim;
	o.prefix = (cs_bytes){ pfx, pn };
	if ((rc = cs_scan_open(txn, dir->table, &o, &s)))
		goto out;
	if (pos->resume_set && (rc = cs_scan_seek(s, (cs_bytes){ pos->resume, pos->resumen })))
		goto close;
	while ((rc = cs_scan_next(s, &r)) == 1) {
		const uint8_t *key = r->key.data, *rest = key + pn, *d;
		size_t restn = r->key.len - pn, segn, childn;
		bool show = true;
		char name[NAME_BUFSZ];

		d = memchr(rest, delim, restn);
		segn = d ? (size_t)(d - rest) : restn;
		childn = pn + segn;
		while (plain.n && !(plain.len[plain.n - 1] <= r->key.len &&
				    !memcmp(plain.key[plain.n - 1], key, plain.len[plain.n - 1])))
			free(plain.key[--plain.n]); /* (only rows that are prefixes of this one stay) */
		if (d) { /* a deeper row: its segment was listed already if row K#s exists */
			int e = plain_seen(&plain, key, childn, pos->resume_set ? pos->resume : pfx,
					   pos->resume_set ? pos->resumen : pn);
			if (e < 0) { /* not known from this scan: ask */
				int64_t ts;
				e = row_newest(txn, dir->table, key, childn, NULL, &ts); /* (-ENOENT if childn is 0) */
				if (e && e != -ENOENT) {
					rc = e;
					break;
				}
				e = e == 0;
			}
			show = !e;
		} else if (plain.n < PLAIN_MAX && (plain.key[plain.n] = malloc(r->key.len + 1))) {
			memcpy(plain.key[plain.n], key, r->key.len);
			plain.len[plain.n++] = r->key.len;
		} else {
			plain.lost = true;
		}
		if (show) {
			struct node_id id = { .kind = NODE_DIR, .table = dir->table, .key = key, .keyn = childn,
					      .lead_empty = !childn };
			struct view_attr a;
			int e = name_encode(NAME_SEGMENT, rest, segn, &t->seg, name, sizeof(name));
			if (e < 0) {
				rc = e;
				break;
			}
			dir_attr(&a, t->info->created, 1);
			e = emit(arg, name, &id, &a);
			if (e) {
				rc = e < 0 ? e : set_resume(pos, key, r->key.len, -1);
				goto close;
			}
		}
		if (d) { /* jump over every row under K#s# */
			size_t jn = childn + 1;
			uint8_t *jump = malloc(jn + 1);
			if (!jump) {
				rc = -ENOMEM;
				break;
			}
			memcpy(jump, key, childn);
			jump[childn] = delim;
			while (jn && jump[jn - 1] == 0xFF)
				jn--;
			if (!jn) {
				free(jump);
				rc = 0; /* nothing sorts after */
				break;
			}
			jump[jn - 1]++;
			rc = set_resume(pos, jump, jn, -1);
			if (!rc)
				rc = cs_scan_seek(s, (cs_bytes){ jump, jn });
			free(jump);
			if (rc)
				break;
		} else if ((rc = set_resume(pos, key, r->key.len, 0))) { /* just after this row */
			break;
		}
	}
	if (rc == 0)
		pos->phase = 2;
close:
	cs_scan_close(s);
out:
	while (plain.n)
		free(plain.key[--plain.n]);
	free(pfx);
	return rc < 0 ? rc : 0;
}

/* A family directory: each column's bare name, then its older versions. */
/* A family's columns, read COLUMNS_BATCH cells at a time from where the listing stands (POS->resume: the
 * qualifier of the last entry given, and its timestamp), so that a family of 100,000 columns listed in
 * a thousand readdir requests reads each cell about once. A listing resumed by entry number alone (the
 * kernel's seekdir to an offset) counts from the family's first cell. */
#define COLUMNS_BATCH 1024

static int list_columns(cs_txn *txn, const struct node_id *dir, struct view_pos *pos, view_emit_fn emit, void *arg)
{
	cs_bytes row = { dir->key, dir->keyn };
	cs_column_sel sel = { .family = dir->family };
	uint64_t k = 0;            /* entries seen, when counting from the first */
	uint8_t *seen = NULL;      /* when counting: the last cell seen (its qualifier, timestamp) */
	size_t seenn = 0;
	int64_t seen_ts = 0;
	bool counting = !pos->resume_set;
	int rc = 0;

	for (;;) {
		bool from = counting ? seen != NULL : true;
		cs_cell after = { .family = dir->family,
				  .qualifier = counting ? (cs_bytes){ seen, seenn } : (cs_bytes){ pos->resume, pos->resumen },
				  .ts = counting ? seen_ts : pos->resume_ts };
		cs_read_opts o = { .row = &row, .keys_only = true, .ncolumns = 1, .columns = &sel,
				   .cells_per_row = COLUMNS_BATCH, .after = from ? &after : NULL };
		const uint8_t *prevq = from ? after.qualifier.data : NULL;
		size_t prevqn = after.qualifier.len, ncells = 0;
		const cs_row *r;
		cs_scan *s;

		if ((rc = cs_scan_open(txn, dir->table, &o, &s)))
			break;
		rc = cs_scan_next(s, &r);
		if (rc == 1)
			ncells = r->ncells;
		for (size_t i = 0; rc == 1 && i < r->ncells; i++) {
			const cs_cell *c = &r->cells[i];
			bool newest = !prevq || c->qualifier.len != prevqn ||
				      memcmp(c->qualifier.data, prevq, c->qualifier.len);
			struct node_id id = { .kind = newest ? NODE_COLUMN : NODE_VERSION, .table = dir->table,
					      .key = dir->key, .keyn = dir->keyn, .family = dir->family,
					      .qual = c->qualifier.data, .qualn = c->qualifier.len, .ts = c->ts };
			struct view_attr a = { .size = c->value_len, .mtime_us = c->ts, .nlink = 1 };
			char name[NAME_BUFSZ];
			int e;

			prevq = c->qualifier.data;
			prevqn = c->qualifier.len;
			if (counting && k++ < pos->index) {
				if (i + 1 == r->ncells) { /* the batch's last: the next one starts after it */
					uint8_t *q = malloc(c->qualifier.len + 1);
					if (!q) {
						rc = -ENOMEM;
						break;
					}
					memcpy(q, c->qualifier.data, c->qualifier.len);
					free(seen);
					seen = q;
					seenn = c->qualifier.len;
					seen_ts = c->ts;
				}
				continue;
			}
			e = newest ? name_encode(NAME_QUALIFIER, c->qualifier.data, c->qualifier.len, NULL, name, sizeof(name))
				   : name_encode_version(c->qualifier.data, c->qualifier.len, c->ts, name, sizeof(name));
			if (e >= 0)
				e = emit(arg, name, &id, &a);
			if (e == 0 && (e = set_resume(pos, c->qualifier.data, c->qualifier.len, -1)) == 0) {
				pos->resume_ts = c->ts; /* taken: the listing stands after it */
				pos->index++;
				counting = false;
			}
			if (e) {
				rc = e < 0 ? e : 2; /* 2: the caller has had enough for now */
				break;
			}
		}
		cs_scan_close(s);
		if (rc == 2) {
			rc = 0;
			break;
		}
		if (rc < 0)
			break;
		if (ncells < COLUMNS_BATCH) {
			pos->phase = 2;
			rc = 0;
			break;
		}
	}
	free(seen);
	return rc;
}

int view_list(cs_txn *txn, const struct node_id *dir, struct view_pos *pos, view_emit_fn emit, void *arg)
{
	struct view_table t = { 0 };
	int rc;

	if (pos->phase == 2)
		return 0;
	switch (dir->kind) {
	case NODE_ROOT:
		return list_root(txn, pos, emit, arg);
	case NODE_FAMILY:
		return list_columns(txn, dir, pos, emit, arg);
	case NODE_DIR:
		if ((rc = view_table_load(txn, dir->table, &t)))
			return rc;
		if (pos->phase == 0)
			rc = list_families(txn, dir, pos, emit, arg);
		if (!rc && pos->phase == 1)
			rc = list_segments(txn, &t, dir, pos, emit, arg);
		cs_table_info_free(t.info);
		return rc;
	default:
		return -ENOTDIR;
	}
}

/* ---- lookup ---- */

struct by_name {
	const char *name;
	view_emit_fn found;
	void *arg;
	int rc;
};

static int match_name(void *arg, const char *name, const struct node_id *id, const struct view_attr *a)
{
	struct by_name *b = arg;
	if (strcmp(name, b->name))
		return 0;
	b->rc = b->found(b->arg, name, id, a);
	return 1;
}

int view_lookup_listed(cs_txn *txn, const struct node_id *dir, const char *name, view_emit_fn found, void *arg)
{
	struct by_name b = { name, found, arg, -ENOENT };
	struct view_pos pos = { 0 };
	int rc = view_list(txn, dir, &pos, match_name, &b); /* stops at the match, else runs to the end */
	view_pos_release(&pos);
	return rc ? rc : b.rc < 0 ? b.rc : 0;
}

static int lookup_keydir(cs_txn *txn, const struct node_id *dir, const char *name, view_emit_fn found, void *arg)
{
	struct view_table t = { 0 };
	struct view_attr a;
	name_result res;
	uint8_t *key = NULL;
	size_t keyn;
	int64_t ts;
	int rc;

	if ((rc = view_table_load(txn, dir->table, &t)))
		return rc;
	if (view_below_table(dir) && view_is_family(t.info, name, strlen(name))) {
		struct node_id id = { .kind = NODE_FAMILY, .table = dir->table, .key = dir->key, .keyn = dir->keyn,
				      .family = name };
		if (!(rc = row_newest(txn, dir->table, dir->key, dir->keyn, name, &ts))) {
			dir_attr(&a, ts, 2);
			rc = found(arg, name, &id, &a);
		}
		goto out;
	}
	if ((rc = name_decode(NAME_SEGMENT, name, &t.seg, &res)))
		goto out;
	if (res.partial) {
		rc = view_lookup_listed(txn, dir, name, found, arg);
		if (rc != -ENOENT || memchr(name, t.info->delim, strlen(name)))
			goto out;
		/* a short form nothing holds: the directory of the name's own bytes, if there is one (a
		 * directory made with it whose full name has not arrived, see view_resolve_new) */
		res.len = strlen(name);
		memcpy(res.bytes, name, res.len);
	}
	if ((rc = view_child_key(&t, dir, res.bytes, res.len, &key, &keyn))) {
		rc = rc == -ENAMETOOLONG ? -ENOENT : rc;
		goto out;
	}
	rc = keydir_exists(txn, &t, key, keyn);
	if (rc == 1) {
		struct node_id id = { .kind = NODE_DIR, .table = dir->table, .key = key, .keyn = keyn,
				      .lead_empty = !keyn };
		dir_attr(&a, t.info->created, 1);
		rc = found(arg, name, &id, &a);
	} else if (rc == 0) {
		rc = -ENOENT;
	}
out:
	free(key);
	cs_table_info_free(t.info);
	return rc;
}

int view_find_qualifier(cs_txn *txn, const struct node_id *dir, const name_result *res, uint8_t **q, size_t *qn)
{
	cs_bytes row = { dir->key, dir->keyn };
	cs_column_sel sel = { .family = dir->family };
	cs_read_opts o = { .row = &row, .keys_only = true, .ncolumns = 1, .columns = &sel, .cells_per_column = 1 };
	const cs_row *r;
	cs_scan *s;
	int rc;

	if ((rc = cs_scan_open(txn, dir->table, &o, &s)))
		return rc;
	rc = cs_scan_next(s, &r);
	if (rc == 1) {
		rc = -ENOENT;
		for (size_t i = 0; i < r->ncells; i++)
			if (name_match(res, NULL, r->cells[i].qualifier.data, r->cells[i].qualifier.len)) {
				*qn = r->cells[i].qualifier.len;
				rc = (*q = node_dup_bytes(r->cells[i].qualifier.data, *qn)) ? 0 : -ENOMEM;
				break;
			}
	} else if (rc == 0) {
		rc = -ENOENT;
	}
	cs_scan_close(s);
	return rc;
}

int view_column_name(const struct node_id *dir, const char *name, struct node_id *id, name_result *res)
{
	int rc;

	*id = (struct node_id){ .kind = NODE_COLUMN, .table = dir->table, .key = dir->key, .keyn = dir->keyn,
				.family = dir->family, .ts = -1 };
	if (strchr(name, '@')) {
		id->kind = NODE_VERSION;
		rc = name_decode_version(name, res, &id->ts);
	} else {
		rc = name_decode(NAME_QUALIFIER, name, NULL, res);
	}
	if (rc == -ENOENT && name[0] == '.') {
		id->kind = NODE_COLUMN;
		id->ts = -1;
		id->qual = (const uint8_t *)name;
		id->qualn = strlen(name);
		return 1;
	}
	if (!rc && !res->partial) {
		id->qual = res->bytes;
		id->qualn = res->len;
	}
	return rc;
}

static int lookup_column(cs_txn *txn, const struct node_id *dir, const char *name, view_emit_fn found, void *arg)
{
	struct node_id id;
	struct view_attr a;
	name_result res;
	uint8_t *q = NULL;
	int rc = view_column_name(dir, name, &id, &res);

	if (rc == 1) { /* found only if such a column exists: other non-canonical names stay ENOENT */
		if (!(rc = cell_get(txn, &id, -1, &a, NULL, NULL)))
			rc = found(arg, name, &id, &a);
		return rc;
	}
	if (rc)
		return rc;
	if (res.partial) { /* not by listing: the newest Q@TS is reachable but not listed */
		if ((rc = view_find_qualifier(txn, dir, &res, &q, &id.qualn)))
			return rc;
		id.qual = q;
	}
	if (!(rc = cell_get(txn, &id, id.kind == NODE_VERSION ? id.ts : -1, &a, NULL, NULL)))
		rc = found(arg, name, &id, &a);
	free(q);
	return rc;
}

int view_lookup(cs_txn *txn, const struct node_id *dir, const char *name, view_emit_fn found, void *arg)
{
	struct view_attr a;
	int rc;

	if (strlen(name) > NAME_MAX)
		return -ENAMETOOLONG;
	switch (dir->kind) {
	case NODE_ROOT: {
		cs_table_info *info;
		struct node_id id = { .kind = NODE_DIR, .table = name, .key = (const uint8_t *)"" };
		if (cs_check_table_name(name))
			return -ENOENT;
		if ((rc = cs_table_info_get(txn, name, &info)))
			return rc;
		dir_attr(&a, info->created, 1);
		cs_table_info_free(info);
		return found(arg, name, &id, &a);
	}
	case NODE_DIR:
		return lookup_keydir(txn, dir, name, found, arg);
	case NODE_FAMILY:
		return lookup_column(txn, dir, name, found, arg);
	default:
		return -ENOTDIR;
	}
}
