/* heatsvg.c — the Key Visualizer's heatmap: the store's recorded counts regrouped into bands of about
 * equal row counts (heatsvg.h says how), drawn as plain SVG 1.1: key ranges down (the first key at the
 * top), minutes across, reads and writes in two panels, dark to bright on a square-root scale. */
#include "heatsvg.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int key_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	size_t n = an < bn ? an : bn;
	int r = n ? memcmp(a, b, n) : 0;
	return r ? r : (an > bn) - (an < bn);
}

void hs_matrix_free(struct hs_matrix *m)
{
	if (!m)
		return;
	for (size_t j = 0; m->label && j < m->nbands; j++)
		free(m->label[j]);
	free(m->label);
	free(m->labeln);
	free(m->reads);
	free(m->writes);
	free(m);
}

/* The band holding KEY: the last whose first key is <= KEY (0 below them all). */
static size_t band_of(const struct hs_matrix *m, const uint8_t *k, size_t n)
{
	size_t lo = 0, hi = m->nbands;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (key_cmp(m->label[mid], m->labeln[mid], k, n) <= 0)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Band J's first row: the bands take rows in turn, floor(rows / nbands) or one more each. */
static uint64_t band_start(const struct hs_matrix *m, size_t j)
{
	return j * m->rows / m->nbands;
}

/* The band holding row I (0-based, I < rows). */
static size_t band_of_row(const struct hs_matrix *m, uint64_t i)
{
	size_t j = (size_t)(i * m->nbands / m->rows);
	while (j + 1 < m->nbands && band_start(m, j + 1) <= i)
		j++;
	while (j > 0 && band_start(m, j) > i)
		j--;
	return j;
}

/* floor(A * B / D), its remainder to *REM; B <= D (so it fits). Exact without 128-bit integers: the
 * product as two halves, divided bit by bit, when it does not fit in 64 bits (counts beyond 2^32 of
 * ranges beyond 2^32 rows: rare). */
static uint64_t muldiv(uint64_t a, uint64_t b, uint64_t d, uint64_t *rem)
{
	uint64_t a0 = a & 0xffffffff, a1 = a >> 32, b0 = b & 0xffffffff, b1 = b >> 32;
	uint64_t mid, hi, lo, q = 0, r = 0;

	if (!b || a <= UINT64_MAX / b) {
		*rem = a * b % d;
		return a * b / d;
	}
	mid = (a0 * b0 >> 32) + (a0 * b1 & 0xffffffff) + (a1 * b0 & 0xffffffff);
	lo = mid << 32 | (a0 * b0 & 0xffffffff);
	hi = a1 * b1 + (a0 * b1 >> 32) + (a1 * b0 >> 32) + (mid >> 32);
	for (int i = 127; i >= 0; i--) {
		uint64_t carry = r >> 63; /* (r < d before the shift: r - d below fits, carried or not) */
		r = r << 1 | ((i >= 64 ? hi >> (i - 64) : lo >> i) & 1);
		if (carry || r >= d) {
			r -= d;
			q |= i < 64 ? (uint64_t)1 << i : 0;
		}
	}
	*rem = r;
	return q;
}

/* Add C to the cells of the bands holding rows [LO, HI) of M (LO < HI), in proportion to how many of
 * those rows each band holds: a band the range barely touches gets its small share, not an even one.
 * Largest remainder: each band its share's whole part, then the ones left over one each to the bands
 * of the largest fractions, the first of equal ones first (a count too small to share, as one read of
 * a range of rows, goes to the range's first band). The parts sum to C. REM: room for M's bands. */
static void apportion(const struct hs_matrix *m, uint64_t *col, uint64_t lo, uint64_t hi, uint64_t c,
		      uint64_t *rem)
{
	size_t j0 = band_of_row(m, lo), n = band_of_row(m, hi - 1) - j0 + 1;
	uint64_t given = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t start = band_start(m, j0 + i), end = j0 + i + 1 < m->nbands ? band_start(m, j0 + i + 1) : m->rows;
		uint64_t q = muldiv(c, (end < hi ? end : hi) - (start > lo ? start : lo), hi - lo, &rem[i]);
		col[(j0 + i) * m->ncols] += q;
		given += q;
	}
	for (; given < c; given++) { /* (fewer than N left, each to a band of a positive remainder) */
		size_t best = 0;
		for (size_t i = 1; i < n; i++)
			if (rem[i] > rem[best])
				best = i;
		col[(j0 + best) * m->ncols]++;
		rem[best] = 0;
	}
}

