/* cbtfmt.h — output exactly as cbt 1.23.2 prints it: Go's %q quoting, rune-counted padding,
 * timestamps in Go's "2006/01/02-15:04:05.000000" layout in local time, rows, and text/tabwriter tables.
 *
 * Invariant: every function here writes only to the FILE it is given and never fails loudly; the caller
 * checks ferror() once at the end (as stdio intends).
 */
#ifndef CELLFS_CBTFMT_H
#define CELLFS_CBTFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cellstore.h"

/* ---- Go's unicode/utf8 and strconv ------------------------------------------------------------- */

/* Decode one rune from P (N > 0 bytes) as Go's utf8.DecodeRune does: *WIDTH gets 1..4 and the rune is
 * returned, or -1 with *WIDTH = 1 for a byte that does not start a valid UTF-8 sequence (Go's
 * RuneError, width 1: overlong forms, surrogates, > U+10FFFF, truncated or stray bytes). */
int32_t gofmt_decode_rune(const unsigned char *p, size_t n, size_t *width);

/* Go's utf8.RuneCount: runes in P, each invalid byte counting as one. fmt pads "%-40s" by this. */
size_t gofmt_rune_count(const void *p, size_t n);

/* Go's strconv.IsPrint (= unicode.IsPrint: letters, marks, numbers, punctuation, symbols, U+0020). */
bool gofmt_is_print(uint32_t r);

/* Generated from cbt by tools/gen_goprint.py: printable runes above U+007F, as inclusive ranges. */
extern const uint32_t gofmt_print_ranges[][2];
extern const size_t gofmt_print_nranges;

/* Write P (N bytes) as Go's %q (strconv.Quote) does: in double quotes; \" and \\; \a \b \f \n \r \t \v;
 * other control bytes and DEL as \xNN; bytes that are not valid UTF-8 as \xNN; non-printable runes as
 * \uXXXX or \UXXXXXXXX; printable runes as they are. */
void cbtfmt_quote(FILE *f, const void *p, size_t n);

/* The same into a new NUL-terminated string. Caller frees. NULL on ENOMEM. */
char *cbtfmt_quote_dup(const void *p, size_t n);

/* ---- Time --------------------------------------------------------------------------------------- */

/* Choose the local time zone as Go does, so that cbt and cellctl agree under any TZ: TZ unset means
 * /etc/localtime; TZ="" or "UTC" means UTC; otherwise TZ (minus a leading ':') names a zoneinfo file,
 * and when no such file exists Go falls back to UTC (glibc would parse a POSIX rule like "IST-5:30"
 * instead). Call once before cbtfmt_time(); it may set TZ. */
void cbtfmt_tz_init(void);

/* Format TS (µs since the epoch, >= 0) as cbt does: "YYYY/MM/DD-HH:MM:SS.ffffff" in local time (years
 * past 9999 print all their digits). BUF must hold CBTFMT_TIME_MAX bytes. Returns BUF. */
#define CBTFMT_TIME_MAX 48
char *cbtfmt_time(char buf[CBTFMT_TIME_MAX], int64_t ts);

/* ---- Rows --------------------------------------------------------------------------------------- */

/* Print ROW as cbt's printRow does: a line of 40 '-', the row key, then per cell (families and
 * qualifiers sorted, newest first) "  %-40s @ TIME" of "family:qualifier" and "    %q" of the value, and
 * an empty line. MULT, if not NULL, says how many times to print each cell (cbt prints a cell once per
 * `columns=` selector that matches it); 0 is printed once. */
void cbtfmt_row(FILE *f, const cs_row *row, const unsigned *mult);

/* What cbt prints for `lookup` of a row that has no (selected) cells: the rule, an empty key, an empty
 * line. */
void cbtfmt_empty_row(FILE *f);

/* What a read asked for with include-stats=full saw and returned: cbt's bigtable.FullReadStats. */
struct cbtfmt_read_stats {
	uint64_t rows_seen, rows_returned, cells_seen, cells_returned;
	int64_t latency_ms; /* the read's time, whole milliseconds */
};

/* Print S as cbt's printFullReadStats does: "Summary Stats", 20 '=', one "name: N" line per count,
 * "frontend_server_latency: Nms" and an empty line. */
void cbtfmt_read_stats(FILE *f, const struct cbtfmt_read_stats *s);

/* ---- Tables ------------------------------------------------------------------------------------- */

/* Print NROWS lines of NCOLS cells as Go's text/tabwriter.NewWriter(w, 10, 8, 4, '\t', 0) does with
 * cells separated by '\t' and each line ending in '\n': every column but the last is padded with tabs to
 * a common width (the widest cell plus 4, at least 10, rounded up to a multiple of 8; width counted in
 * runes). CELLS is row-major, NROWS * NCOLS strings; 1 <= NCOLS <= CBTFMT_TAB_MAXCOLS. */
#define CBTFMT_TAB_MAXCOLS 8
void cbtfmt_tabwrite(FILE *f, const char *const *cells, size_t nrows, size_t ncols);

#endif
