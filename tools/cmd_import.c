/* cmd_import.c — cellctl import: cbt's CSV import (and cellctl's JSON lines, and DynamoDB exports:
 * import_ddb.c) into an existing table.
 *
 * Nothing is written unless the whole input is good, yet memory stays constant: the input is read
 * twice. The first pass checks every line (CSV syntax, field counts, families, timestamps, sizes) in a
 * read-only transaction; the second writes it through the store's bulk loader in batches of whole
 * lines, each batch one committed and synced transaction. An input that is not a regular file (a pipe,
 * <(...)) is first copied to an unlinked temporary file, so both passes read a file; a gzip'd input
 * (its first bytes say so) is decompressed as each pass reads it. A failure in the second pass
 * (disk full, the table changed meanwhile) leaves the batches before it and says how far they reach.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "cellctl.h"
#include "import/csv.h"
#include "import/gzin.h"
#include "import/import.h"
#include "import/jsonin.h"
#include "progress.h"

#define BATCH_CELLS 100000
#define BATCH_BYTES (64u << 20)

static bool family_known(const struct imp *im, const char *f, size_t n)
{
	for (size_t i = 0; i < im->info->nfamilies; i++)
		if (strlen(im->info->families[i].name) == n && !memcmp(im->info->families[i].name, f, n))
			return true;
	return false;
}

const char *imp_family_aggregate(const struct imp *im, const char *fam)
{
	for (size_t i = 0; i < im->info->nfamilies; i++)
		if (!strcmp(im->info->families[i].name, fam) && im->info->families[i].type != CS_TYPE_BYTES)
			return cs_value_type_name(im->info->families[i].type);
	return NULL;
}

const char *imp_family_name(const struct imp *im, const char *f, size_t n)
{
	for (size_t i = 0; i < im->info->nfamilies; i++)
		if (strlen(im->info->families[i].name) == n && !memcmp(im->info->families[i].name, f, n))
			return im->info->families[i].name;
	return NULL;
}

/* ---- Writing ------------------------------------------------------------------------------------ */

static int batch_begin(struct imp *im)
{
	int rc = cellctl_begin(im->cc, &im->txn);

	if (rc != CC_OK)
		return rc;
	/* The families a DynamoDB export needs and the table lacks: in the first batch's transaction, so
	 * that on a local store they come with its cells or not at all. */
	for (size_t i = 0; !im->families_made && i < im->nnew; i++) {
		rc = cs_family_create(im->txn, im->table, im->newfams[i], "never");
		if (rc < 0 && rc != -EEXIST) { /* -EEXIST: someone made it meanwhile; the loader checks its kind */
			cs_txn_abort(im->txn);
			im->txn = NULL;
			return cc_store_error(NULL, rc, "creating a family for the import", im->table, im->newfams[i]);
		}
	}
	im->families_made = true;
	rc = cs_bulk_open(im->txn, im->table, &im->bulk);
	if (rc < 0) {
		cs_txn_abort(im->txn);
		im->txn = NULL;
		return cc_store_error(NULL, rc, "importing", im->table, NULL);
	}
	im->batch_cells = im->batch_bytes = im->batch_lines = 0;
	return CC_OK;
}

/* What the batches committed so far hold, for an error in the second pass. */
static const char *written_note(const struct imp *im)
{
	static char note[128];

	if (!im->committed)
		return "nothing was written";
	snprintf(note, sizeof note, "lines up to %llu (%llu cells) are written",
		 (unsigned long long)im->committed_line, (unsigned long long)im->committed);
	return note;
}

/* Commit the batch; LINE is the last line it holds (0: the last line of the input). */
static int batch_commit(struct imp *im, uint64_t line)
{
	int rc;

	cs_bulk_close(im->bulk);
	im->bulk = NULL;
	rc = cs_txn_commit(im->txn);
	im->txn = NULL;
	if (rc == 0 && (rc = cs_store_sync(im->cc->st)) < 0) /* written, only not yet on the disk */
		return cc_error("the write is committed but could not be flushed to disk: %s", cc_strerror(rc));
	if (rc < 0) {
		if (!line)
			return cc_error("writing the last batch: %s; %s", cc_strerror(rc), written_note(im));
		return cc_error("writing the batch ending at line %llu: %s; %s", (unsigned long long)line,
				cc_strerror(rc), written_note(im));
	}
	im->committed = im->cells;
	im->committed_line = line;
	/* stderr is unbuffered: the line is out before the next batch begins */
	if (im->report && (line || im->batch_lines)) /* (not the empty batch after a full last one) */
		fprintf(stderr, "cellctl import: committed lines 1-%llu, %llu cells\n",
			(unsigned long long)(line ? line : im->last_line), (unsigned long long)im->committed);
	return CC_OK;
}