static int scan_keys(cs_txn *txn, const char *table, cs_scan **s)
{
	cs_read_opts o = { .keys_only = true, .cells_per_row = 1, .unrecorded = true };
	return cs_scan_open(txn, table, &o, s);
}

/* A recorded range's bound, to be ranked among the table's rows: for a range's key, the rows whose
 * first CS_HEAT_KEY bytes sort below it; for its last, those at or below it (so the range holds rows
 * [rank of key, rank of last), compared as the store counted them). */
struct bound {
	const uint8_t *k;
	size_t n;
	int last;
	uint64_t *rank;
};

static int bound_cmp(const void *pa, const void *pb)
{
	const struct bound *a = pa, *b = pb;
	int r = key_cmp(a->k, a->n, b->k, b->n);
	return r ? r : a->last - b->last; /* (a key before an equal last: it ranks fewer rows) */
}

/* The bounds of every range in HEAT, sorted, their ranks to go to RANK[2 * range + (0 key, 1 last)],
 * ranges numbered in HEAT's order. Caller frees *OUT and *RANK. */
static int make_bounds(const cs_heat *heat, struct bound **out, size_t *nout, uint64_t **rank)
{
	size_t n = 0, b = 0;

	for (size_t t = 0; t < heat->nminutes; t++)
		n += heat->minutes[t].nranges;
	*out = NULL;
	*nout = 2 * n;
	if (!(*rank = calloc(2 * n + 1, sizeof(**rank))) || !(*out = calloc(2 * n + 1, sizeof(**out))))
		return -ENOMEM;
	for (size_t t = 0; t < heat->nminutes; t++)
		for (size_t i = 0; i < heat->minutes[t].nranges; i++, b += 2) {
			const cs_heat_range *r = &heat->minutes[t].ranges[i];
			(*out)[b] = (struct bound){ r->key, r->keylen, 0, &(*rank)[b] };
			(*out)[b + 1] = (struct bound){ r->last, r->lastlen, 1, &(*rank)[b + 1] };
		}
	qsort(*out, *nout, sizeof(**out), bound_cmp);
	return 0;
}

/* Counts the rows, and ranks the bounds BD (sorted) among them on the way: one pass. */
static int count_rows(cs_txn *txn, const char *table, struct bound *bd, size_t nbd, struct hs_matrix *m)
{
	const cs_row *r;
	cs_scan *s;
	size_t b = 0;
	int rc;

	if ((rc = scan_keys(txn, table, &s)))
		return rc;
	while ((rc = cs_scan_next(s, &r)) == 1) {
		size_t pn = r->key.len < CS_HEAT_KEY ? r->key.len : CS_HEAT_KEY;
		while (b < nbd && key_cmp(r->key.data, pn, bd[b].k, bd[b].n) >= bd[b].last)
			*bd[b++].rank = m->rows; /* (this row is above the bound: it ranks the rows before) */
		m->rows++;
	}
	cs_scan_close(s);
	while (b < nbd)
		*bd[b++].rank = m->rows;
	return rc < 0 ? rc : 0;
}

