/* cbtfmt.c — cbt's output, byte for byte: Go's %q, rune-counted padding, Go's time layout and zone
 * choice, printRow, and the text/tabwriter settings `cbt ls TABLE` uses.
 */
#include "cbtfmt.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- UTF-8 as Go's unicode/utf8 reads it -------------------------------------------------------- */

int32_t gofmt_decode_rune(const unsigned char *p, size_t n, size_t *width)
{
	unsigned char b0 = p[0], lo = 0x80, hi = 0xBF;
	size_t need;
	int32_t r;

	*width = 1;
	if (b0 < 0x80)
		return b0;
	if (b0 >= 0xC2 && b0 <= 0xDF) {
		need = 2;
		r = b0 & 0x1F;
	} else if (b0 >= 0xE0 && b0 <= 0xEF) {
		need = 3;
		r = b0 & 0x0F;
		if (b0 == 0xE0)
			lo = 0xA0; /* no overlong forms */
		else if (b0 == 0xED)
			hi = 0x9F; /* no surrogates */
	} else if (b0 >= 0xF0 && b0 <= 0xF4) {
		need = 4;
		r = b0 & 0x07;
		if (b0 == 0xF0)
			lo = 0x90;
		else if (b0 == 0xF4)
			hi = 0x8F; /* nothing above U+10FFFF */
	} else {
		return -1;
	}
	if (n < need || p[1] < lo || p[1] > hi)
		return -1;
	r = (r << 6) | (p[1] & 0x3F);
	for (size_t i = 2; i < need; i++) {
		if (p[i] < 0x80 || p[i] > 0xBF)
			return -1;
		r = (r << 6) | (p[i] & 0x3F);
	}
	*width = need;
	return r;
}

size_t gofmt_rune_count(const void *data, size_t n)
{
	const unsigned char *p = data;
	size_t count = 0, w;

	for (size_t i = 0; i < n; i += w, count++) {
		if (p[i] < 0x80)
			w = 1;
		else
			gofmt_decode_rune(p + i, n - i, &w);
	}
	return count;
}

bool gofmt_is_print(uint32_t r)
{
	size_t lo = 0, hi = gofmt_print_nranges;

	if (r < 0x80)
		return r >= 0x20 && r < 0x7F;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r < gofmt_print_ranges[mid][0])
			hi = mid;
		else if (r > gofmt_print_ranges[mid][1])
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

/* ---- %q ----------------------------------------------------------------------------------------- */

static const char hexdigits[] = "0123456789abcdef";

static void put_hex(FILE *f, const char *prefix, uint32_t v, int digits)
{
	fputs(prefix, f);
	for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4)
		putc(hexdigits[(v >> shift) & 0xF], f);
}

/* An ASCII byte that %q copies as it is. */
static bool plain_ascii(unsigned char c)
{
	return c >= 0x20 && c < 0x7F && c != '"' && c != '\\';
}

void cbtfmt_quote(FILE *f, const void *data, size_t n)
{
	const unsigned char *p = data;
	size_t i = 0, w;

	putc('"', f);
	while (i < n) {
		size_t run = i;

		while (run < n && plain_ascii(p[run]))
			run++;
		if (run > i) {
			fwrite(p + i, 1, run - i, f);
			i = run;
			continue;
		}
		int32_t r = gofmt_decode_rune(p + i, n - i, &w);

		if (r < 0) {
			put_hex(f, "\\x", p[i], 2);
		} else if (r == '"' || r == '\\') {
			putc('\\', f);
			putc(r, f);
		} else if (gofmt_is_print((uint32_t)r)) {
			fwrite(p + i, 1, w, f);
		} else {
			switch (r) {
			case '\a': fputs("\\a", f); break;
			case '\b': fputs("\\b", f); break;
			case '\f': fputs("\\f", f); break;
			case '\n': fputs("\\n", f); break;
			case '\r': fputs("\\r", f); break;
			case '\t': fputs("\\t", f); break;
			case '\v': fputs("\\v", f); break;
			default:
				if (r < 0x20 || r == 0x7F)
					put_hex(f, "\\x", (uint32_t)r, 2);
				else if (r < 0x10000)
					put_hex(f, "\\u", (uint32_t)r, 4);
				else
					put_hex(f, "\\U", (uint32_t)r, 8);
			}
		}
		i += w;
	}
	putc('"', f);
}