static void batch_abort(struct imp *im)
{
	cs_bulk_close(im->bulk);
	cs_txn_abort(im->txn);
	im->bulk = NULL;
	im->txn = NULL;
}

/* How far the pass has read FD, for progress: compressed bytes when the input is gzip'd. */
static uint64_t input_offset(const struct imp *im, const csv_reader *r)
{
	return im->gz ? gzin_offset(im->gz) : csv_offset(r);
}

int imp_line_done(struct imp *im, uint64_t line, const csv_reader *r)
{
	uint64_t offset = input_offset(im, r);
	int rc;

	if (!im->writing) {
		progress_update(&im->prog, im->cells, offset);
		return CC_OK;
	}
	progress_update(&im->prog, im->cells, offset);
	im->last_line = line;
	im->batch_lines++;
	if (im->batch_cells < BATCH_CELLS && im->batch_bytes < BATCH_BYTES &&
	    (!im->max_lines || im->batch_lines < im->max_lines))
		return CC_OK;
	if ((rc = batch_commit(im, line)) != CC_OK || (rc = batch_begin(im)) != CC_OK)
		return rc;
	return CC_OK;
}

int imp_cell(struct imp *im, uint64_t line, size_t field, cs_bytes row, const char *family, cs_bytes q,
	     int64_t ts, cs_bytes value)
{
	int rc;

	if (!im->writing) {
		if (value.len > im->max_value) {
			if (field)
				return cc_error("line %llu, field %zu: a value of %zu bytes is over the store's limit of "
						"%llu bytes", (unsigned long long)line, field, value.len,
						(unsigned long long)im->max_value);
			return cc_error("line %llu: a value of %zu bytes is over the store's limit of %llu bytes",
					(unsigned long long)line, value.len, (unsigned long long)im->max_value);
		}
		im->cells++;
		return CC_OK;
	}
	rc = cs_bulk_put(im->bulk, row, family, q, ts, value);
	if (rc < 0) {
		int status;
		if (rc == -ENOENT)
			status = cc_error("line %llu: family %s is no longer in table %s (changed during the import); %s",
					  (unsigned long long)line, cc_qs(family), cc_qs(im->table), written_note(im));
		else if (rc == -ENOSPC || rc == -EIO) /* the store's fault, not the line's */
			status = cc_error("writing the batch that holds line %llu: %s; %s", (unsigned long long)line,
					  cc_strerror(rc), written_note(im));
		else
			status = cc_error("line %llu: %s; %s", (unsigned long long)line, cc_strerror(rc), written_note(im));
		return status;
	}
	im->cells++;
	im->batch_cells++;
	im->batch_bytes += row.len + q.len + value.len + 32;
	return CC_OK;
}

static int check_row(uint64_t line, const void *row, size_t n)
{
	if (n > CS_MAX_ROW_KEY)
		return cc_error("line %llu: the row key is longer than %d bytes", (unsigned long long)line, CS_MAX_ROW_KEY);
	(void)row;
	return CC_OK;
}

/* ---- CSV ---------------------------------------------------------------------------------------- */

/* cbt's value-encoded timestamp: "VALUE@TS" with TS a Go integer after the last '@'. */
static int value_ts(struct imp *im, uint64_t line, size_t field, const char *p, size_t n, cs_bytes *value,
		    int64_t *ts)
{
	const char *at = im->value_ts ? memrchr(p, '@', n) : NULL;
	int64_t t;

	*value = CS_BYTES(p, n);
	*ts = im->now;
	/* The field is NUL-terminated: a NUL inside the digits would stop go_parse_int early. */
	if (!at || memchr(at + 1, 0, n - (size_t)(at + 1 - p)) || go_parse_int(at + 1, 0, &t) < 0)
		return CC_OK;
	*value = CS_BYTES(p, (size_t)(at - p));
	if (t == -1) /* bigtable.ServerTime */
		return CC_OK;
	t -= t % 1000; /* the Go client truncates to milliseconds */
	if (t < 0)
		return cc_error("line %llu, field %zu: invalid timestamp %s (negative)", (unsigned long long)line, field,
				cc_q(at + 1, n - (size_t)(at + 1 - p)));
	*ts = t;
	return CC_OK;
}

