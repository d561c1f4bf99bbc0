/* heatsvg.h — the Key Visualizer's heatmap (`cellctl keyviz T out=FILE.svg`): what the store recorded of
 * a table's accesses (cs_heat_get()) regrouped into bands of about equal row counts by the table's keys
 * now, against time, drawn as a plain SVG 1.1 file (no scripts): reads and writes side by side, each
 * from dark to bright. Internal to tools/.
 *
 * The regrouping: band j starts at the table's row floor(j * rows / nbands) and is labelled with that
 * row's key. A recorded range [key, last] (cs_heat_range: the first 16 bytes of the least and greatest
 * keys counted) holds the table's rows whose first 16 bytes lie in [key, last], as the store counted
 * them; its counts are split over the bands holding those rows in proportion to how many each holds
 * (whole numbers by largest remainder, summing to the range's count; a count too small to share goes
 * to the first bands), and a range whose rows are all gone goes to the band where its key sorts. So
 * every count lands in one cell, the matrix's totals are the recording's, and a uniform load shows as
 * a uniform picture. */
#ifndef CELLFS_HEATSVG_H
#define CELLFS_HEATSVG_H

#include <stddef.h>
#include <stdint.h>

#include "cellstore.h"

#define HS_BANDS 48   /* bands at most (fewer when the table has fewer rows) */
#define HS_COLUMNS 360 /* columns at most: past that, each column sums several minutes */

struct hs_matrix {
	size_t nbands, ncols;
	int64_t first;         /* the minute of column 0 (minutes since the epoch, UTC) */
	int64_t span;          /* minutes per column */
	uint64_t rows;         /* the table's rows */
	uint8_t **label;       /* band j's first key (label[j], labeln[j] bytes); an empty table: one band, "" */
	size_t *labeln;
	uint64_t *reads, *writes; /* [band * ncols + column] */
	uint64_t max_reads, max_writes, total_reads, total_writes;
};

/* The matrix of TABLE in ST, with at most MAX_BANDS bands (0: HS_BANDS). Writes ST's own pending counts
 * first when ST is writable. Errors: -ENOENT (no table), -EOPNOTSUPP (a remote store), -ENOMEM, the
 * store's. Free *OUT with hs_matrix_free(). */
int hs_matrix_build(cs_store *st, const char *table, size_t max_bands, struct hs_matrix **out);
void hs_matrix_free(struct hs_matrix *m); /* accepts NULL */

/* Draw M, TABLE's matrix, into the file PATH (written whole or not at all: a temporary file beside it,
 * renamed). The picture is laid out from its texts' widths (monospace, 0.6 em a character): no text
 * overlaps another or passes the picture's edge, whatever the keys, table name, minutes or counts. Errors: a file's (-EACCES, -ENOENT for a missing directory, -ENOSPC, ...), -ENOMEM. */
int hs_matrix_svg(const struct hs_matrix *m, const char *table, const char *path);

/* hs_matrix_build() and hs_matrix_svg() in one call (what `keyviz T out=FILE.svg` does). Errors: as
 * theirs (-ENOENT: no table, or no directory for PATH). */
int hs_write_svg(cs_store *st, const char *table, const char *path);

#endif
