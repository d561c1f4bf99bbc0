/* csv.c — Go's encoding/csv reader and writer (the dialect of cbt import), streaming from a descriptor.
 *
 * The reader follows Go's readRecord: it reads a line at a time, turns a final "\r\n" into "\n" (and
 * drops a '\r' ending the input), skips lines that are only a newline, and splits the line into fields;
 * a quoted field may run over several lines. Errors carry Go's words and a 1-based byte column.
 */
#include "csv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUF_SIZE (256 * 1024)

struct csv_reader {
	int fd, tee;
	csv_read_fn *fn;    /* if not NULL, read through it instead of FD */
	void *ctx;
	char *buf;          /* read buffer */
	size_t pos, len;
	bool eof;
	uint64_t offset;    /* bytes handed out as lines */
	char *lbuf;         /* a line that spanned refills */
	size_t lcap;
	char *line;         /* the current line: in buf or lbuf */
	size_t linen;
	uint64_t lineno;
	char *rec;          /* the record's field bytes, each followed by a NUL */
	size_t recn, reccap;
	size_t *ends;       /* where each field ends in rec */
	csv_field *fields;
	size_t nf, fcap;
};

int csv_open(int fd, int tee, csv_reader **out)
{
	csv_reader *r = calloc(1, sizeof(*r));

	if (!r || !(r->buf = malloc(BUF_SIZE))) {
		free(r);
		return -ENOMEM;
	}
	r->fd = fd;
	r->tee = tee;
	*out = r;
	return 0;
}

int csv_open_fn(csv_read_fn *fn, void *ctx, csv_reader **out)
{
	int rc = csv_open(-1, -1, out);

	if (rc == 0) {
		(*out)->fn = fn;
		(*out)->ctx = ctx;
	}
	return rc;
}

void csv_free(csv_reader *r)
{
	if (!r)
		return;
	free(r->buf);
	free(r->lbuf);
	free(r->rec);
	free(r->ends);
	free(r->fields);
	free(r);
}

uint64_t csv_offset(const csv_reader *r)
{
	return r->offset;
}