static int csv_header(struct imp *im, csv_reader *r)
{
	csv_field *f, *famrow = NULL;
	size_t n, qoff = 0;
	uint64_t line = 0, famline = 0;
	char *err = NULL, *fams = NULL;
	int rc;

	if (!im->colfam) {
		if ((rc = csv_read(r, &f, &n, &famline, &err)) <= 0)
			goto read_failed;
		/* Keep the family row: the next csv_read() overwrites its fields. */
		size_t total = 0;
		for (size_t i = 0; i < n; i++)
			total += f[i].n + 1;
		if (!(fams = malloc(total + 1)) || !(famrow = calloc(n, sizeof *famrow))) {
			rc = cc_error("%s", strerror(ENOMEM));
			goto out;
		}
		for (size_t i = 0, o = 0; i < n; i++) {
			memcpy(fams + o, f[i].p, f[i].n + 1);
			famrow[i] = (csv_field){ fams + o, f[i].n };
			o += f[i].n + 1;
		}
		im->nfields = n;
	}
	if ((rc = csv_read(r, &f, &n, &line, &err)) <= 0)
		goto read_failed;
	if (famrow && n != im->nfields) {
		rc = cc_error("line %llu: wrong number of fields: %zu, want %zu", (unsigned long long)line, n, im->nfields);
		goto out;
	}
	im->nfields = n;
	if ((famrow && famrow[0].n) || f[0].n) {
		rc = cc_error("line %llu: the first column must be empty in the column family and qualifier rows",
			      (unsigned long long)(famrow && famrow[0].n ? famline : line));
		goto out;
	}
	if (n < 2 || (famrow && !famrow[1].n) || !f[1].n) {
		rc = cc_error("line %llu: the second column (the first data column) must have a column family and a "
			      "qualifier", (unsigned long long)(famrow && (n < 2 || !famrow[1].n) ? famline : line));
		goto out;
	}
	im->ncols = n - 1;
	im->cols = calloc(im->ncols, sizeof *im->cols);
	size_t total = 0;
	for (size_t i = 1; i < n; i++)
		total += f[i].n + 1;
	im->qbuf = malloc(total + 1);
	if (!im->cols || !im->qbuf) {
		rc = cc_error("%s", strerror(ENOMEM));
		goto out;
	}
	const char *fam = im->colfam;
	for (size_t i = 1; i < n; i++) {
		struct column *c = &im->cols[i - 1];
		if (famrow && famrow[i].n) {
			fam = imp_family_name(im, famrow[i].p, famrow[i].n);
			if (!fam) {
				rc = cc_error("line %llu: family %s not found in table %s", (unsigned long long)famline,
					      cc_q(famrow[i].p, famrow[i].n), cc_qs(im->table));
				goto out;
			}
			if (imp_family_aggregate(im, fam)) {
				rc = cc_error("line %llu: family %s of table %s is an aggregate family (%s): import writes "
					      "plain cells (use addtocell)", (unsigned long long)famline, cc_qs(fam),
					      cc_qs(im->table), imp_family_aggregate(im, fam));
				goto out;
			}
		}
		if (f[i].n > CS_MAX_QUALIFIER) {
			rc = cc_error("line %llu, field %zu: the qualifier is longer than %d bytes", (unsigned long long)line,
				      i + 1, CS_MAX_QUALIFIER);
			goto out;
		}
		memcpy(im->qbuf + qoff, f[i].p, f[i].n + 1);
		c->family = fam;
		c->q = im->qbuf + qoff;
		c->qn = f[i].n;
		qoff += f[i].n + 1;
	}
	rc = CC_OK;
	goto out;
read_failed:
	if (rc == 0)
		rc = cc_error("the input has no %s row", !im->colfam && !famline ? "column family" : "qualifier");
	else if (rc == -EINVAL)
		rc = cc_error("%s", err ? err : "bad CSV");
	else
		rc = imp_read_failed(im, r, rc);
out:
	free(err);
	free(fams);
	free(famrow);
	return rc;
}

