/* bench_store.c — bulk load and full scan of N cells (default 1M) through the store API, against a raw
 * LMDB loop on the same data with the same environment flags and batch size. Prints cells/s for each and
 * the store/raw ratios. A benchmark, not a test: it asserts nothing about speed and exits 0.
 *
 * The data is modelled on the seeds' QUOTE table: rows EXCHANGE#SYMBOL#TIME (zero-padded milliseconds),
 * family MD, 4-6 columns per row (ASK ASKSIZE BID BIDSIZE, often EXCHANGE, QUOTETIME), values of 4-16
 * bytes, explicit timestamps, rows in sorted order as a bulk loader would get them. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <lmdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cellstore.h"

#define FAMILY "MD"
#define TABLE "quotes"

struct cell {
	const char *qual;
	uint8_t qn;
	uint8_t vn;
	char val[16];
};

struct row {
	char key[32];
	uint8_t keyn;
	uint8_t ncells;
	int64_t ts;          /* µs, every cell of the row */
	struct cell cells[6]; /* sorted by qualifier */
};

struct data {
	struct row *rows;
	size_t nrows;
	uint64_t ncells;
};

struct result {
	double load_s, scan_s;
	uint64_t scanned;  /* cells seen by the scan */
	uint64_t vsum;     /* checksum of every value byte seen by the scan */
	uint64_t bytes;    /* size of data.mdb after the load */
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *cur_dir; /* the temporary directory in use, removed on the way out */
static void rm_tmpdir(char *dir);

static void die(const char *what, int rc)
{
	fprintf(stderr, "bench_store: %s: %s\n", what, strerror(rc < 0 ? -rc : rc));
	if (cur_dir)
		rm_tmpdir(cur_dir);
	exit(1);
}

/* xorshift64*: deterministic, so every run (and both sides) sees the same data. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1Dull;
}

static void set_val(struct cell *c, const char *qual, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_val(struct cell *c, const char *qual, const char *fmt, ...)
{
	va_list ap;
	char buf[64];
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 4 || n > 16) {
		fprintf(stderr, "bench_store: value '%s' is not 4-16 bytes\n", buf);
		exit(1);
	}
	c->qual = qual;
	c->qn = (uint8_t)strlen(qual);
	memcpy(c->val, buf, (size_t)n);
	c->vn = (uint8_t)n;
}

/* Rows in sorted key order until NCELLS cells: 8 exchanges of 500 four-letter symbols each, in order, and
 * per symbol quote times increasing (13 digits, so they sort numerically). */
#define NEXCH 8
#define SYMS_PER_EXCH 500

static void gen(struct data *d, uint64_t ncells)
{
	static const char *const exch[NEXCH] = { "AMEX", "ARCA", "BATS", "CBOE", "EDGX", "NASDAQ", "NYSE", "PHLX" };
	uint64_t seed = 0x9E3779B97F4A7C15ull, cells = 0;
	/* At least 4 cells a row, so the symbols never run out. */
	uint64_t per_sym = ncells / (4 * NEXCH * SYMS_PER_EXCH) + 1;
	size_t cap = (size_t)(ncells / 4 + 2), nsym = 0;

	d->rows = calloc(cap, sizeof(*d->rows));
	if (!d->rows)
		die("generating data", ENOMEM);
	d->nrows = 0;
	while (cells < ncells) {
		const char *ex = exch[nsym / SYMS_PER_EXCH];
		size_t perm = (nsym % SYMS_PER_EXCH) * 913; /* increasing, spread over AAAA..ZZZZ */
		uint64_t t = 1426535612156ull + rnd(&seed) % 1000000;
		char sym[5];

		for (int i = 3; i >= 0; i--, perm /= 26)
			sym[i] = (char)('A' + perm % 26);
		sym[4] = 0;
		for (uint64_t q = 0; q < per_sym && cells < ncells; q++) {
			struct row *r = &d->rows[d->nrows++];
			double bid = 10.0 + (double)(rnd(&seed) % 500000) / 100.0;
			size_t n = 0;

			t += 1 + rnd(&seed) % 250;
			r->keyn = (uint8_t)snprintf(r->key, sizeof(r->key), "%s#%s#%013" PRIu64, ex, sym, t);
			r->ts = (int64_t)t * 1000;
			/* Qualifiers in sorted order: ASK ASKSIZE BID BIDSIZE EXCHANGE QUOTETIME. */
			set_val(&r->cells[n++], "ASK", "%.4f", bid + (double)(rnd(&seed) % 50) / 100.0);
			set_val(&r->cells[n++], "ASKSIZE", "%04u", (unsigned)(rnd(&seed) % 5000));
			set_val(&r->cells[n++], "BID", "%.4f", bid);
			set_val(&r->cells[n++], "BIDSIZE", "%04u", (unsigned)(rnd(&seed) % 5000));
			if (rnd(&seed) % 2)
				set_val(&r->cells[n++], "EXCHANGE", "%s", ex);
			if (rnd(&seed) % 4)
				set_val(&r->cells[n++], "QUOTETIME", "%013" PRIu64, t);
			if (n > ncells - cells)
				n = (size_t)(ncells - cells);
			r->ncells = (uint8_t)n;
			cells += n;
			if (d->nrows == cap) {
				struct row *nr = realloc(d->rows, 2 * cap * sizeof(*d->rows));
				if (!nr)
					die("generating data", ENOMEM);
				d->rows = nr;
				cap *= 2;
			}
		}
		nsym++;
	}
	d->ncells = cells;
	/* The generator must produce what a bulk loader gets: strictly increasing row keys. */
	for (size_t i = 1; i < d->nrows; i++) {
		const struct row *a = &d->rows[i - 1], *b = &d->rows[i];
		int c = memcmp(a->key, b->key, a->keyn < b->keyn ? a->keyn : b->keyn);
		if (c > 0 || (c == 0 && a->keyn >= b->keyn)) {
			fprintf(stderr, "bench_store: generated rows out of order at %zu\n", i);
			exit(1);
		}
	}
}

static char *mk_tmpdir(const char *base)
{
	char *p;
	if (asprintf(&p, "%s/bench_store.XXXXXX", base) < 0)
		die("asprintf", ENOMEM);
	if (!mkdtemp(p))
		die(base, errno);
	cur_dir = p;
	return p;
}

static uint64_t file_size(const char *dir)
{
	char path[4096];
	struct stat sb;
	snprintf(path, sizeof(path), "%s/data.mdb", dir);
	return stat(path, &sb) ? 0 : (uint64_t)sb.st_size;
}

static void rm_tmpdir(char *dir)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/data.mdb", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/lock.mdb", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/anchor", dir); /* the store's (store/lmdb/anchor.h) */
	unlink(path);
	snprintf(path, sizeof(path), "%s/heat.spool", dir); /* the Key Visualizer's (store/keyviz/heatspool.h) */
	unlink(path);
	rmdir(dir);
	free(dir);
	cur_dir = NULL;
}