/* The bands' first keys: every (rows / nbands)th key, M->rows counted already. */
static int make_bands(cs_txn *txn, const char *table, size_t max_bands, struct hs_matrix *m)
{
	const cs_row *r;
	cs_scan *s;
	uint64_t idx = 0;
	size_t j = 0;
	int rc;

	m->nbands = m->rows ? (m->rows < max_bands ? (size_t)m->rows : max_bands) : 1;
	if (!(m->label = calloc(m->nbands, sizeof(*m->label))) || !(m->labeln = calloc(m->nbands, sizeof(*m->labeln))))
		return -ENOMEM;
	if (!m->rows)
		return (m->label[0] = malloc(1)) ? 0 : -ENOMEM;
	if ((rc = scan_keys(txn, table, &s)))
		return rc;
	while (j < m->nbands && (rc = cs_scan_next(s, &r)) == 1) {
		if (idx++ != band_start(m, j))
			continue;
		if (!(m->label[j] = malloc(r->key.len))) {
			rc = -ENOMEM;
			break;
		}
		memcpy(m->label[j], r->key.data, r->key.len);
		m->labeln[j++] = r->key.len;
	}
	cs_scan_close(s);
	if (rc < 0)
		return rc;
	return j == m->nbands ? 0 : -EIO; /* (a snapshot: the rows counted are there) */
}

/* Put HEAT's counts into M's cells, RANK its ranges' bounds' ranks (make_bounds()). */
static int fill(const cs_heat *heat, const uint64_t *rank, struct hs_matrix *m)
{
	uint64_t *rem;
	size_t ri = 0;

	if (heat->nminutes) {
		int64_t total = heat->minutes[heat->nminutes - 1].minute - heat->minutes[0].minute + 1;
		m->first = heat->minutes[0].minute;
		m->span = (total + HS_COLUMNS - 1) / HS_COLUMNS;
		m->ncols = (size_t)((total + m->span - 1) / m->span);
	} else {
		m->span = 1;
	}
	if (m->ncols && (!(m->reads = calloc(m->nbands * m->ncols, sizeof(*m->reads))) ||
			 !(m->writes = calloc(m->nbands * m->ncols, sizeof(*m->writes)))))
		return -ENOMEM;
	if (!(rem = calloc(m->nbands, sizeof(*rem))))
		return -ENOMEM;
	for (size_t t = 0; t < heat->nminutes; t++) {
		const cs_heat_minute *hm = &heat->minutes[t];
		size_t col = (size_t)((hm->minute - m->first) / m->span);
		for (size_t i = 0; i < hm->nranges; i++, ri += 2) {
			const cs_heat_range *r = &hm->ranges[i];
			uint64_t lo = rank[ri], hi = rank[ri + 1];
			if (lo < hi) {
				apportion(m, &m->reads[col], lo, hi, r->reads, rem);
				apportion(m, &m->writes[col], lo, hi, r->writes, rem);
			} else { /* (its rows are gone: where its key would be) */
				size_t b = band_of(m, r->key, r->keylen);
				m->reads[b * m->ncols + col] += r->reads;
				m->writes[b * m->ncols + col] += r->writes;
			}
			m->total_reads += r->reads;
			m->total_writes += r->writes;
		}
	}
	free(rem);
	for (size_t c = 0; c < m->nbands * m->ncols; c++) {
		if (m->reads[c] > m->max_reads)
			m->max_reads = m->reads[c];
		if (m->writes[c] > m->max_writes)
			m->max_writes = m->writes[c];
	}
	return 0;
}