uint64_t csv_lineno(const csv_reader *r)
{
	return r->lineno;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int refill(csv_reader *r)
{
	ssize_t n;

	if (r->fn) {
		n = r->fn(r->ctx, r->buf, BUF_SIZE);
		if (n < 0)
			return (int)n;
	} else {
		do
			n = read(r->fd, r->buf, BUF_SIZE);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return -errno;
	}
	r->pos = 0;
	r->len = (size_t)n;
	if (n == 0)
		r->eof = true;
	else if (r->tee >= 0)
		return write_all(r->tee, r->buf, (size_t)n);
	return 0;
}

static int lbuf_add(csv_reader *r, size_t have, const char *p, size_t n)
{
	if (have + n + 1 > r->lcap) {
		size_t cap = r->lcap ? r->lcap : 4096;
		char *b;
		while (cap < have + n + 1)
			cap *= 2;
		if (!(b = realloc(r->lbuf, cap)))
			return -ENOMEM;
		r->lbuf = b;
		r->lcap = cap;
	}
	memcpy(r->lbuf + have, p, n);
	return 0;
}

/* Read the next line into r->line (with its '\n', if any). Returns 1, 0 at the end, or -errno. */
static int read_line(csv_reader *r)
{
	size_t have = 0;
	bool spanned = false;
	int rc;

	for (;;) {
		char *nl;
		size_t n;

		if (r->pos == r->len) {
			if (!r->eof && (rc = refill(r)) < 0)
				return rc;
			if (r->eof)
				break;
		}
		nl = memchr(r->buf + r->pos, '\n', r->len - r->pos);
		n = nl ? (size_t)(nl + 1 - (r->buf + r->pos)) : r->len - r->pos;
		if (!spanned && nl) {
			r->line = r->buf + r->pos;
			r->linen = n;
			r->pos += n;
			goto got;
		}
		if ((rc = lbuf_add(r, have, r->buf + r->pos, n)) < 0)
			return rc;
		have += n;
		r->pos += n;
		spanned = true;
		if (nl)
			break;
	}
	if (!have)
		return 0;
	r->line = r->lbuf;
	r->linen = have;
got:
	r->offset += r->linen;
	r->lineno++;
	if (r->linen >= 2 && r->line[r->linen - 2] == '\r' && r->line[r->linen - 1] == '\n') {
		r->line[r->linen - 2] = '\n';
		r->linen--;
	} else if (r->line[r->linen - 1] == '\r') { /* only at the end of the input */
		r->linen--;
	}
	return 1;
}

int csv_read_line(csv_reader *r, const char **line, size_t *n, uint64_t *lineno)
{
	int rc = read_line(r);

	if (rc <= 0)
		return rc;
	*line = r->line;
	*n = r->linen;
	*lineno = r->lineno;
	return 1;
}

static int rec_add(csv_reader *r, const char *p, size_t n)
{
	if (r->recn + n + 1 > r->reccap) {
		size_t cap = r->reccap ? r->reccap : 4096;
		char *b;
		while (cap < r->recn + n + 1)
			cap *= 2;
		if (!(b = realloc(r->rec, cap)))
			return -ENOMEM;
		r->rec = b;
		r->reccap = cap;
	}
	memcpy(r->rec + r->recn, p, n);
	r->recn += n;
	return 0;
}

static int field_end(csv_reader *r)
{
	int rc = rec_add(r, "", 1); /* the NUL after each field */

	if (rc)
		return rc;
	if (r->nf == r->fcap) {
		size_t cap = r->fcap ? 2 * r->fcap : 16;
		size_t *e = realloc(r->ends, cap * sizeof *e);
		if (!e)
			return -ENOMEM;
		r->ends = e;
		csv_field *f = realloc(r->fields, cap * sizeof *f);
		if (!f)
			return -ENOMEM;
		r->fields = f;
		r->fcap = cap;
	}
	r->ends[r->nf++] = r->recn - 1;
	return 0;
}

static int parse_error(char **err, uint64_t line, size_t col, const char *what)
{
	if (err && asprintf(err, "line %llu, column %zu: %s", (unsigned long long)line, col, what) < 0)
		*err = NULL;
	return -EINVAL;
}

/* The length of LINE without its newline. */
static size_t body_len(const char *line, size_t n)
{
	return n && line[n - 1] == '\n' ? n - 1 : n;
}

int csv_read(csv_reader *r, csv_field **fields, size_t *nfields, uint64_t *lineno, char **err)
{
	const char *l;
	size_t n, col;
	int rc;

	do {
		if ((rc = read_line(r)) <= 0)
			return rc;
	} while (r->linen == 1 && r->line[0] == '\n');
	*lineno = r->lineno;
	r->recn = 0;
	r->nf = 0;
	l = r->line;
	n = r->linen;
	col = 1;
	for (;;) {
		if (n == 0 || l[0] != '"') {
			const char *comma = memchr(l, ',', body_len(l, n));
			size_t fn = comma ? (size_t)(comma - l) : body_len(l, n);
			const char *q = memchr(l, '"', fn);

			if (q)
				return parse_error(err, r->lineno, col + (size_t)(q - l), "bare \" in non-quoted-field");
			if ((rc = rec_add(r, l, fn)) || (rc = field_end(r)))
				return rc;
			if (!comma)
				break;
			l += fn + 1;
			n -= fn + 1;
			col += fn + 1;
			continue;
		}
		/* A quoted field. */
		l++;
		n--;
		col++;
		for (;;) {
			const char *q = memchr(l, '"', n);

			if (q) {
				size_t i = (size_t)(q - l);
				if ((rc = rec_add(r, l, i)))
					return rc;
				l += i + 1;
				n -= i + 1;
				col += i + 1;
				if (n && l[0] == '"') { /* "" */
					if ((rc = rec_add(r, "\"", 1)))
						return rc;
					l++;
					n--;
					col++;
				} else if (n && l[0] == ',') {
					l++;
					n--;
					col++;
					break;
				} else if (n == 0 || (n == 1 && l[0] == '\n')) {
					n = 0;
					break;
				} else {
					return parse_error(err, r->lineno, col - 1, "extraneous or missing \" in quoted-field");
				}
			} else if (n) {
				/* The field goes on on the next line. */
				if ((rc = rec_add(r, l, n)))
					return rc;
				col += n;
				if ((rc = read_line(r)) < 0)
					return rc;
				if (rc == 0)
					return parse_error(err, r->lineno, col, "extraneous or missing \" in quoted-field");
				l = r->line;
				n = r->linen;
				col = 1;
			} else {
				return parse_error(err, r->lineno, col, "extraneous or missing \" in quoted-field");
			}
		}
		if ((rc = field_end(r)))
			return rc;
		if (n == 0)
			break;
	}
	for (size_t i = 0, start = 0; i < r->nf; i++) {
		r->fields[i].p = r->rec + start;
		r->fields[i].n = r->ends[i] - start;
		start = r->ends[i] + 1;
	}
	*fields = r->fields;
	*nfields = r->nf;
	return 1;
}

void csv_put_field(FILE *f, const void *p, size_t n)
{
	const char *s = p;
	bool quote = n && (s[0] == ' ' || s[0] == '\t');

	for (size_t i = 0; i < n && !quote; i++)
		quote = s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n';
	if (!quote) {
		fwrite(s, 1, n, f);
		return;
	}
	putc('"', f);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"')
			putc('"', f);
		putc(s[i], f);
	}
	putc('"', f);
}

bool csv_carries(const void *p, size_t n)
{
	const char *s = p;

	for (size_t i = 0; i + 1 < n; i++)
		if (s[i] == '\r' && s[i + 1] == '\n')
			return false;
	return true;
}
