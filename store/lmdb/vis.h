/* vis.h — visibility: the one place that decides whether a stored cell is what a read returns. A cell is
 * visible only if its family is in the schema and not newer than the cell (a family deleted and created
 * again), no dropped range written after it covers its row, and its family's GC policy has not collected
 * it, whether or not lm_gc() has removed it yet. Reads, moves, lm_gc() and stats all judge by it. */
#ifndef CELLFS_VIS_H
#define CELLFS_VIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "gcpolicy.h"
#include "kv.h"
#include "schema.h"

/* Whether drop D covers ROW (N bytes). */
bool vis_drop_covers(const struct sch_drop *d, const uint8_t *row, size_t n);

/* The highest sequence of T's loaded drops covering ROW (0: none): cells of the row written before it are
 * hidden. With CLEAN not NULL, *CLEAN gets a covering drop no row has been written under since (NULL if
 * none), whose range a walk may skip in one seek. */
uint64_t vis_hide_seq(const struct sch_table *t, const uint8_t *row, size_t n, const struct sch_drop **clean);

/* Whether a stored cell of family F (NULL: not in the schema) is visible: written at SEQ, in a row whose
 * drops hide sequences below HIDE, with timestamp TS, at time NOW. *VERSION counts the column's cells so
 * far (the caller resets it to 0 at each column); it is advanced for every cell that exists for GC
 * purposes. NEVER: the caller knows F's policy collects nothing. Inline: scans call it for every cell. */
static inline bool vis_cell(const struct sch_family *f, bool never, uint64_t seq, uint64_t hide,
			    uint32_t *version, int64_t ts, int64_t now)
{
	uint32_t v;
	if (!f || seq < f->since || seq < hide)
		return false; /* not in the schema any more, or dropped: not a version either */
	v = (*version)++;
	return never || !gcp_collects(f->policy, v, ts, now);
}

/* A walk over a table's stored cells in key order that needs each one's visibility (lm_gc(), stats): the
 * row and column it is in. Set t, now and col (a key-sized buffer such as txn->kbuf2); the rest zero. */
struct key_parts;
struct vis_walk {
	const struct sch_table *t; /* its drops loaded */
	int64_t now;
	uint8_t *col;     /* the current column's key (the cell key without its timestamp) */
	size_t coln;
	uint8_t *renc;    /* the current row, as encoded in keys (vis_walk_end() frees it) */
	size_t rencn;
	uint64_t hide;    /* vis_hide_seq() of that row */
	uint32_t version; /* vis_cell()'s count of the column's cells */
	bool new_row;     /* the cell last stepped to begins a row */
};

/* Step W to the cell at key K (KN bytes, parsed into KP with fam_len <= CS_MAX_FAMILY, written at SEQ),
 * the next in key order: *F gets its family (NULL: not in the schema). Returns 1 if the cell is visible,
 * 0 if not, or -ENOMEM. */
int vis_walk_step(struct vis_walk *w, const uint8_t *k, size_t kn, const struct key_parts *kp, uint64_t seq,
		  struct sch_family **f);

/* Free what W holds (not W). */
void vis_walk_end(struct vis_walk *w);

/* A stored cell, as vis_table_walk() hands it on: its key K (KN bytes, parsed into KP), the stored
 * value's size VN and header H, its family F (NULL: not in the schema), and whether it is VISIBLE. */
struct vis_cell {
	const uint8_t *k;
	size_t kn, vn;
	const struct key_parts *kp;
	const codec_hdr *h;
	struct sch_family *f;
	bool visible;
};

/* Walk the stored cells of W's table (set W as above) in key order with cursor C, from the first: FN(CTX,
 * W, CELL) returns 0 to go on to the next cell, 1 when it has moved C there itself (it deleted the cell),
 * or < 0 to stop with that error. Returns 0 at the table's end, -EIO for a cell that does not parse, or
 * the cursor's, FN's or vis_walk_step()'s error. Ends W (vis_walk_end()). */
int vis_table_walk(struct vis_walk *w, kv_cursor *c,
		   int (*fn)(void *ctx, const struct vis_walk *w, const struct vis_cell *cell), void *ctx);

#endif