int hs_matrix_build(cs_store *st, const char *table, size_t max_bands, struct hs_matrix **out)
{
	struct hs_matrix *m = NULL;
	cs_heat *heat = NULL;
	struct bound *bd = NULL;
	uint64_t *rank = NULL;
	size_t nbd = 0;
	cs_txn *txn;
	int rc;

	if (!max_bands)
		max_bands = HS_BANDS;
	if ((rc = cs_heat_flush(st)) && rc != -EROFS)
		return rc;
	if ((rc = cs_txn_begin(st, CS_TXN_RDONLY, &txn)))
		return rc;
	if ((rc = cs_heat_get(txn, table, &heat)))
		goto out;
	if (!(m = calloc(1, sizeof(*m)))) {
		rc = -ENOMEM;
		goto out;
	}
	if (!(rc = make_bounds(heat, &bd, &nbd, &rank)) && !(rc = count_rows(txn, table, bd, nbd, m)) &&
	    !(rc = make_bands(txn, table, max_bands, m)))
		rc = fill(heat, rank, m);
out:
	cs_txn_abort(txn);
	cs_heat_free(heat);
	free(bd);
	free(rank);
	if (rc) {
		hs_matrix_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

/* ---- drawing ----
 * Every text's width is reckoned from its characters (the font is monospace: 0.6 em a character, and
 * CHAR_W / TITLE_CHAR_W a little more), and the layout is built from those widths: the key labels'
 * column is as wide as its widest label, a panel as wide as its widest text, the picture as wide as
 * its title, so no text runs into another or past the edge whatever the keys, name or minutes. */

#define FONT_PX 11
#define CHAR_W 7        /* px a character of FONT_PX takes, at most */
#define TITLE_PX 14
#define TITLE_CHAR_W 9
#define LINE 16         /* px from one line of FONT_PX to the next */
#define MARGIN 10
#define GAP 40          /* px between the reads and writes panels */
#define LABEL_CHARS 32  /* a key label's characters at most (then "...") */
#define SCALE_W 160     /* the legend's colour bar */
#define TICK_PX 64      /* the time axis' labels: this far apart at least */

/* A dark-to-bright scale (matplotlib's "magma"), at T in [0, 1]. */
static void colour(double t, char out[8])
{
	static const struct {
		double at;
		unsigned char r, g, b;
	} stops[] = { { 0, 0x00, 0x00, 0x04 },    { 0.25, 0x3b, 0x0f, 0x70 }, { 0.5, 0x8c, 0x29, 0x81 },
		      { 0.75, 0xde, 0x49, 0x68 }, { 0.9, 0xfe, 0x9f, 0x6d },  { 1, 0xfc, 0xfd, 0xbf } };
	size_t i = 1;

	if (t < 0)
		t = 0;
	if (t > 1)
		t = 1;
	while (i < sizeof(stops) / sizeof(stops[0]) - 1 && t > stops[i].at)
		i++;
	double f = (t - stops[i - 1].at) / (stops[i].at - stops[i - 1].at);
	snprintf(out, 8, "#%02x%02x%02x", (unsigned)lround(stops[i - 1].r + f * (stops[i].r - stops[i - 1].r)),
		 (unsigned)lround(stops[i - 1].g + f * (stops[i].g - stops[i - 1].g)),
		 (unsigned)lround(stops[i - 1].b + f * (stops[i].b - stops[i - 1].b)));
}

/* Key bytes as text into OUT (room for MAX + 4): printable ASCII as itself ('\' doubled), anything else
 * \xHH, at most MAX characters (then "..."). Returns its length: its width in characters. */
static size_t key_text(const uint8_t *k, size_t n, size_t max, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		bool plain = k[i] >= 0x20 && k[i] < 0x7f;
		size_t cn = k[i] == '\\' ? 2 : plain ? 1 : 4;
		if (o + cn > max) {
			memcpy(out + o, "...", 4);
			return o + 3;
		}
		if (!plain)
			snprintf(out + o, 5, "\\x%02x", k[i]);
		else if (cn == 2)
			memcpy(out + o, "\\\\", 2);
		else
			out[o] = (char)k[i];
		o += cn;
	}
	out[o] = 0;
	return o;
}

/* S, XML-escaped. */
static void put_esc(FILE *f, const char *s)
{
	for (; *s; s++)
		if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else
			fputc(*s, f);
}

/* A line of text S at (X, Y: its baseline), of FONT_PX unless BIG; ATTRS: more attributes, or "". */
static void text(FILE *f, int x, int y, bool big, const char *attrs, const char *s)
{
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-family=\"monospace\" font-size=\"%d\"%s%s>", x, y,
		big ? TITLE_PX : FONT_PX, *attrs ? " " : "", attrs);
	put_esc(f, s);
	fputs("</text>\n", f);
}