/* ---- through the store API ---- */

static void run_store(const struct data *d, size_t batch, const char *base, struct result *res)
{
	cs_open_opts oo = { .flags = CS_OPEN_CREATE };
	char *dir = mk_tmpdir(base);
	cs_store *st;
	cs_txn *txn;
	cs_scan *sc = NULL;
	const cs_row *row;
	double t0;
	int rc;

	if ((rc = cs_store_open(dir, &oo, &st)))
		die("cs_store_open", rc);
	if ((rc = cs_txn_begin(st, 0, &txn)) || (rc = cs_table_create(txn, TABLE, '#')) ||
	    (rc = cs_family_create(txn, TABLE, FAMILY, "never")) || (rc = cs_txn_commit(txn)))
		die("creating the table", rc);

	t0 = now_s();
	for (size_t i = 0; i < d->nrows; i += batch) {
		size_t end = i + batch < d->nrows ? i + batch : d->nrows;
		if ((rc = cs_txn_begin(st, 0, &txn)))
			die("cs_txn_begin", rc);
		for (size_t j = i; j < end; j++) {
			const struct row *r = &d->rows[j];
			cs_mutation m[6];
			for (size_t c = 0; c < r->ncells; c++)
				m[c] = (cs_mutation){ .op = CS_SET_CELL, .family = FAMILY,
						      .qualifier = CS_BYTES(r->cells[c].qual, r->cells[c].qn),
						      .ts = r->ts, .value = CS_BYTES(r->cells[c].val, r->cells[c].vn) };
			if ((rc = cs_row_mutate(txn, TABLE, CS_BYTES(r->key, r->keyn), m, r->ncells)))
				die("cs_row_mutate", rc);
		}
		if ((rc = cs_txn_commit(txn)))
			die("cs_txn_commit", rc);
	}
	res->load_s = now_s() - t0;
	res->bytes = file_size(dir);

	res->scanned = res->vsum = 0;
	t0 = now_s();
	if ((rc = cs_txn_begin(st, CS_TXN_RDONLY, &txn)) || (rc = cs_scan_open(txn, TABLE, NULL, &sc)))
		die("opening the scan", rc);
	while ((rc = cs_scan_next(sc, &row)) == 1) {
		for (size_t c = 0; c < row->ncells; c++) {
			const uint8_t *v = row->cells[c].value.data;
			for (size_t b = 0; b < row->cells[c].value.len; b++)
				res->vsum += v[b];
		}
		res->scanned += row->ncells;
	}
	if (rc < 0)
		die("cs_scan_next", rc);
	cs_scan_close(sc);
	cs_txn_abort(txn);
	res->scan_s = now_s() - t0;

	cs_store_close(st);
	rm_tmpdir(dir);
}