char *cbtfmt_quote_dup(const void *p, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	cbtfmt_quote(f, p, n);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* ---- Time --------------------------------------------------------------------------------------- */

/* The last second formatted, as "YYYY/MM/DD-HH:MM:SS.": a row's cells and neighbouring rows share it,
 * and localtime_r is most of a cell's printing cost. */
static _Thread_local struct {
	int64_t sec;
	size_t len; /* 0: nothing cached */
	char text[CBTFMT_TIME_MAX - 6];
} last_sec;

/* Whether PATH is a file Go would load as a zone: readable, starting with the TZif magic. */
static bool is_tzif(const char *path)
{
	char magic[4];
	FILE *f = fopen(path, "rb");
	bool ok;

	if (!f)
		return false;
	ok = fread(magic, 1, sizeof magic, f) == sizeof magic && memcmp(magic, "TZif", 4) == 0;
	fclose(f);
	return ok;
}

void cbtfmt_tz_init(void)
{
	/* Go's platformZoneSources, in its order. */
	static const char *const sources[] = {
		"/usr/share/zoneinfo/", "/usr/share/lib/zoneinfo/", "/usr/lib/locale/TZ/", "/etc/zoneinfo/",
	};
	const char *tz = getenv("TZ");

	if (tz) {
		const char *name = tz[0] == ':' ? tz + 1 : tz;
		char *found = NULL;

		if (name[0] == '/') {
			if (is_tzif(name) && asprintf(&found, ":%s", name) < 0)
				found = NULL;
		} else if (name[0] != '\0' && strcmp(name, "UTC") != 0) {
			for (size_t i = 0; !found && i < sizeof sources / sizeof sources[0]; i++) {
				char *path;

				if (asprintf(&path, "%s%s", sources[i], name) < 0)
					break;
				if (is_tzif(path) && asprintf(&found, ":%s", path) < 0)
					found = NULL;
				free(path);
			}
		}
		/* Load exactly the file Go would; anything else is Go's fallback, UTC. */
		setenv("TZ", found ? found : "UTC0", 1);
		free(found);
	}
	tzset();
	last_sec.len = 0;
}

static char *put_2digits(char *p, int v)
{
	*p++ = (char)('0' + v / 10);
	*p++ = (char)('0' + v % 10);
	return p;
}

/* cbtfmt_time, returning the length of what it wrote */
static size_t format_time(char buf[CBTFMT_TIME_MAX], int64_t ts)
{
	int64_t sec = ts / 1000000, usec = ts % 1000000;

	if (usec < 0) {
		usec += 1000000;
		sec--;
	}
	if (last_sec.len == 0 || last_sec.sec != sec) {
		time_t t = (time_t)sec;
		struct tm tm;
		long long year;
		char *p = last_sec.text;

		if (!localtime_r(&t, &tm))
			return (size_t)snprintf(buf, CBTFMT_TIME_MAX, "?");
		year = (long long)tm.tm_year + 1900;
		if (year >= 1000 && year <= 9999) {
			p = put_2digits(p, (int)(year / 100));
			p = put_2digits(p, (int)(year % 100));
		} else {
			p += snprintf(p, 24, "%04lld", year);
		}
		*p++ = '/';
		p = put_2digits(p, tm.tm_mon + 1);
		*p++ = '/';
		p = put_2digits(p, tm.tm_mday);
		*p++ = '-';
		p = put_2digits(p, tm.tm_hour);
		*p++ = ':';
		p = put_2digits(p, tm.tm_min);
		*p++ = ':';
		p = put_2digits(p, tm.tm_sec);
		*p++ = '.';
		last_sec.sec = sec;
		last_sec.len = (size_t)(p - last_sec.text);
	}
	memcpy(buf, last_sec.text, last_sec.len);
	for (int i = 5; i >= 0; i--, usec /= 10)
		buf[last_sec.len + (size_t)i] = (char)('0' + usec % 10);
	buf[last_sec.len + 6] = '\0';
	return last_sec.len + 6;
}

char *cbtfmt_time(char buf[CBTFMT_TIME_MAX], int64_t ts)
{
	format_time(buf, ts);
	return buf;
}

/* ---- Rows --------------------------------------------------------------------------------------- */

static const char rule[] = "----------------------------------------"; /* strings.Repeat("-", 40) */

static const char spaces[] = "                                        "; /* 40: the most a name is padded */

void cbtfmt_row(FILE *f, const cs_row *row, const unsigned *mult)
{
	/* "  family:qualifier<padding> @ TIME\n    " is built whole when it fits, and written at once. */
	char head[512], when[CBTFMT_TIME_MAX];
	const char *fam = NULL; /* the last family seen, and its length (cells come grouped by family) */
	size_t famlen = 0;

	fputs(rule, f);
	putc('\n', f);
	fwrite(row->key.data, 1, row->key.len, f);
	putc('\n', f);
	for (size_t i = 0; i < row->ncells; i++) {
		const cs_cell *c = &row->cells[i];
		size_t flen, qlen = c->qualifier.len;

		if (c->family != fam)
			fam = c->family, famlen = strlen(fam);
		flen = famlen;
		size_t runes = gofmt_rune_count(c->family, flen) + 1 + gofmt_rune_count(c->qualifier.data, qlen);
		size_t pad = runes < 40 ? 40 - runes : 0, wlen, n = 0;
		unsigned times = mult && mult[i] > 1 ? mult[i] : 1;

		wlen = format_time(when, c->ts);
		if (2 + flen + 1 + qlen + pad + 3 + wlen + 5 <= sizeof head) {
			memcpy(head + n, "  ", 2), n += 2;
			memcpy(head + n, c->family, flen), n += flen;
			head[n++] = ':';
			memcpy(head + n, c->qualifier.data, qlen), n += qlen;
			memcpy(head + n, spaces, pad), n += pad;
			memcpy(head + n, " @ ", 3), n += 3;
			memcpy(head + n, when, wlen), n += wlen;
			memcpy(head + n, "\n    ", 5), n += 5;
		}
		while (times--) {
			if (n) {
				fwrite(head, 1, n, f);
			} else {
				fputs("  ", f);
				fwrite(c->family, 1, flen, f);
				putc(':', f);
				fwrite(c->qualifier.data, 1, qlen, f);
				fwrite(spaces, 1, pad, f);
				fputs(" @ ", f);
				fputs(when, f);
				fputs("\n    ", f);
			}
			cbtfmt_quote(f, c->value.data, c->value.len);
			putc('\n', f);
		}
	}
	putc('\n', f);
}

void cbtfmt_empty_row(FILE *f)
{
	fputs(rule, f);
	fputs("\n\n\n", f);
}

void cbtfmt_read_stats(FILE *f, const struct cbtfmt_read_stats *s)
{
	fprintf(f, "Summary Stats\n====================\n"
		   "rows_seen_count: %llu\nrows_returned_count: %llu\n"
		   "cells_seen_count: %llu\ncells_returned_count: %llu\n"
		   "frontend_server_latency: %lldms\n\n",
		(unsigned long long)s->rows_seen, (unsigned long long)s->rows_returned,
		(unsigned long long)s->cells_seen, (unsigned long long)s->cells_returned, (long long)s->latency_ms);
}

/* ---- Tables ------------------------------------------------------------------------------------- */

enum { TW_MINWIDTH = 10, TW_TABWIDTH = 8, TW_PADDING = 4 };

/* The width of column C: its widest cell plus padding, at least minwidth, rounded up to whole tabs. */
static size_t tab_column_width(const char *const *cells, size_t nrows, size_t ncols, size_t c)
{
	size_t width = TW_MINWIDTH;

	for (size_t r = 0; r < nrows; r++) {
		const char *t = cells[r * ncols + c];
		size_t w = gofmt_rune_count(t, strlen(t)) + TW_PADDING;

		if (w > width)
			width = w;
	}
	return (width + TW_TABWIDTH - 1) / TW_TABWIDTH * TW_TABWIDTH;
}

void cbtfmt_tabwrite(FILE *f, const char *const *cells, size_t nrows, size_t ncols)
{
	size_t widths[CBTFMT_TAB_MAXCOLS];

	if (ncols == 0 || ncols > CBTFMT_TAB_MAXCOLS)
		return;
	for (size_t c = 0; c + 1 < ncols; c++)
		widths[c] = tab_column_width(cells, nrows, ncols, c);
	for (size_t r = 0; r < nrows; r++) {
		for (size_t c = 0; c < ncols; c++) {
			const char *text = cells[r * ncols + c];

			fputs(text, f);
			if (c + 1 == ncols)
				break;
			size_t pad = widths[c] - gofmt_rune_count(text, strlen(text));

			for (size_t t = 0; t < (pad + TW_TABWIDTH - 1) / TW_TABWIDTH; t++)
				putc('\t', f);
		}
		putc('\n', f);
	}
}
