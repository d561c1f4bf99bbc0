/* heatsvg.c — the Key Visualizer's heatmap: the store's recorded counts regrouped into bands of about
 * equal row counts (heatsvg.h says how), drawn as plain SVG 1.1: key ranges down (the first key at the
 * top), minutes across, reads and writes in two panels, dark to bright on a square-root scale. */
#include "heatsvg.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
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

/* Row index I's band: the last whose first row is <= I (band j starts at row floor(j * rows / nbands)). */
static uint64_t band_start(const struct hs_matrix *m, size_t j)
{
	return j * m->rows / m->nbands;
}

static size_t band_of_row(const struct hs_matrix *m, uint64_t i)
{
	size_t j = (size_t)(i * m->nbands / m->rows);
	while (j + 1 < m->nbands && band_start(m, j + 1) <= i)
		j++;
	while (j > 0 && band_start(m, j) > i)
		j--;
	return j;
}

/* floor(A * B / D), B <= D: exact where the compiler has 128-bit integers (every 64-bit target). */
static uint64_t muldiv(uint64_t a, uint64_t b, uint64_t d)
{
#ifdef __SIZEOF_INT128__
	__extension__ typedef unsigned __int128 u128; /* (not ISO C: -Wpedantic is told so) */
	return (uint64_t)((u128)a * b / d);
#else
	uint64_t r = (uint64_t)((long double)a * b / d);
	return r > a ? a : r;
#endif
}

/* Add C to the cells of the bands holding rows [LO, HI) of M (LO < HI), in proportion to how many of
 * those rows each band holds: a band the range barely touches gets its small share, not an even one.
 * Cumulative rounding (band j gets floor(C * rows up to j's end / all) less what the ones before got)
 * gives whole numbers, each less than 1 from its exact share, that sum to C. */
static void apportion(const struct hs_matrix *m, uint64_t *col, uint64_t lo, uint64_t hi, uint64_t c)
{
	size_t j = band_of_row(m, lo), je = band_of_row(m, hi - 1);
	uint64_t given = 0;

	for (; j <= je; j++) {
		uint64_t end = j + 1 < m->nbands ? band_start(m, j + 1) : m->rows;
		uint64_t upto = j == je ? c : muldiv(c, (end < hi ? end : hi) - lo, hi - lo);
		col[j * m->ncols] += upto - given;
		given = upto;
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
	return rc;
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
	for (size_t t = 0; t < heat->nminutes; t++) {
		const cs_heat_minute *hm = &heat->minutes[t];
		size_t col = (size_t)((hm->minute - m->first) / m->span);
		for (size_t i = 0; i < hm->nranges; i++, ri += 2) {
			const cs_heat_range *r = &hm->ranges[i];
			uint64_t lo = rank[ri], hi = rank[ri + 1];
			if (lo < hi) {
				apportion(m, &m->reads[col], lo, hi, r->reads);
				apportion(m, &m->writes[col], lo, hi, r->writes);
			} else { /* (its rows are gone: where its key would be) */
				size_t b = band_of(m, r->key, r->keylen);
				m->reads[b * m->ncols + col] += r->reads;
				m->writes[b * m->ncols + col] += r->writes;
			}
			m->total_reads += r->reads;
			m->total_writes += r->writes;
		}
	}
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

/* ---- drawing ---- */

#define FONT "font-family=\"monospace\" font-size=\"11\""
#define LABEL_CHARS 20 /* a key label's characters at most */
#define CHAR_W 7       /* px per character of the labels' font, about */

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

/* Key bytes as text: printable ASCII as itself, anything else \xHH; XML-escaped; at most MAX characters
 * of the key (then "..."). */
static void put_key(FILE *f, const uint8_t *k, size_t n, size_t max)
{
	for (size_t i = 0; i < n && i < max; i++) {
		uint8_t c = k[i];
		if (c == '&')
			fputs("&amp;", f);
		else if (c == '<')
			fputs("&lt;", f);
		else if (c == '>')
			fputs("&gt;", f);
		else if (c == '"')
			fputs("&quot;", f);
		else if (c == '\\')
			fputs("\\\\", f);
		else if (c >= 0x20 && c < 0x7f)
			fputc(c, f);
		else
			fprintf(f, "\\x%02x", c);
	}
	if (n > max)
		fputs("...", f);
}

static void put_time(FILE *f, int64_t minute, const char *fmt)
{
	time_t t = (time_t)(minute * 60);
	struct tm tm;
	char buf[32];

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), fmt, &tm);
	fputs(buf, f);
}

