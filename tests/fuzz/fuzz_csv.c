/* fuzz_csv.c — cellctl import's CSV reader (tools/import/csv.h), as Go's encoding/csv reads cbt's files.
 *
 * Input: the bytes of a CSV file. Properties:
 *   - csv_read() returns records until the end or one clean error (-EINVAL with a message naming the
 *     line and column), never anything else, and every field is NUL-terminated where it says;
 *   - the records, written back with csv_put_field() (as export writes them) and read again, are the
 *     same records, field for field, wherever csv_carries() says the bytes survive a round trip (a
 *     record that is a single empty field is a blank line, which readers skip: left out);
 *   - csv_read_line() gives back every byte of the input in order, with "\r\n" as "\n" and a final '\r'
 *     dropped, and csv_offset() counts them.
 */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "csv.h"
#include "fuzz.h"

static int mem_fd(const void *p, size_t n)
{
	int fd = memfd_create("fuzz_csv", 0);

	if (fd < 0 || (n && write(fd, p, n) != (ssize_t)n) || lseek(fd, 0, SEEK_SET) != 0)
		abort();
	return fd;
}

struct rec {
	char *text;   /* the record as csv_put_field() wrote it, with its newline */
	size_t len;
	char **f;     /* the fields as read */
	size_t *fn, nf;
	bool skip;    /* not carried by a round trip: left out of the comparison */
};

/* Read every record of P (N bytes). Returns the number kept in *RECS (caller frees), or -1 after an
 * error (the records before it still returned). */
static int read_all(const void *p, size_t n, struct rec **recs, size_t *nrecs, bool writeback)
{
	int fd = mem_fd(p, n), rc;
	csv_reader *r;
	csv_field *f;
	size_t nf;
	uint64_t line, last = 0;
	char *err = NULL;

	*recs = NULL;
	*nrecs = 0;
	FUZZ_CHECK(csv_open(fd, -1, &r) == 0);
	while ((rc = csv_read(r, &f, &nf, &line, &err)) == 1) {
		struct rec *nr, *rec;
		FILE *m;

		FUZZ_CHECK(nf >= 1 && line > last);
		last = line;
		for (size_t i = 0; i < nf; i++)
			FUZZ_CHECK(f[i].p[f[i].n] == '\0');
		if (!(nr = realloc(*recs, (*nrecs + 1) * sizeof(*nr))))
			abort();
		*recs = nr;
		rec = &nr[(*nrecs)++];
		rec->nf = nf;
		rec->f = calloc(nf, sizeof(*rec->f));
		rec->fn = calloc(nf, sizeof(*rec->fn));
		if (!rec->f || !rec->fn)
			abort();
		for (size_t i = 0; i < nf; i++) {
			rec->f[i] = (char *)fuzz_dup(f[i].p, f[i].n);
			rec->fn[i] = f[i].n;
		}
		rec->text = NULL;
		rec->len = 0;
		rec->skip = false;
		if (writeback) {
			if (!(m = open_memstream(&rec->text, &rec->len)))
				abort();
			for (size_t i = 0; i < nf; i++) {
				if (i)
					putc(',', m);
				csv_put_field(m, f[i].p, f[i].n);
			}
			putc('\n', m);
			fclose(m);
		}
	}
	FUZZ_CHECK(rc == 0 || rc == -EINVAL);
	if (rc == -EINVAL)
		FUZZ_CHECK(err && !strncmp(err, "line ", 5) && !strchr(err, '\n'));
	else
		FUZZ_CHECK(err == NULL);
	free(err);
	csv_free(r);
	close(fd);
	return rc ? -1 : 0;
}

static void free_recs(struct rec *recs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < recs[i].nf; j++)
			free(recs[i].f[j]);
		free(recs[i].f);
		free(recs[i].fn);
		free(recs[i].text);
	}
	free(recs);
}

static void check_records(const uint8_t *data, size_t size)
{
	struct rec *recs, *back;
	size_t n, nback;
	char *text = NULL;
	size_t tlen = 0, kept = 0;
	FILE *m;

	read_all(data, size, &recs, &n, true);
	if (!(m = open_memstream(&text, &tlen)))
		abort();
	for (size_t i = 0; i < n; i++) {
		bool carried = !(recs[i].nf == 1 && recs[i].fn[0] == 0);
		for (size_t j = 0; j < recs[i].nf && carried; j++)
			carried = csv_carries(recs[i].f[j], recs[i].fn[j]);
		if (!carried) {
			recs[i].skip = true;
			continue;
		}
		fwrite(recs[i].text, 1, recs[i].len, m);
		kept++;
	}
	fclose(m);
	FUZZ_CHECK(read_all(text, tlen, &back, &nback, false) == 0);
	FUZZ_CHECK(nback == kept);
	for (size_t i = 0, k = 0; i < n; i++) {
		if (recs[i].skip)
			continue;
		FUZZ_CHECK(back[k].nf == recs[i].nf);
		for (size_t j = 0; j < recs[i].nf; j++)
			FUZZ_CHECK(back[k].fn[j] == recs[i].fn[j] && !memcmp(back[k].f[j], recs[i].f[j], recs[i].fn[j]));
		k++;
	}
	free_recs(recs, n);
	free_recs(back, nback);
	free(text);
}

static void check_lines(const uint8_t *data, size_t size)
{
	int fd = mem_fd(data, size), rc;
	csv_reader *r;
	const char *l;
	size_t n, pos = 0;
	uint64_t lineno, last = 0;

	FUZZ_CHECK(csv_open(fd, -1, &r) == 0);
	while ((rc = csv_read_line(r, &l, &n, &lineno)) == 1) {
		const uint8_t *nl = memchr(data + pos, '\n', size - pos);
		size_t raw = nl ? (size_t)(nl + 1 - (data + pos)) : size - pos, want = raw;

		FUZZ_CHECK(lineno == last + 1);
		last = lineno;
		if (raw >= 2 && data[pos + raw - 2] == '\r' && data[pos + raw - 1] == '\n')
			want--; /* "\r\n" as "\n" */
		else if (!nl && data[pos + raw - 1] == '\r')
			want--; /* a '\r' ending the input */
		FUZZ_CHECK(n == want);
		FUZZ_CHECK(!memcmp(l, data + pos, want - (want < raw && nl ? 1 : 0)));
		if (want < raw && nl)
			FUZZ_CHECK(l[want - 1] == '\n');
		pos += raw;
		FUZZ_CHECK(csv_offset(r) == pos);
	}
	FUZZ_CHECK(rc == 0 && pos == size);
	csv_free(r);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_records(data, size);
	check_lines(data, size);
	return 0;
}
