/* btm.c — the ReadRows chunk merger (btm.h). A row's bytes (families, qualifiers, values, labels) go to one
 * arena, addressed by offsets while the row grows; pointers are made once, when it commits. Carried-over
 * families and qualifiers share their bytes with the cell they came from, and a split value grows at the
 * arena's end. Every buffer is kept for the next row (and the next stream), but a big one is let go. */
#include "btm.h"
#include "mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A value_size hint reserves at most this much at once (the rest grows as the bytes come). */
#define HINT_MAX ((size_t)256 << 20)
/* Buffers larger than this are freed when the next row starts, so one huge row is not held forever. */
#define KEEP_MAX ((size_t)16 << 20)

enum state {
	NEW_ROW, /* between rows */
	NEW_CELL, /* in a row, between cells */
	IN_VALUE, /* in a split value */
};

/* A cell of the row in progress: offsets into the arena and into lab_off. */
struct cellrec {
	size_t fam, fam_len, q, q_len, val, val_len;
	size_t lab, nlab;
	int64_t ts;
};

struct btm {
	enum state state;
	bool reversed;
	int err; /* sticky: 0, -EIO or -ENOMEM */
	const char *why;

	uint8_t *key; /* the row in progress's key (or a scratch buffer between rows) */
	size_t key_len, key_cap;
	uint8_t *last; /* the last committed (or scanned) key; a committed row's key points here */
	size_t last_len, last_cap;
	bool has_last;

	uint8_t *arena;
	size_t used, cap;
	struct cellrec *cr;
	size_t ncells, cr_cap;
	size_t *lab_off; /* the arena offsets of the row's labels, cell by cell */
	size_t nlab, lab_cap;

	btm_cell *out; /* the committed row: cells and label pointers, made at commit */
	size_t out_cap;
	const char **lab_ptr;
	size_t lab_ptr_cap;
	btm_row row;
};

/* Make room for N elements of SIZE bytes in the block whose pointer is at PP (any object pointer type;
 * read and written with memcpy, so no type is punned), *CAP elements now, at least FIRST once allocated. */
static int grow(void *pp, size_t *cap, size_t n, size_t size, size_t first)
{
	size_t c = *cap ? *cap : first;
	void *p, *np;

	if (n <= *cap)
		return 0;
	while (c < n) {
		if (c > SIZE_MAX / 2 / size)
			return -ENOMEM;
		c *= 2;
	}
	memcpy(&p, pp, sizeof(p));
	if (!(np = mem_realloc(p, c * size)))
		return -ENOMEM;
	memcpy(pp, &np, sizeof(np));
	*cap = c;
	return 0;
}

/* Free the block at PP (as grow()) when it holds more than KEEP_MAX bytes. */
static void trim(void *pp, size_t *cap, size_t size)
{
	void *p = NULL;

	if (*cap > KEEP_MAX / size) {
		memcpy(&p, pp, sizeof(p));
		free(p);
		p = NULL;
		memcpy(pp, &p, sizeof(p));
		*cap = 0;
	}
}

static int fail(btm *m, int err, const char *why)
{
	m->err = err;
	m->why = why;
	return err;
}

static int invalid(btm *m, const char *why)
{
	return fail(m, -EIO, why);
}

/* Append N bytes (and a NUL with NUL) to the arena; *OFF gets their offset. */
static int put(btm *m, const void *b, size_t n, bool nul, size_t *off)
{
	size_t need = n + nul;

	if (need < n || need > SIZE_MAX - m->used || grow(&m->arena, &m->cap, m->used + need, 1, 4096))
		return -ENOMEM;
	*off = m->used;
	if (n)
		memcpy(m->arena + m->used, b, n);
	if (nul)
		m->arena[m->used + n] = 0;
	m->used += need;
	return 0;
}

int btm_new(btm **out, bool reversed)
{
	btm *m = mem_calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	btm_start(m, reversed);
	*out = m;
	return 0;
}

void btm_free(btm *m)
{
	if (!m)
		return;
	free(m->key);
	free(m->last);
	free(m->arena);
	free(m->cr);
	free(m->lab_off);
	free(m->out);
	free(m->lab_ptr);
	free(m);
}

void btm_restart(btm *m)
{
	m->state = NEW_ROW;
	m->err = 0;
	m->why = NULL;
	m->used = m->ncells = m->nlab = 0;
}

