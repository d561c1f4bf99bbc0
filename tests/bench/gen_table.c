/* gen_table.c — write the mount benchmark's table into a store: `gen_table STORE [-n CELLS]`.
 *
 * Modelled on the seeds' QUOTE table: rows EXCHANGE#SYMBOL#TIME (13-digit zero-padded milliseconds),
 * family MD, columns ASK ASKSIZE BID BIDSIZE and often EXCHANGE or QUOTETIME (about 5 a row), values of
 * 4-16 bytes, the cell timestamp the quote time. Every tenth row's BID also keeps one older version (a
 * corrected quote), so listings have `BID@TS` entries too. 4 exchanges x 40 symbols, times per symbol as
 * many as the cell count needs: 20,000 cells make about 4,000 rows, 8,200 directories. Deterministic. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cellstore.h"

#define TABLE "quotes"
#define FAMILY "MD"
#define NEXCH 4
#define NSYM 40
#define ROWS_PER_TXN 1000

static void die(const char *what, int rc)
{
	fprintf(stderr, "gen_table: %s: %s\n", what, strerror(rc < 0 ? -rc : rc));
	exit(1);
}

/* xorshift64*: every run writes the same cells. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1Dull;
}

struct col {
	const char *qual;
	char val[24];
	int64_t ts;
};

static void add(struct col *c, size_t *n, const char *qual, int64_t ts, const char *val)
{
	c[*n].qual = qual;
	c[*n].ts = ts;
	snprintf(c[*n].val, sizeof(c[*n].val), "%s", val);
	(*n)++;
}

int main(int argc, char **argv)
{
	static const char *const exch[NEXCH] = { "ARCA", "BATS", "NASDAQ", "NYSE" };
	cs_open_opts oo = { .flags = CS_OPEN_CREATE };
	uint64_t ncells = 20000, cells = 0, rows = 0, seed = 0x9E3779B97F4A7C15ull;
	uint64_t per_sym;
	cs_store *st;
	cs_txn *txn = NULL;
	int rc, opt;

	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt != 'n' || !(ncells = strtoull(optarg, NULL, 10))) {
			fprintf(stderr, "usage: gen_table STORE [-n CELLS]\n");
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: gen_table STORE [-n CELLS]\n");
		return 2;
	}
	per_sym = ncells * 10 / (51 * NEXCH * NSYM) + 1; /* 5.1 cells a row */
	if ((rc = cs_store_open(argv[optind], &oo, &st)))
		die(argv[optind], rc);
	if ((rc = cs_txn_begin(st, 0, &txn)) || (rc = cs_table_create(txn, TABLE, '#')) ||
	    (rc = cs_family_create(txn, TABLE, FAMILY, "never")) || (rc = cs_txn_commit(txn)))
		die("creating table " TABLE, rc);
	txn = NULL;
	for (size_t s = 0; s < NEXCH * NSYM && cells < ncells; s++) {
		const char *ex = exch[s / NSYM];
		size_t perm = (s % NSYM) * 11881; /* increasing, spread over AAAA..ZZZZ */
		uint64_t t = 1426535612156ull + rnd(&seed) % 1000000;
		char sym[5];

		for (int i = 3; i >= 0; i--, perm /= 26)
			sym[i] = (char)('A' + perm % 26);
		sym[4] = 0;
		for (uint64_t q = 0; q < per_sym && cells < ncells; q++, rows++) {
			struct col c[8];
			cs_mutation m[8];
			size_t n = 0;
			char key[48], v[24];
			double bid = 10.0 + (double)(rnd(&seed) % 500000) / 100.0;
			int64_t ts;
			int keyn;

			t += 1 + rnd(&seed) % 250;
			ts = (int64_t)t * 1000;
			keyn = snprintf(key, sizeof(key), "%s#%s#%013" PRIu64, ex, sym, t);
			snprintf(v, sizeof(v), "%.4f", bid + (double)(rnd(&seed) % 50) / 100.0);
			add(c, &n, "ASK", ts, v);
			snprintf(v, sizeof(v), "%04u", (unsigned)(rnd(&seed) % 5000));
			add(c, &n, "ASKSIZE", ts, v);
			snprintf(v, sizeof(v), "%.4f", bid);
			add(c, &n, "BID", ts, v);
			if (rows % 10 == 0) { /* a corrected quote: the first BID kept as an older version */
				snprintf(v, sizeof(v), "%.4f", bid - 0.01);
				add(c, &n, "BID", ts - 1000, v);
			}
			snprintf(v, sizeof(v), "%04u", (unsigned)(rnd(&seed) % 5000));
			add(c, &n, "BIDSIZE", ts, v);
			if (rnd(&seed) % 2)
				add(c, &n, "EXCHANGE", ts, ex);
			else {
				snprintf(v, sizeof(v), "%013" PRIu64, t);
				add(c, &n, "QUOTETIME", ts, v);
			}
			if (n > ncells - cells)
				n = (size_t)(ncells - cells);
			for (size_t i = 0; i < n; i++)
				m[i] = (cs_mutation){ .op = CS_SET_CELL, .family = FAMILY, .qualifier = CS_STR(c[i].qual),
						      .ts = c[i].ts, .value = CS_STR(c[i].val) };
			if (!txn && (rc = cs_txn_begin(st, 0, &txn)))
				die("cs_txn_begin", rc);
			if ((rc = cs_row_mutate(txn, TABLE, CS_BYTES(key, (size_t)keyn), m, n)))
				die(key, rc);
			cells += n;
			if (rows % ROWS_PER_TXN == ROWS_PER_TXN - 1) {
				if ((rc = cs_txn_commit(txn)))
					die("cs_txn_commit", rc);
				txn = NULL;
			}
		}
	}
	if (txn && (rc = cs_txn_commit(txn)))
		die("cs_txn_commit", rc);
	cs_store_close(st);
	printf("gen_table: table %s: %" PRIu64 " rows, %" PRIu64 " cells\n", TABLE, rows, cells);
	return 0;
}