static int csv_pass(struct imp *im, csv_reader *r)
{
	csv_field *f;
	size_t n;
	uint64_t line;
	char *err = NULL;
	int rc;

	if ((rc = csv_header(im, r)) != CC_OK)
		return rc;
	while ((rc = csv_read(r, &f, &n, &line, &err)) > 0) {
		cs_bytes row;

		if (n != im->nfields)
			return cc_error("line %llu: wrong number of fields: %zu, want %zu", (unsigned long long)line, n,
					im->nfields);
		if (!f[0].n) /* cbt: "RowKey not present, skipping line" */
			continue;
		if ((rc = check_row(line, f[0].p, f[0].n)) != CC_OK)
			return rc;
		row = CS_BYTES(f[0].p, f[0].n);
		for (size_t i = 1; i < n; i++) {
			cs_bytes v;
			int64_t ts;
			const struct column *c = &im->cols[i - 1];

			if (!f[i].n)
				continue;
			if ((rc = value_ts(im, line, i + 1, f[i].p, f[i].n, &v, &ts)) != CC_OK ||
			    (rc = imp_cell(im, line, i + 1, row, c->family, CS_BYTES(c->q, c->qn), ts, v)) != CC_OK)
				return rc;
		}
		if ((rc = imp_line_done(im, line, r)) != CC_OK)
			return rc;
	}
	if (rc == -EINVAL) {
		rc = cc_error("%s", err ? err : "bad CSV");
		free(err);
		return rc;
	}
	if (rc < 0)
		return imp_read_failed(im, r, rc);
	return CC_OK;
}

/* ---- JSON lines --------------------------------------------------------------------------------- */

bool imp_blank(const char *l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (l[i] != ' ' && l[i] != '\t' && l[i] != '\r' && l[i] != '\n')
			return false;
	return true;
}

static int jsonl_pass(struct imp *im, csv_reader *r)
{
	ji_parser *jp;
	const char *l;
	size_t n;
	uint64_t line;
	int rc, status = CC_OK;

	if (ji_new(&jp) < 0)
		return cc_error("%s", strerror(ENOMEM));
	while (status == CC_OK && (rc = csv_read_line(r, &l, &n, &line)) > 0) {
		ji_cell *c;
		size_t nc;
		char *err = NULL;

		if (imp_blank(l, n)) /* blank lines are skipped */
			continue;
		if ((rc = ji_parse_line(jp, l, n, &c, &nc, &err)) < 0) {
			status = rc == -EINVAL ? cc_error("line %llu: %s", (unsigned long long)line, err ? err : "bad JSON")
					       : cc_error("%s", strerror(-rc));
			free(err);
			break;
		}
		for (size_t i = 0; status == CC_OK && i < nc; i++) {
			const char *fam = imp_family_name(im, c[i].family.p, c[i].family.n);

			if (!c[i].row.n)
				status = cc_error("line %llu: the row key is empty", (unsigned long long)line);
			else if ((status = check_row(line, c[i].row.p, c[i].row.n)) != CC_OK)
				break;
			else if (!fam)
				status = cc_error("line %llu: family %s not found in table %s", (unsigned long long)line,
						  cc_q(c[i].family.p, c[i].family.n), cc_qs(im->table));
			else if (imp_family_aggregate(im, fam))
				status = cc_error("line %llu: family %s of table %s is an aggregate family (%s): import "
						  "writes plain cells (use addtocell)", (unsigned long long)line, cc_qs(fam),
						  cc_qs(im->table), imp_family_aggregate(im, fam));
			else if (c[i].qualifier.n > CS_MAX_QUALIFIER)
				status = cc_error("line %llu: the qualifier is longer than %d bytes", (unsigned long long)line,
						  CS_MAX_QUALIFIER);
			else
				status = imp_cell(im, line, 0, CS_BYTES(c[i].row.p, c[i].row.n), fam,
						  CS_BYTES(c[i].qualifier.p, c[i].qualifier.n), c[i].ts,
						  CS_BYTES(c[i].value.p, c[i].value.n));
		}
		if (status == CC_OK)
			status = imp_line_done(im, line, r);
	}
	ji_free(jp);
	if (status == CC_OK && rc < 0)
		status = imp_read_failed(im, r, rc);
	return status;
}

/* ---- The command -------------------------------------------------------------------------------- */