static int width_of(const char *s)
{
	return (int)strlen(s) * CHAR_W;
}

static void time_text(int64_t minute, const char *fmt, char *out, size_t n)
{
	time_t t = (time_t)(minute * 60);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, n, fmt, &tm);
}

/* What the picture says, made first so the layout can be fitted to it. */
struct words {
	char title[96], rows[128], time[128];
	char head[2][32], max[2][24], per[2][48], total[2][48];
};

struct layout {
	int label_w, band_h, col_w, panel_w, top, h, x[2], width, height;
};

static void make_words(const struct hs_matrix *m, const char *table, struct words *w)
{
	char a[32], b[32];

	snprintf(w->title, sizeof(w->title), "Key Visualizer: table %.*s", CS_MAX_TABLE, table);
	if (!m->rows)
		snprintf(w->rows, sizeof(w->rows), "an empty table: no rows");
	else if (m->rows % m->nbands == 0)
		snprintf(w->rows, sizeof(w->rows), "%llu rows in %zu key ranges of %llu row%s each",
			 (unsigned long long)m->rows, m->nbands, (unsigned long long)(m->rows / m->nbands),
			 m->rows == m->nbands ? "" : "s");
	else
		snprintf(w->rows, sizeof(w->rows), "%llu rows in %zu key ranges of about %llu rows each",
			 (unsigned long long)m->rows, m->nbands, (unsigned long long)(m->rows + m->nbands - 1) / m->nbands);
	if (m->ncols) {
		int64_t last = m->first + (int64_t)m->ncols * m->span - 1;
		time_text(m->first, "%Y-%m-%d %H:%M", a, sizeof(a));
		/* (the last minute's date only when it differs) */
		time_text(last, last / 1440 == m->first / 1440 ? " to %H:%M" : " to %Y-%m-%d %H:%M", b, sizeof(b));
		snprintf(w->time, sizeof(w->time), "%lld minute%s a column, %s%s UTC", (long long)m->span,
			 m->span > 1 ? "s" : "", a, last > m->first ? b : "");
	} else {
		snprintf(w->time, sizeof(w->time), "no accesses recorded");
	}
	for (int p = 0; p < 2; p++) {
		snprintf(w->head[p], sizeof(w->head[p]), "%s", p ? "Writes (row mutations)" : "Reads (rows read)");
		snprintf(w->max[p], sizeof(w->max[p]), "%llu", (unsigned long long)(p ? m->max_writes : m->max_reads));
		snprintf(w->per[p], sizeof(w->per[p]), "%s per cell, square-root scale", p ? "writes" : "reads");
		snprintf(w->total[p], sizeof(w->total[p]), "total %llu",
			 (unsigned long long)(p ? m->total_writes : m->total_reads));
	}
}

static int max_i(int a, int b)
{
	return a > b ? a : b;
}

