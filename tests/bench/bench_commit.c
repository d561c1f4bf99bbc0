/* bench_commit.c — small commits, as a shell loop through the mount makes them: N cells (default 20,000,
 * 2,000 rows of 10 columns) each written by two one-cell transactions, the way `echo v > f` commits a
 * new version on bash's first flush and rewrites that version on the close. Through the store API, with
 * the store's sync points made by a thread as the daemon's watch thread makes them (CS_OPEN_BG_SYNC:
 * woken by the commit that makes one due), by a thread looking every 10 ms instead (as it did before),
 * and by the store itself, and the first again in a table whose Key Visualizer recording is off
 * (cs_table_set_keyviz(): what the recording costs a commit); against a raw LMDB loop putting the same keys one per transaction with no
 * sync and no reader (what LMDB alone costs such a commit). Prints µs per commit, the ratios store/raw
 * and the size of data.mdb at the end (the pinned windows' high-water mark). A benchmark, not a test:
 * it asserts nothing about speed and exits 0. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <lmdb.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cellstore.h"

#define TABLE "t"
#define FAMILY "cf"
#define COLS 10
#define TICK_MS 10 /* the daemon's watch thread while the store is written (fs/watch.c) */

static char *cur_dir;

static void cleanup_dir(void)
{
	static const char *const files[] = { "data.mdb", "lock.mdb", "anchor", "heat.spool" }; /* (store/README.md) */
	char path[4096];
	if (!cur_dir)
		return;
	for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++) {
		snprintf(path, sizeof(path), "%s/%s", cur_dir, files[i]);
		unlink(path);
	}
	rmdir(cur_dir);
	free(cur_dir);
	cur_dir = NULL;
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "bench_commit: %s: %s\n", what, strerror(rc < 0 ? -rc : rc));
	cleanup_dir();
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *mk_dir(const char *base)
{
	if (asprintf(&cur_dir, "%s/bench_commit.XXXXXX", base) < 0)
		die("asprintf", ENOMEM);
	if (!mkdtemp(cur_dir))
		die(base, errno);
	return cur_dir;
}

static uint64_t data_size(const char *dir)
{
	char path[4096];
	struct stat sb;
	snprintf(path, sizeof(path), "%s/data.mdb", dir);
	return stat(path, &sb) ? 0 : (uint64_t)sb.st_size;
}

/* Cell I: row "rR", qualifier "qC", as the write benchmark's loop names them. */
static void cell_name(uint64_t i, char *row, char *qual)
{
	snprintf(row, 24, "r%" PRIu64, i / COLS);
	snprintf(qual, 8, "q%u", (unsigned)(i % COLS));
}

/* ---- through the store ---- */

enum mode { RAW, WOKEN, TICKED, OWN, WOKEN_KVOFF, NMODES };
static const char *const mode_names[NMODES] = {
	"raw LMDB", "store, woken sync points", "store, 10 ms tick", "store, own sync points",
	"store, woken, keyviz off",
};

struct ticker {
	cs_store *st;
	enum mode mode;
	atomic_bool stop;
	unsigned long syncs; /* sync points made */
};

/* The daemon's watch thread (fs/watch.c), as far as sync points go: one whenever a commit finds it due
 * (WOKEN), or, to compare, a look every TICK_MS (TICKED). */
static void *tick(void *arg)
{
	struct ticker *t = arg;
	struct timespec ts = { 0, TICK_MS * 1000000L };
	while (!atomic_load(&t->stop)) {
		if (t->mode == TICKED) {
			nanosleep(&ts, NULL);
			if (cs_store_sync_due(t->st) && !cs_store_sync(t->st))
				t->syncs++;
		} else if (cs_store_sync_wait(t->st, TICK_MS) && !cs_store_sync(t->st)) {
			t->syncs++;
		}
	}
	return NULL;
}

static int put(cs_store *st, const char *row, const char *qual, int64_t ts, const char *val, bool rewrite)
{
	cs_mutation m[2];
	size_t n = 0;
	cs_txn *txn;
	int rc;

	if ((rc = cs_txn_begin(st, 0, &txn)))
		return rc;
	if (rewrite) /* the version the first flush wrote, rewritten in place (fs/edit.c) */
		m[n++] = (cs_mutation){ .op = CS_DELETE_COLUMN, .family = FAMILY,
					.qualifier = { qual, strlen(qual) }, .ts_start = ts, .ts_end = ts + 1 };
	m[n++] = (cs_mutation){ .op = CS_SET_CELL, .family = FAMILY, .qualifier = { qual, strlen(qual) },
				.ts = ts, .value = { val, strlen(val) } };
	if ((rc = cs_row_mutate(txn, TABLE, (cs_bytes){ row, strlen(row) }, m, n))) {
		cs_txn_abort(txn);
		return rc;
	}
	return cs_txn_commit(txn);
}

/* Create the N cells, then overwrite them: 4N commits, each followed by a sched_yield() (the daemon
 * blocks in read() between requests, and its watch thread runs then). */