int imp_read_failed(const struct imp *im, const csv_reader *r, int rc)
{
	if (rc == -EBADMSG && im->gz && gzin_error(im->gz))
		return cc_error("line %llu of %s: %s", (unsigned long long)csv_lineno(r) + 1, im->name,
				gzin_error(im->gz));
	return cc_error("reading the input: %s", strerror(-rc));
}

/* A reader of the input from its start: FD itself, or through a decompressor (im->gz) if gzip'd. */
static int open_reader(struct imp *im, csv_reader **r)
{
	if (lseek(im->fd, im->start, SEEK_SET) < 0)
		return cc_error("reading the input: %s", strerror(errno));
	if (im->gzip && gzin_new(im->fd, &im->gz) < 0)
		return cc_error("%s", strerror(ENOMEM));
	if ((im->gz ? csv_open_fn(gzin_read_fn, im->gz, r) : csv_open(im->fd, -1, r)) < 0) {
		gzin_free(im->gz);
		im->gz = NULL;
		return cc_error("%s", strerror(ENOMEM));
	}
	return CC_OK;
}

static void close_reader(struct imp *im, csv_reader *r)
{
	csv_free(r);
	gzin_free(im->gz);
	im->gz = NULL;
}

static int run_pass(struct imp *im)
{
	csv_reader *r;
	int rc;

	if ((rc = open_reader(im, &r)) != CC_OK)
		return rc;
	im->cells = 0;
	free(im->cols);
	free(im->qbuf);
	im->cols = NULL;
	im->qbuf = NULL;
	switch (im->format) {
	case IMP_DYNAMODB:
		rc = imp_ddb_pass(im, r);
		break;
	case IMP_JSONL:
		rc = jsonl_pass(im, r);
		break;
	default:
		rc = csv_pass(im, r);
		break;
	}
	close_reader(im, r);
	return rc;
}

/* Copy IN (standard input, a pipe, a terminal) to an unlinked temporary file; return its descriptor or
 * -1 (error printed). */
static int spool(int in, const char *name)
{
	const char *dir = getenv("TMPDIR");
	char *path;
	char buf[1 << 16];
	ssize_t n;
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	if (asprintf(&path, "%s/cellctl-import.XXXXXX", dir) < 0) {
		cc_error("%s", strerror(ENOMEM));
		return -1;
	}
	fd = mkstemp(path);
	if (fd < 0) {
		cc_error("cannot create a temporary file in %s to hold %s: %s", cc_qs(dir), name, strerror(errno));
		free(path);
		return -1;
	}
	unlink(path);
	free(path);
	while ((n = read(in, buf, sizeof buf)) != 0) {
		ssize_t w;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			cc_error("reading %s: %s", name, strerror(errno));
			close(fd);
			return -1;
		}
		for (char *p = buf; n > 0; p += w, n -= w) {
			w = write(fd, p, (size_t)n);
			if (w < 0 && errno == EINTR) {
				w = 0;
				continue;
			}
			if (w < 0) {
				cc_error("copying %s to a temporary file: %s", name, strerror(errno));
				close(fd);
				return -1;
			}
		}
	}
	return fd;
}

/* Open the input so that it can be read twice: a regular file in place (standard input too, from its
 * current offset), anything else (a pipe, <(...)) copied to a temporary file first. */
static int open_input(struct imp *im, const char *path)
{
	bool is_stdin = !strcmp(path, "-");
	const char *name = is_stdin ? "standard input" : cc_qs(path);
	struct stat sb;
	off_t pos = 0;
	int fd;

	if (!(im->name = strdup(name)))
		return cc_error("%s", strerror(ENOMEM));
	fd = is_stdin ? dup(0) : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cc_error("cannot open %s: %s", name, strerror(errno));
	if (fstat(fd, &sb) < 0) {
		close(fd);
		return cc_error("cannot read %s: %s", name, strerror(errno));
	}
	if (S_ISDIR(sb.st_mode)) {
		close(fd);
		return cc_error("cannot read %s: %s", name, strerror(EISDIR));
	}
	if (S_ISREG(sb.st_mode) && (pos = lseek(fd, 0, SEEK_CUR)) >= 0) {
		im->fd = fd;
		im->start = pos;
		im->size = sb.st_size - pos;
		return CC_OK;
	}
	im->fd = spool(fd, name);
	close(fd);
	if (im->fd < 0)
		return CC_FAIL;
	im->start = 0;
	im->size = lseek(im->fd, 0, SEEK_END);
	return CC_OK;
}