static void make_layout(const struct hs_matrix *m, const struct words *w, struct layout *l)
{
	char k[LABEL_CHARS + 4];
	int title_w = (int)strlen(w->title) * TITLE_CHAR_W;

	l->label_w = width_of("first key");
	for (size_t j = 0; j < m->nbands; j++)
		l->label_w = max_i(l->label_w, (int)key_text(m->label[j], m->labeln[j], LABEL_CHARS, k) * CHAR_W);
	l->band_h = (int)(480 / m->nbands);
	l->band_h = l->band_h < 6 ? 6 : l->band_h > 24 ? 24 : l->band_h;
	l->h = (int)m->nbands * l->band_h;
	l->col_w = m->ncols ? (int)(720 / m->ncols) : 1;
	l->col_w = l->col_w < 2 ? 2 : l->col_w > 32 ? 32 : l->col_w;
	l->panel_w = max_i((int)m->ncols * l->col_w, 240);
	for (int p = 0; p < 2; p++) {
		l->panel_w = max_i(l->panel_w, width_of(w->head[p]));
		l->panel_w = max_i(l->panel_w, width_of(w->per[p]));
		l->panel_w = max_i(l->panel_w, width_of(w->total[p]));
	}
	l->top = MARGIN + TITLE_PX + 20 + LINE + 26 + 8; /* title, two lines, the panels' heads */
	l->x[0] = MARGIN + l->label_w + 16; /* (the labels' head, left, and the panel's: 16 px apart) */
	l->x[1] = l->x[0] + l->panel_w + GAP;
	l->width = max_i(l->x[1] + l->panel_w + MARGIN, MARGIN + max_i(title_w, width_of(w->time)) + MARGIN);
	l->width = max_i(l->width, MARGIN + width_of(w->rows) + MARGIN);
	l->height = l->top + l->h + 99 + MARGIN + 4; /* the time axis, the legend: panel() */
}

/* The cells of panel P (0 reads, 1 writes), a <title> each with its count, key range and minute. */
static void cells(FILE *f, const struct hs_matrix *m, const struct layout *l, int p)
{
	const uint64_t *v = p ? m->writes : m->reads, max = p ? m->max_writes : m->max_reads;
	char c[8], k[64 * 4 + 4], t[32];

	for (size_t b = 0; b < m->nbands; b++) {
		key_text(m->label[b], m->labeln[b], 64 * 4, k);
		for (size_t col = 0; col < m->ncols; col++) {
			uint64_t n = v[b * m->ncols + col];
			if (!n)
				continue;
			colour(sqrt((double)n / (double)max), c);
			time_text(m->first + (int64_t)col * m->span, "%Y-%m-%d %H:%M", t, sizeof(t));
			fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"><title>%s %llu, keys from ",
				l->x[p] + (int)col * l->col_w, l->top + (int)b * l->band_h, l->col_w, l->band_h, c,
				p ? "writes" : "reads", (unsigned long long)n);
			put_esc(f, k);
			fprintf(f, ", %s", t);
			if (m->span > 1)
				fprintf(f, " (+%lld min)", (long long)m->span - 1);
			fputs(" UTC</title></rect>\n", f);
		}
	}
}

/* The time axis under panel X0: a tick at every STEP minutes (a round number, TICK_PX apart at least),
 * labelled with the time, or the date at midnight; a label that would pass the panel's right edge is
 * left out (the tick stays). */
static void time_axis(FILE *f, const struct hs_matrix *m, const struct layout *l, int x0)
{
	static const int steps[] = { 1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440, 2880, 10080 };
	int64_t last = m->first + (int64_t)m->ncols * m->span, step = steps[0], t;
	int y = l->top + l->h;
	char s[16];

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if ((step = steps[i]) * l->col_w >= TICK_PX * m->span)
			break;
	t = (m->first + step - 1) / step * step;
	if (t >= last)
		t = m->first; /* (too short for a round time: its start) */
	for (; t < last; t += step) {
		int x = x0 + (int)((t - m->first) * l->col_w / m->span);
		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444444\"/>\n", x, y, x, y + 5);
		time_text(t, t % 1440 ? "%H:%M" : "%d %b", s, sizeof(s));
		if (x + width_of(s) <= x0 + l->panel_w)
			text(f, x, y + 18, false, "", s);
	}
}