/* ---- a raw LMDB loop: key row \0 family \0 qualifier \0 ~ts (8 bytes, big-endian) -> value ---- */

static void lmdb_check(const char *what, int rc)
{
	if (rc) {
		fprintf(stderr, "bench_store: %s: %s\n", what, mdb_strerror(rc));
		if (cur_dir)
			rm_tmpdir(cur_dir);
		exit(1);
	}
}

static size_t raw_key(uint8_t *k, const struct row *r, const struct cell *c)
{
	uint64_t rts = (uint64_t)(INT64_MAX - r->ts);
	size_t n = 0;
	memcpy(k + n, r->key, r->keyn);
	n += r->keyn;
	k[n++] = 0;
	memcpy(k + n, FAMILY, sizeof(FAMILY));
	n += sizeof(FAMILY); /* with its NUL */
	memcpy(k + n, c->qual, c->qn);
	n += c->qn;
	k[n++] = 0;
	for (int i = 0; i < 8; i++)
		k[n++] = (uint8_t)(rts >> (56 - 8 * i));
	return n;
}

static void run_raw(const struct data *d, size_t batch, const char *base, struct result *res)
{
	static const int shifts[] = { 40, 36, 32, 30 }; /* the store's map sizes: 1 TiB, less under valgrind */
	char *dir = mk_tmpdir(base);
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_cursor *cur;
	MDB_val k, v;
	uint8_t kb[128];
	double t0;
	int rc;

	for (size_t i = 0; i < sizeof(shifts) / sizeof(shifts[0]); i++) {
		lmdb_check("mdb_env_create", mdb_env_create(&env));
		lmdb_check("mdb_env_set_mapsize", mdb_env_set_mapsize(env, (size_t)1 << shifts[i]));
		rc = mdb_env_open(env, dir, MDB_NOTLS | MDB_NOSYNC, 0600);
		if (!rc || (rc != ENOMEM && rc != EINVAL))
			break;
		mdb_env_close(env);
	}
	lmdb_check("mdb_env_open", rc);
	lmdb_check("mdb_txn_begin", mdb_txn_begin(env, NULL, 0, &txn));
	lmdb_check("mdb_dbi_open", mdb_dbi_open(txn, NULL, 0, &dbi));
	lmdb_check("mdb_txn_commit", mdb_txn_commit(txn));

	t0 = now_s();
	for (size_t i = 0; i < d->nrows; i += batch) {
		size_t end = i + batch < d->nrows ? i + batch : d->nrows;
		lmdb_check("mdb_txn_begin", mdb_txn_begin(env, NULL, 0, &txn));
		for (size_t j = i; j < end; j++) {
			const struct row *r = &d->rows[j];
			for (size_t c = 0; c < r->ncells; c++) {
				k.mv_size = raw_key(kb, r, &r->cells[c]);
				k.mv_data = kb;
				v.mv_size = r->cells[c].vn;
				v.mv_data = (void *)r->cells[c].val;
				lmdb_check("mdb_put", mdb_put(txn, dbi, &k, &v, 0));
			}
		}
		lmdb_check("mdb_txn_commit", mdb_txn_commit(txn));
	}
	res->load_s = now_s() - t0;
	res->bytes = file_size(dir);

	res->scanned = res->vsum = 0;
	t0 = now_s();
	lmdb_check("mdb_txn_begin", mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	lmdb_check("mdb_cursor_open", mdb_cursor_open(txn, dbi, &cur));
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); !rc; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		const uint8_t *kp = k.mv_data, *vp = v.mv_data;
		uint64_t ksum = 0;
		for (size_t b = 0; b < k.mv_size; b++) /* read the key too: the store parses every key */
			ksum += kp[b];
		for (size_t b = 0; b < v.mv_size; b++)
			res->vsum += vp[b];
		res->scanned += 1 + (ksum == UINT64_MAX); /* keep ksum alive */
	}
	if (rc != MDB_NOTFOUND)
		lmdb_check("mdb_cursor_get", rc);
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	res->scan_s = now_s() - t0;

	mdb_env_close(env);
	rm_tmpdir(dir);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bench_store [-n CELLS] [-r REPEATS] [-b ROWS_PER_TXN] [-d TMPDIR]\n"
		   "  -n CELLS         cells to load and scan (default 1000000)\n"
		   "  -r REPEATS       runs of each side; the best is reported (default 3)\n"
		   "  -b ROWS_PER_TXN  rows per write transaction (default 10000)\n"
		   "  -d TMPDIR        where the temporary stores go (default $TMPDIR or /tmp)\n");
}