void btm_start(btm *m, bool reversed)
{
	btm_restart(m);
	m->reversed = reversed;
	m->has_last = false;
	m->last_len = 0;
}

const char *btm_error(const btm *m)
{
	return m->why;
}

const uint8_t *btm_last_key(const btm *m, size_t *len)
{
	*len = m->has_last ? m->last_len : 0;
	return m->has_last ? m->last : NULL;
}

/* Whether KEY comes after the last key in the read's direction (always, before the first). */
static bool beyond_last(const btm *m, const uint8_t *key, size_t len)
{
	size_t n = len < m->last_len ? len : m->last_len;
	int c;

	if (!m->has_last)
		return true;
	c = n ? memcmp(key, m->last, n) : 0;
	if (!c)
		c = (len > m->last_len) - (len < m->last_len);
	return m->reversed ? c < 0 : c > 0;
}

/* The key buffer becomes the last key; the old last key's buffer is the next scratch buffer. */
static void swap_keys(btm *m)
{
	uint8_t *b = m->last;
	size_t cap = m->last_cap;

	m->last = m->key;
	m->last_cap = m->key_cap;
	m->last_len = m->key_len;
	m->key = b;
	m->key_cap = cap;
	m->key_len = 0;
	m->has_last = true;
}

static int set_key(btm *m, const uint8_t *key, size_t len)
{
	if (grow(&m->key, &m->key_cap, len, 1, 64))
		return -ENOMEM;
	memcpy(m->key, key, len);
	m->key_len = len;
	return 0;
}

int btm_scanned(btm *m, const uint8_t *key, size_t key_len)
{
	if (m->err || m->state != NEW_ROW || !key_len || !beyond_last(m, key, key_len))
		return 0;
	if (set_key(m, key, key_len))
		return -ENOMEM;
	swap_keys(m);
	return 0;
}

/* Whether the chunk names a row, family or qualifier (a reset and a split value's continuation may not). */
static bool has_cell_key(const btm_chunk *c)
{
	return c->row_key_len || c->has_family || c->has_qualifier;
}

/* Start a cell in the row in progress from chunk C (already checked). */
static int new_cell(btm *m, const btm_chunk *c)
{
	struct cellrec *r;
	size_t i, off;

	if (grow(&m->cr, &m->cr_cap, m->ncells + 1, sizeof(*m->cr), 16) ||
	    grow(&m->lab_off, &m->lab_cap, m->nlab + c->nlabels, sizeof(*m->lab_off), 16))
		return fail(m, -ENOMEM, "out of memory");
	r = &m->cr[m->ncells];
	if (m->ncells) /* family and qualifier carry over unless the chunk names them */
		*r = r[-1];
	if (c->has_family) {
		if (put(m, c->family, c->family_len, true, &r->fam))
			return fail(m, -ENOMEM, "out of memory");
		r->fam_len = c->family_len;
	}
	if (c->has_qualifier) {
		if (put(m, c->qualifier, c->qualifier_len, false, &r->q))
			return fail(m, -ENOMEM, "out of memory");
		r->q_len = c->qualifier_len;
	}
	r->ts = c->timestamp_micros;
	r->lab = m->nlab;
	r->nlab = c->nlabels;
	for (i = 0; i < c->nlabels; i++) {
		if (put(m, c->labels[i], strlen(c->labels[i]), true, &off))
			return fail(m, -ENOMEM, "out of memory");
		m->lab_off[m->nlab++] = off;
	}
	if (c->value_size > 0 && (size_t)c->value_size > c->value_len && (size_t)c->value_size <= HINT_MAX &&
	    (size_t)c->value_size <= SIZE_MAX - m->used &&
	    grow(&m->arena, &m->cap, m->used + (size_t)c->value_size, 1, 4096))
		return fail(m, -ENOMEM, "out of memory");
	if (put(m, c->value, c->value_len, false, &r->val))
		return fail(m, -ENOMEM, "out of memory");
	r->val_len = c->value_len;
	m->ncells++;
	return 0;
}