static double run_store(const char *base, uint64_t n, enum mode mode, uint64_t *size, unsigned long *syncs)
{
	bool bg = mode != OWN;
	cs_open_opts o = { .flags = CS_OPEN_CREATE | (bg ? CS_OPEN_BG_SYNC : 0) };
	const char *dir = mk_dir(base);
	struct ticker tk = { 0 };
	pthread_t th;
	cs_store *st;
	cs_txn *txn;
	char row[24], qual[8];
	double t0, t1;
	int rc;

	if ((rc = cs_store_open(dir, &o, &st)))
		die("cs_store_open", rc);
	if ((rc = cs_txn_begin(st, 0, &txn)) || (rc = cs_table_create(txn, TABLE, '#')) ||
	    (rc = cs_family_create(txn, TABLE, FAMILY, NULL)) ||
	    (mode == WOKEN_KVOFF && (rc = cs_table_set_keyviz(txn, TABLE, false))) || (rc = cs_txn_commit(txn)))
		die("creating the table", rc);
	tk.st = st;
	tk.mode = mode;
	if (bg && (rc = pthread_create(&th, NULL, tick, &tk)))
		die("pthread_create", rc);
	t0 = now_s();
	for (int pass = 0; pass < 2; pass++) {
		for (uint64_t i = 0; i < n; i++) {
			int64_t ts = 1000000 + (int64_t)pass * 1000;
			cell_name(i, row, qual);
			if ((rc = put(st, row, qual, ts, "", false)))
				die("a commit", rc);
			sched_yield();
			if ((rc = put(st, row, qual, ts, "v\n", true)))
				die("a commit", rc);
			sched_yield();
		}
	}
	t1 = now_s();
	if (bg) {
		atomic_store(&tk.stop, true);
		pthread_join(th, NULL);
		*syncs = tk.syncs;
	}
	cs_store_close(st);
	*size = data_size(dir);
	cleanup_dir();
	return t1 - t0;
}

/* ---- raw LMDB ---- */

#define LM(call)                                 \
	do {                                     \
		int rc_ = (call);                \
		if (rc_)                         \
			die(#call, rc_);         \
	} while (0)

/* The same 4N commits as one mdb_put each of a comparable key (row \0 family \0 qualifier \0 ~ts). */
static double run_raw(const char *base, uint64_t n, uint64_t *size)
{
	const char *dir = mk_dir(base);
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	char row[24], qual[8];
	uint8_t key[64];
	double t0, t1;

	LM(mdb_env_create(&env));
	LM(mdb_env_set_mapsize(env, (size_t)1 << 36));
	LM(mdb_env_open(env, dir, MDB_NOSYNC | MDB_NOTLS, 0600));
	LM(mdb_txn_begin(env, NULL, 0, &txn));
	LM(mdb_dbi_open(txn, NULL, 0, &dbi));
	LM(mdb_txn_commit(txn));
	t0 = now_s();
	for (int pass = 0; pass < 2; pass++) {
		for (uint64_t i = 0; i < n; i++) {
			uint64_t ts = ~(uint64_t)(1000000 + pass * 1000);
			size_t kn;
			cell_name(i, row, qual);
			kn = (size_t)snprintf((char *)key, sizeof(key), "%s%c%s%c%s%c", row, 0, FAMILY, 0, qual, 0);
			for (int b = 7; b >= 0; b--)
				key[kn++] = (uint8_t)(ts >> (8 * b));
			for (int k = 0; k < 2; k++) {
				MDB_val kv = { kn, key }, vv = { k ? 2 : 0, (void *)"v\n" };
				LM(mdb_txn_begin(env, NULL, 0, &txn));
				LM(mdb_put(txn, dbi, &kv, &vv, 0));
				LM(mdb_txn_commit(txn));
				sched_yield();
			}
		}
	}
	t1 = now_s();
	mdb_env_close(env);
	*size = data_size(dir);
	cleanup_dir();
	return t1 - t0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	uint64_t n = 20000, sz[NMODES] = { 0 };
	unsigned long syncs[NMODES] = { 0 }; /* the watch thread's sync points (all but RAW, OWN), last run */
	int repeats = 3, c;

	while ((c = getopt(argc, argv, "n:r:d:")) != -1) {
		switch (c) {
		case 'n': n = strtoull(optarg, NULL, 10); break;
		case 'r': repeats = atoi(optarg); break;
		case 'd': base = optarg; break;
		default:
			fprintf(stderr, "usage: bench_commit [-n CELLS] [-r REPEATS] [-d TMPDIR]\n");
			return 1;
		}
	}
	if (!n || repeats < 1) {
		fprintf(stderr, "bench_commit: -n and -r must be positive\n");
		return 1;
	}
	double *t = calloc((size_t)repeats * NMODES, sizeof(*t));
	if (!t)
		die("calloc", ENOMEM);
	for (int r = 0; r < repeats; r++) /* the sides take turns within each repeat */
		for (int m = 0; m < NMODES; m++)
			t[m * repeats + r] = m == RAW ? run_raw(base, n, &sz[m]) : run_store(base, n, (enum mode)m, &sz[m], &syncs[m]);
	printf("bench_commit: %" PRIu64 " cells, created then overwritten, two one-cell commits each "
	       "(%" PRIu64 " commits), in %s, best of %d\n", n, 4 * n, base, repeats);
	printf("%-28s %9s %10s %7s %10s %12s\n", "", "s", "us/commit", "x raw", "data.mdb", "sync points");
	double best[NMODES];
	for (int m = 0; m < NMODES; m++) {
		qsort(t + m * repeats, (size_t)repeats, sizeof(*t), cmp_d);
		best[m] = t[m * repeats];
		char sp[24] = "-";
		if (m == WOKEN || m == TICKED || m == WOKEN_KVOFF)
			snprintf(sp, sizeof(sp), "%lu", syncs[m]);
		printf("%-28s %9.4f %10.2f %7.2f %10" PRIu64 " %12s\n", mode_names[m], best[m],
		       best[m] * 1e6 / (double)(4 * n), best[m] / best[RAW], sz[m], sp);
	}
	free(t);
	return 0;
}