static void panel(FILE *f, const struct hs_matrix *m, const struct words *w, const struct layout *l, int p)
{
	int x0 = l->x[p], y = l->top + l->h;

	text(f, x0, l->top - 8, false, "font-weight=\"bold\"", w->head[p]);
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#000004\"/>\n", x0, l->top,
		l->panel_w, l->h);
	if (m->ncols) {
		cells(f, m, l, p);
		time_axis(f, m, l, x0);
	} else {
		text(f, x0 + 8, l->top + l->h / 2 + 4, false, "fill=\"#cccccc\"", "nothing recorded");
	}
	if (m->ncols)
		text(f, x0 + l->panel_w, y + 34, false, "text-anchor=\"end\"", "time (UTC)");
	/* the legend: the scale from 0 to the largest cell */
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"10\" fill=\"url(#scale)\" stroke=\"#444444\"/>\n",
		x0, y + 44, SCALE_W);
	text(f, x0, y + 67, false, "", "0");
	text(f, x0 + SCALE_W, y + 67, false, "text-anchor=\"end\"", w->max[p]); /* (20 digits fit beside "0") */
	text(f, x0, y + 83, false, "", w->per[p]);
	text(f, x0, y + 99, false, "", w->total[p]);
}

static void draw(FILE *f, const struct hs_matrix *m, const char *table)
{
	struct words w;
	struct layout l;
	char c[8], k[LABEL_CHARS + 4];
	size_t every;

	make_words(m, table, &w);
	make_layout(m, &w, &l);
	every = (size_t)((14 + l.band_h - 1) / l.band_h); /* key labels 14 px apart at least */
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
		   "viewBox=\"0 0 %d %d\">\n",
		l.width, l.height, l.width, l.height);
	fputs("<defs><linearGradient id=\"scale\" x1=\"0\" x2=\"1\" y1=\"0\" y2=\"0\">\n", f);
	for (int i = 0; i <= 10; i++) {
		colour(i / 10.0, c);
		fprintf(f, "<stop offset=\"%d%%\" stop-color=\"%s\"/>\n", i * 10, c);
	}
	fputs("</linearGradient></defs>\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n", f);
	text(f, MARGIN, MARGIN + TITLE_PX, true, "font-weight=\"bold\"", w.title);
	text(f, MARGIN, MARGIN + TITLE_PX + 20, false, "", w.rows);
	text(f, MARGIN, MARGIN + TITLE_PX + 20 + LINE, false, "", w.time);
	text(f, MARGIN, l.top - 8, false, "font-weight=\"bold\"", "first key");
	for (size_t j = 0; j < m->nbands; j += every) {
		key_text(m->label[j], m->labeln[j], LABEL_CHARS, k);
		text(f, l.x[0] - 6, l.top + (int)j * l.band_h + l.band_h / 2 + 4, false, "text-anchor=\"end\"", k);
	}
	panel(f, m, &w, &l, 0);
	panel(f, m, &w, &l, 1);
	fputs("</svg>\n", f);
}

int hs_matrix_svg(const struct hs_matrix *m, const char *table, const char *path)
{
	char *tmp;
	FILE *f;
	int fd, rc = 0;

	if (asprintf(&tmp, "%s.tmp%ld", path, (long)getpid()) < 0)
		return -ENOMEM;
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666)) < 0) {
		rc = -errno;
		free(tmp);
		return rc;
	}
	if (!(f = fdopen(fd, "w"))) {
		rc = -errno;
		close(fd);
		goto unlink_tmp;
	}
	draw(f, m, table);
	if (ferror(f))
		rc = -EIO;
	if (fclose(f) && !rc)
		rc = errno ? -errno : -EIO;
	if (!rc && rename(tmp, path))
		rc = -errno;
unlink_tmp:
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}

int hs_write_svg(cs_store *st, const char *table, const char *path)
{
	struct hs_matrix *m;
	int rc = hs_matrix_build(st, table, 0, &m);

	if (rc)
		return rc;
	rc = hs_matrix_svg(m, table, path);
	hs_matrix_free(m);
	return rc;
}