struct layout {
	int label_w, band_h, col_w, panel_w, top, x[2], height;
};

static void panel(FILE *f, const struct hs_matrix *m, const struct layout *l, int p)
{
	const uint64_t *v = p ? m->writes : m->reads, max = p ? m->max_writes : m->max_reads;
	const char *what = p ? "writes" : "reads";
	int x0 = l->x[p], h = (int)m->nbands * l->band_h;
	char c[8];

	fprintf(f, "<text x=\"%d\" y=\"%d\" %s font-weight=\"bold\">%s</text>\n", x0, l->top - 8, FONT,
		p ? "Writes (row mutations)" : "Reads (rows read)");
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#000004\"/>\n", x0, l->top,
		l->panel_w, h);
	if (!m->ncols)
		fprintf(f, "<text x=\"%d\" y=\"%d\" %s fill=\"#cccccc\">nothing recorded</text>\n", x0 + 8,
			l->top + h / 2, FONT);
	for (size_t b = 0; b < m->nbands; b++)
		for (size_t col = 0; col < m->ncols; col++) {
			uint64_t n = v[b * m->ncols + col];
			if (!n)
				continue;
			colour(sqrt((double)n / (double)max), c);
			fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"><title>%s %llu, keys from ",
				x0 + (int)col * l->col_w, l->top + (int)b * l->band_h, l->col_w, l->band_h, c, what,
				(unsigned long long)n);
			put_key(f, m->label[b], m->labeln[b], 64);
			fputs(", ", f);
			put_time(f, m->first + (int64_t)col * m->span, "%Y-%m-%d %H:%M");
			if (m->span > 1)
				fprintf(f, " (+%lld min)", (long long)m->span - 1);
			fputs(" UTC</title></rect>\n", f);
		}
	/* the time axis: a tick every 80 px or so */
	int every = l->col_w >= 80 ? 1 : 80 / l->col_w + 1;
	for (size_t col = 0; col < m->ncols; col += (size_t)every) {
		int x = x0 + (int)col * l->col_w;
		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444444\"/>\n", x, l->top + h, x,
			l->top + h + 5);
		fprintf(f, "<text x=\"%d\" y=\"%d\" %s>", x, l->top + h + 17, FONT);
		put_time(f, m->first + (int64_t)col * m->span, "%H:%M");
		fputs("</text>\n", f);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" %s text-anchor=\"end\">time (UTC)</text>\n", x0 + l->panel_w,
		l->top + h + 32, FONT);
	/* the legend: the scale from 0 to the largest cell */
	int ly = l->top + h + 44;
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"160\" height=\"10\" fill=\"url(#scale)\" stroke=\"#444444\"/>\n",
		x0, ly);
	fprintf(f, "<text x=\"%d\" y=\"%d\" %s>0</text>\n", x0, ly + 23, FONT);
	fprintf(f, "<text x=\"%d\" y=\"%d\" %s text-anchor=\"end\">%llu</text>\n", x0 + 160, ly + 23, FONT,
		(unsigned long long)max);
	fprintf(f, "<text x=\"%d\" y=\"%d\" %s>%s per cell, total %llu</text>\n", x0, ly + 38, FONT, what,
		(unsigned long long)(p ? m->total_writes : m->total_reads));
	fprintf(f, "<text x=\"%d\" y=\"%d\" %s>(square-root scale)</text>\n", x0, ly + 52, FONT);
}