/* Whether the input is gzip'd: its first bytes say so, whatever its name. */
static bool looks_like_gzip(const struct imp *im)
{
	unsigned char magic[2];

	return pread(im->fd, magic, sizeof magic, im->start) == 2 && gzin_magic(magic, 2);
}

/* JSON lines start with '{'; a cbt CSV starts with its header's empty first field. */
static bool looks_like_jsonl(struct imp *im)
{
	char buf[4096];
	ssize_t n;

	if (im->gzip) { /* its first bytes once decompressed (a damaged stream is reported by the pass) */
		if (lseek(im->fd, im->start, SEEK_SET) < 0 || gzin_new(im->fd, &im->gz) < 0)
			return false;
		n = gzin_read(im->gz, buf, sizeof buf);
		gzin_free(im->gz);
		im->gz = NULL;
	} else {
		n = pread(im->fd, buf, sizeof buf, im->start);
	}
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\r' && buf[i] != '\n')
			return buf[i] == '{';
	return false;
}

/* Take --quiet and --batches out of ARGV (anywhere); return the new ARGC. */
static int take_flags(int argc, char **argv, bool *quiet, bool *report)
{
	int o = 0;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q"))
			*quiet = true;
		else if (!strcmp(argv[i], "--batches"))
			*report = true;
		else
			argv[o++] = argv[i];
	}
	return o;
}

/* cbt's import arguments, read as cbt reads them: an argument starting with "KEY=" sets KEY to what
 * follows, up to a further '=' (Go's strings.Split(arg, "=")[1]), the last one winning; anything else
 * is ignored (with a warning here, where cbt says nothing). Values are cut in place in ARGV. */
static int parse_args(struct imp *im, int argc, char **argv)
{
	static const char *const keys[] = { "app-profile", "column-family", "batch-size", "workers", "timestamp",
					    "format", "key" };
	enum { A_APP, A_COLFAM, A_BATCH, A_WORKERS, A_TS, A_FORMAT, A_KEY, A_N };
	const char *vals[A_N] = { 0 };
	int64_t n;

	for (int i = 0; i < argc; i++) {
		int k = 0;

		for (; k < A_N; k++) {
			size_t len = strlen(keys[k]);

			if (!strncmp(argv[i], keys[k], len) && argv[i][len] == '=') {
				char *v = argv[i] + len + 1;

				if (k != A_KEY) /* key= (not cbt's) is the rest of the argument: names may hold '=' */
					v[strcspn(v, "=")] = '\0';
				vals[k] = v;
				break;
			}
		}
		if (k == A_N)
			fprintf(stderr, "cellctl import: warning: ignoring unknown argument %s (as cbt does)\n",
				cc_qs(argv[i]));
	}
	/* cbt says "<= 100000" and refuses 100000 */
	if (vals[A_BATCH] && (go_parse_int(vals[A_BATCH], 10, &n) < 0 || n <= 0 || n >= 100000))
		return cc_error("batch-size must be > 0 and < 100000 (batch-size=%s)", cc_qs(vals[A_BATCH]));
	if (vals[A_BATCH])
		im->max_lines = (uint64_t)n;
	if (vals[A_WORKERS] && (go_parse_int(vals[A_WORKERS], 10, &n) < 0 || n <= 0))
		return cc_error("workers must be > 0 (workers=%s)", cc_qs(vals[A_WORKERS]));
	if (vals[A_COLFAM] && !*vals[A_COLFAM])
		return cc_error("column-family cannot be ''");
	if (vals[A_FORMAT] && strcmp(vals[A_FORMAT], "csv") && strcmp(vals[A_FORMAT], "jsonl") &&
	    strcmp(vals[A_FORMAT], "dynamodb"))
		return cc_error("format must be csv, jsonl or dynamodb (format=%s)", cc_qs(vals[A_FORMAT]));
	if (vals[A_FORMAT] && !strcmp(vals[A_FORMAT], "dynamodb")) {
		im->format = IMP_DYNAMODB;
		return imp_ddb_args(im, vals[A_KEY], vals[A_COLFAM], vals[A_TS]) == CC_OK ? 2 : CC_FAIL;
	}
	if (vals[A_KEY])
		return cc_error("key= applies to format=dynamodb only");
	if (vals[A_TS] && strcmp(vals[A_TS], "now") && strcmp(vals[A_TS], "value-encoded"))
		return cc_error("timestamp must be one of 'now' or 'value-encoded' (timestamp=%s)", cc_qs(vals[A_TS]));
	im->value_ts = vals[A_TS] && !strcmp(vals[A_TS], "value-encoded");
	im->colfam = vals[A_COLFAM];
	if (vals[A_FORMAT] && !strcmp(vals[A_FORMAT], "jsonl"))
		im->format = IMP_JSONL;
	if (im->format == IMP_JSONL && (vals[A_COLFAM] || vals[A_TS]))
		return cc_error("%s applies to CSV input only", vals[A_COLFAM] ? "column-family=" : "timestamp=");
	return vals[A_FORMAT] ? 2 : CC_OK; /* 2: the format was given */
}