static unsigned long long parse_num(const char *opt, const char *s)
{
	char *end;
	unsigned long long v;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v == 0) {
		fprintf(stderr, "bench_store: %s: '%s' is not a positive number\n", opt, s);
		exit(2);
	}
	return v;
}

static double rate(uint64_t n, double s)
{
	return s > 0 ? (double)n / s : 0;
}

int main(int argc, char **argv)
{
	uint64_t ncells = 1000000;
	unsigned repeats = 3;
	size_t batch = 10000;
	const char *base = getenv("TMPDIR");
	struct result best_store = { 0 }, best_raw = { 0 };
	struct data d;
	int opt;

	if (!base || !*base)
		base = "/tmp";
	while ((opt = getopt(argc, argv, "n:r:b:d:h")) != -1) {
		switch (opt) {
		case 'n':
			ncells = parse_num("-n", optarg);
			break;
		case 'r':
			repeats = (unsigned)parse_num("-r", optarg);
			break;
		case 'b':
			batch = (size_t)parse_num("-b", optarg);
			break;
		case 'd':
			base = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "bench_store: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}

	gen(&d, ncells);
	printf("store-load-scan: %" PRIu64 " cells in %zu rows (table %s, family %s, %.2f cells/row), "
	       "%zu rows per transaction, best of %u\n",
	       d.ncells, d.nrows, TABLE, FAMILY, (double)d.ncells / (double)d.nrows, batch, repeats);
	fflush(stdout);

	/* Alternate the two sides so drift (page cache, clock) hits both alike. */
	for (unsigned r = 0; r < repeats; r++) {
		struct result s, w;
		run_store(&d, batch, base, &s);
		run_raw(&d, batch, base, &w);
		if (s.scanned != d.ncells || w.scanned != d.ncells || s.vsum != w.vsum) {
			fprintf(stderr, "bench_store: scans disagree: store %" PRIu64 " cells (sum %" PRIu64
				"), raw %" PRIu64 " cells (sum %" PRIu64 "), loaded %" PRIu64 "\n",
				s.scanned, s.vsum, w.scanned, w.vsum, d.ncells);
			return 1;
		}
		printf("  run %u: store load %.1f ms, scan %.1f ms | raw load %.1f ms, scan %.1f ms\n", r + 1,
		       s.load_s * 1e3, s.scan_s * 1e3, w.load_s * 1e3, w.scan_s * 1e3);
		fflush(stdout);
		if (r == 0 || s.load_s < best_store.load_s)
			best_store.load_s = s.load_s;
		if (r == 0 || s.scan_s < best_store.scan_s)
			best_store.scan_s = s.scan_s;
		if (r == 0 || w.load_s < best_raw.load_s)
			best_raw.load_s = w.load_s;
		if (r == 0 || w.scan_s < best_raw.scan_s)
			best_raw.scan_s = w.scan_s;
		best_store.bytes = s.bytes;
		best_raw.bytes = w.bytes;
	}

	double sl = rate(d.ncells, best_store.load_s), ss = rate(d.ncells, best_store.scan_s);
	double rl = rate(d.ncells, best_raw.load_s), rs = rate(d.ncells, best_raw.scan_s);
	printf("\n%-22s %16s %16s %12s\n", "", "load cells/s", "scan cells/s", "data.mdb");
	printf("%-22s %16.0f %16.0f %9.1f MiB\n", "store API", sl, ss, (double)best_store.bytes / 1048576.0);
	printf("%-22s %16.0f %16.0f %9.1f MiB\n", "raw LMDB", rl, rs, (double)best_raw.bytes / 1048576.0);
	printf("%-22s %16.3f %16.3f\n", "ratio store/raw", sl / rl, ss / rs);
	printf("%-22s %16s %16s\n", "target", ">= 0.30", ">= 0.50");
	free(d.rows);
	return 0;
}