static void draw(FILE *f, const struct hs_matrix *m, const char *table)
{
	struct layout l;
	size_t maxc = 10; /* ("first key") */
	char c[8];

	for (size_t j = 0; j < m->nbands; j++) {
		size_t w = 0;
		for (size_t i = 0; i < m->labeln[j] && i < LABEL_CHARS; i++)
			w += m->label[j][i] >= 0x20 && m->label[j][i] < 0x7f ? (m->label[j][i] == '\\' ? 2 : 1) : 4;
		w += m->labeln[j] > LABEL_CHARS ? 3 : 0;
		if (w > maxc)
			maxc = w;
	}
	l.label_w = 16 + (int)maxc * CHAR_W;
	l.band_h = (int)(480 / m->nbands);
	l.band_h = l.band_h < 6 ? 6 : l.band_h > 24 ? 24 : l.band_h;
	l.col_w = m->ncols ? (int)(720 / m->ncols) : 1;
	l.col_w = l.col_w < 2 ? 2 : l.col_w > 32 ? 32 : l.col_w;
	l.panel_w = (int)m->ncols * l.col_w < 240 ? 240 : (int)m->ncols * l.col_w;
	l.top = 72;
	l.x[0] = l.label_w;
	l.x[1] = l.x[0] + l.panel_w + 32;
	l.height = l.top + (int)m->nbands * l.band_h + 112;
	int width = l.x[1] + l.panel_w + 24;
	if (width < 760) /* (room for the lines above) */
		width = 760;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
		   "viewBox=\"0 0 %d %d\">\n",
		width, l.height, width, l.height);
	fputs("<defs><linearGradient id=\"scale\" x1=\"0\" x2=\"1\" y1=\"0\" y2=\"0\">\n", f);
	for (int i = 0; i <= 10; i++) {
		colour(i / 10.0, c);
		fprintf(f, "<stop offset=\"%d%%\" stop-color=\"%s\"/>\n", i * 10, c);
	}
	fputs("</linearGradient></defs>\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n", f);
	fputs("<text x=\"8\" y=\"20\" font-family=\"monospace\" font-size=\"14\" font-weight=\"bold\">"
	      "Key Visualizer: table ", f);
	put_key(f, (const uint8_t *)table, strlen(table), 64);
	fputs("</text>\n", f);
	fprintf(f, "<text x=\"8\" y=\"38\" %s>%llu rows in %zu key ranges of about %llu rows; ", FONT,
		(unsigned long long)m->rows, m->nbands, (unsigned long long)(m->rows ? (m->rows + m->nbands - 1) / m->nbands : 0));
	if (m->ncols) {
		fprintf(f, "%lld minute%s a column, from ", (long long)m->span, m->span > 1 ? "s" : "");
		put_time(f, m->first, "%Y-%m-%d %H:%M UTC");
	} else {
		fputs("no accesses recorded", f);
	}
	fputs("</text>\n", f);
	fprintf(f, "<text x=\"8\" y=\"%d\" %s font-weight=\"bold\">first key</text>\n", l.top - 8, FONT);
	for (size_t j = 0; j < m->nbands; j++) {
		if (l.band_h < 11 && j % (size_t)((11 + l.band_h - 1) / l.band_h))
			continue; /* (labels too close: every other, or third) */
		fprintf(f, "<text x=\"%d\" y=\"%d\" %s text-anchor=\"end\">", l.label_w - 6,
			l.top + (int)j * l.band_h + l.band_h / 2 + 4, FONT);
		put_key(f, m->label[j], m->labeln[j], LABEL_CHARS);
		fputs("</text>\n", f);
	}
	panel(f, m, &l, 0);
	panel(f, m, &l, 1);
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