int cmd_import(struct cellctl *cc, int argc, char **argv)
{
	struct imp im = { .cc = cc, .fd = -1 };
	bool quiet = false;
	cs_txn *txn = NULL;
	int rc, given;

	argc = take_flags(argc, argv, &quiet, &im.report);
	if (argc < 2)
		return cc_usage(cc);
	im.table = argv[0];
	if ((given = parse_args(&im, argc - 2, argv + 2)) == CC_FAIL)
		return CC_FAIL;
	if ((rc = cellctl_open(cc)) != CC_OK)
		return rc;
	if ((rc = open_input(&im, argv[1])) != CC_OK)
		goto out;
	im.gzip = looks_like_gzip(&im);
	if (given != 2 && looks_like_jsonl(&im)) {
		if (im.colfam || im.value_ts) {
			rc = cc_error("the input is JSON lines: column-family= and timestamp= apply to CSV only");
			goto out;
		}
		im.format = IMP_JSONL;
	}
	/* First pass: check everything in a read-only snapshot. */
	if ((rc = cs_txn_begin(cc->st, CS_TXN_RDONLY, &txn)) < 0) {
		rc = cc_error("cannot begin a transaction: %s", cc_strerror(rc));
		goto out;
	}
	rc = cs_table_info_get(txn, im.table, &im.info);
	cs_txn_abort(txn);
	if (rc < 0) {
		rc = cc_store_error(NULL, rc, "importing", im.table, NULL);
		goto out;
	}
	im.max_value = cs_store_max_value(cc->st);
	im.now = cs_now_us();
	im.now -= im.now % 1000; /* bigtable.Now() is whole milliseconds */
	if (im.format == IMP_DYNAMODB && (rc = imp_ddb_setup(&im)) != CC_OK)
		goto out;
	if (im.colfam && !family_known(&im, im.colfam, strlen(im.colfam))) {
		rc = cc_error("family %s not found in table %s", cc_qs(im.colfam), cc_qs(im.table));
		goto out;
	}
	if (im.colfam && imp_family_aggregate(&im, im.colfam)) {
		rc = cc_error("family %s of table %s is an aggregate family (%s): import writes plain cells (use "
			      "addtocell)", cc_qs(im.colfam), cc_qs(im.table), imp_family_aggregate(&im, im.colfam));
		goto out;
	}
	progress_init(&im.prog, "checking", quiet, (uint64_t)im.size, 0);
	rc = run_pass(&im);
	progress_done(&im.prog, im.cells, false);
	if (rc != CC_OK)
		goto out;
	/* Second pass: write in batches. */
	im.total = im.cells;
	im.writing = true;
	progress_init(&im.prog, "import", quiet, (uint64_t)im.size, im.total);
	if ((rc = batch_begin(&im)) != CC_OK)
		goto out;
	rc = run_pass(&im);
	if (rc == CC_OK)
		rc = batch_commit(&im, 0);
	else
		batch_abort(&im);
	progress_done(&im.prog, im.cells, rc == CC_OK);
out:
	if (im.fd >= 0)
		close(im.fd);
	free(im.cols);
	free(im.qbuf);
	for (size_t i = 0; i < im.nnew; i++)
		free(im.newfams[i]);
	free(im.newfams);
	free((char *)im.name);
	cs_table_info_free(im.info);
	return rc;
}