/* The row in progress is complete: make its pointers. */
static int commit(btm *m, const btm_row **done)
{
	size_t i;

	if (grow(&m->out, &m->out_cap, m->ncells, sizeof(*m->out), 16) ||
	    grow(&m->lab_ptr, &m->lab_ptr_cap, m->nlab, sizeof(*m->lab_ptr), 16))
		return fail(m, -ENOMEM, "out of memory");
	for (i = 0; i < m->nlab; i++)
		m->lab_ptr[i] = (const char *)m->arena + m->lab_off[i];
	for (i = 0; i < m->ncells; i++) {
		const struct cellrec *r = &m->cr[i];
		btm_cell *o = &m->out[i];

		o->family = (const char *)m->arena + r->fam;
		o->family_len = r->fam_len;
		o->qualifier = m->arena + r->q;
		o->qualifier_len = r->q_len;
		o->ts = r->ts;
		o->value = m->arena + r->val;
		o->value_len = r->val_len;
		o->labels = r->nlab ? m->lab_ptr + r->lab : NULL;
		o->nlabels = r->nlab;
	}
	swap_keys(m);
	m->row.key = m->last;
	m->row.key_len = m->last_len;
	m->row.cells = m->out;
	m->row.ncells = m->ncells;
	m->state = NEW_ROW;
	*done = &m->row;
	return 1;
}

/* After a cell's last piece: the row goes on or commits. */
static int cell_done(btm *m, const btm_chunk *c, const btm_row **done)
{
	if (c->value_size > 0) {
		if (c->commit_row)
			return invalid(m, "commit_row in the middle of a split value");
		m->state = IN_VALUE;
		return 0;
	}
	m->state = NEW_CELL;
	return c->commit_row ? commit(m, done) : 0;
}

static int reset(btm *m, const btm_chunk *c)
{
	if (m->state == NEW_ROW)
		return invalid(m, "reset_row with no row in progress");
	if (has_cell_key(c) || c->timestamp_micros || c->nlabels || c->value_len || c->value_size || c->commit_row)
		return invalid(m, "reset_row in a chunk that carries data");
	m->state = NEW_ROW;
	m->used = m->ncells = m->nlab = 0;
	return 0;
}

int btm_feed(btm *m, const btm_chunk *c, const btm_row **done)
{
	int rc;

	*done = NULL;
	if (m->err)
		return m->err;
	if (c->value_size < 0)
		return invalid(m, "negative value_size");
	if (c->reset_row)
		return reset(m, c);
	switch (m->state) {
	case NEW_ROW:
		if (!c->row_key_len)
			return invalid(m, "new row without a row key");
		if (!c->has_family)
			return invalid(m, "new row without a family");
		if (!c->has_qualifier)
			return invalid(m, "new row without a qualifier");
		if (!beyond_last(m, c->row_key, c->row_key_len))
			return invalid(m, m->reversed ? "row key not before the last row's (reversed read)" :
							"row key not after the last row's");
		/* The last row is no longer borrowed: let a huge one's buffers go. */
		trim(&m->arena, &m->cap, 1);
		trim(&m->cr, &m->cr_cap, sizeof(*m->cr));
		trim(&m->lab_off, &m->lab_cap, sizeof(*m->lab_off));
		trim(&m->out, &m->out_cap, sizeof(*m->out));
		trim(&m->lab_ptr, &m->lab_ptr_cap, sizeof(*m->lab_ptr));
		if (set_key(m, c->row_key, c->row_key_len))
			return fail(m, -ENOMEM, "out of memory");
		m->used = m->ncells = m->nlab = 0;
		break;
	case NEW_CELL:
		if (c->row_key_len && (c->row_key_len != m->key_len || memcmp(c->row_key, m->key, m->key_len)))
			return invalid(m, "new row key before the row in progress committed");
		if (c->has_family && !c->has_qualifier)
			return invalid(m, "new family without a qualifier");
		break;
	case IN_VALUE:
		if (has_cell_key(c) || c->timestamp_micros || c->nlabels)
			return invalid(m, "split value continued by a chunk with a cell key, timestamp or labels");
		if (put(m, c->value, c->value_len, false, &(size_t){0}))
			return fail(m, -ENOMEM, "out of memory");
		m->cr[m->ncells - 1].val_len += c->value_len;
		return cell_done(m, c, done);
	}
	if ((rc = new_cell(m, c)))
		return rc;
	return cell_done(m, c, done);
}

int btm_end(btm *m)
{
	if (m->err)
		return m->err;
	if (m->state != NEW_ROW)
		return invalid(m, "stream ended in the middle of a row");
	return 0;
}
