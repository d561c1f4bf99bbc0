/* raw_load.c — the floor for bench_import.sh: N cells put straight into LMDB (no store, no CSV), with the
 * store's environment flags, keys shaped like the store's cell keys ('d' tid row 0 1 family 0 qualifier
 * 0 1 ~ts, about 30 bytes) in sorted order, values of the import's size, BATCH puts per transaction and
 * a sync at the end of each, as cellctl import does. MODE "put" uses mdb_put, "append" MDB_APPEND.
 * Prints "raw-MODE CELLS SECONDS CELLS/S". usage: raw_load DIR CELLS BATCH put|append */
#include <lmdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define CHECK(x) do { int rc_ = (x); if (rc_) { fprintf(stderr, "raw_load: %s: %s\n", #x, mdb_strerror(rc_)); return 1; } } while (0)

int main(int argc, char **argv)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	unsigned long n, batch;
	unsigned flags;
	double t0;

	if (argc != 5)
		return fprintf(stderr, "usage: raw_load DIR CELLS BATCH put|append\n"), 2;
	n = strtoul(argv[2], NULL, 10);
	batch = strtoul(argv[3], NULL, 10);
	flags = !strcmp(argv[4], "append") ? MDB_APPEND : 0;
	CHECK(mdb_env_create(&env));
	CHECK(mdb_env_set_mapsize(env, (size_t)1 << 36));
	CHECK(mdb_env_open(env, argv[1], MDB_NOTLS | MDB_NOSYNC, 0600));
	t0 = now_s();
	CHECK(mdb_txn_begin(env, NULL, 0, &txn));
	CHECK(mdb_dbi_open(txn, NULL, 0, &dbi));
	for (unsigned long i = 0; i < n; i++) {
		unsigned char key[96], val[32];
		int kn = 0, vn;
		uint64_t ts = INT64_MAX - 1000;

		key[kn++] = 'd';
		memcpy(key + kn, "\0\0\0\1", 4);
		kn += 4;
		kn += sprintf((char *)key + kn, "row%08lu", i / 10);
		key[kn++] = 0;
		key[kn++] = 1;
		memcpy(key + kn, "cf", 3);
		kn += 3;
		kn += sprintf((char *)key + kn, "c%lu", i % 10);
		key[kn++] = 0;
		key[kn++] = 1;
		for (int b = 7; b >= 0; b--)
			key[kn++] = (unsigned char)(ts >> (8 * b));
		vn = sprintf((char *)val, "\x01\x01v%lu", i);
		MDB_val k = { (size_t)kn, key }, v = { (size_t)vn, val };
		CHECK(mdb_put(txn, dbi, &k, &v, flags));
		if ((i + 1) % batch == 0) {
			CHECK(mdb_txn_commit(txn));
			CHECK(mdb_env_sync(env, 1));
			CHECK(mdb_txn_begin(env, NULL, 0, &txn));
		}
	}
	CHECK(mdb_txn_commit(txn));
	CHECK(mdb_env_sync(env, 1));
	double el = now_s() - t0;
	printf("raw-%s %lu %.3f %.0f\n", argv[4], n, el, (double)n / el);
	mdb_env_close(env);
	return 0;
}
