/* test_store.c — opening and closing stores, transactions, the default path, the value limit, and the
 * write sequence that dropped ranges are judged by (it must survive reopening). */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lmdb.h>

static void test_store__open_errors(void **state)
{
	struct tu_store *ts = *state;
	cs_open_opts create = { .flags = CS_OPEN_CREATE }, ro_create = { .flags = CS_OPEN_CREATE | CS_OPEN_RDONLY };
	char *missing, *nested, *file, *full, *junk;
	cs_store *st = NULL;
	struct stat sb;
	FILE *fp;

	assert_true(asprintf(&missing, "%s/missing", ts->dir) > 0);
	assert_int_equal(cs_store_open(missing, NULL, &st), -ENOENT);
	assert_int_equal(cs_store_open(missing, &ro_create, &st), -ENOENT); /* read-only never creates */
	assert_int_equal(stat(missing, &sb), -1);
	assert_int_equal(cs_store_open("", &create, &st), -EINVAL);

	/* CS_OPEN_CREATE makes the parents too, private to the user. */
	assert_true(asprintf(&nested, "%s/a/b/c", ts->dir) > 0);
	assert_int_equal(cs_store_open(nested, &create, &st), 0);
	assert_int_equal(stat(nested, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0700);
	cs_store_close(st);
	assert_int_equal(cs_store_open(nested, NULL, &st), 0); /* and it is a store now */
	cs_store_close(st);

	assert_true(asprintf(&file, "%s/file", ts->dir) > 0);
	assert_non_null(fp = fopen(file, "w"));
	fclose(fp);
	assert_int_equal(cs_store_open(file, &create, &st), -ENOTDIR);

	/* Never a store scattered into a directory that holds something else. */
	assert_true(asprintf(&full, "%s/full", ts->dir) > 0);
	assert_int_equal(mkdir(full, 0700), 0);
	free(file);
	assert_true(asprintf(&file, "%s/full/notes.txt", ts->dir) > 0);
	assert_non_null(fp = fopen(file, "w"));
	fclose(fp);
	assert_int_equal(cs_store_open(full, &create, &st), -ENOTEMPTY);

	/* A data file that is not a store's. */
	assert_true(asprintf(&junk, "%s/a/b/c/data.mdb", ts->dir) > 0);
	assert_non_null(fp = fopen(junk, "w"));
	for (int i = 0; i < 3 * 4096; i++)
		fputc(i & 0xFF, fp);
	fclose(fp);
	assert_int_equal(cs_store_open(nested, NULL, &st), -EIO);

	cs_store_close(NULL);
	free(missing);
	free(nested);
	free(file);
	free(full);
	free(junk);
}

static void test_store__rdonly_store_and_txn(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *txn;

	tu_table(ts->st, "t", "f", NULL, NULL);
	tu_put(ts->st, "t", "r", "f", "q", 1, "v");

	/* A read-only transaction on a writable store refuses every write. */
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_table_create(txn, "u", 0), -EROFS);
	assert_int_equal(tu_set(txn, "t", CS_STR("r"), "f", CS_STR("q"), 2, CS_STR("w")), -EROFS);
	assert_int_equal(cs_gc(txn, NULL, NULL), -EROFS);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("")), -EROFS);
	tu_commit(txn);

	/* A read-only store refuses write transactions, and reads fine. */
	tu_reopen(ts, CS_OPEN_RDONLY, 0);
	assert_int_equal(cs_txn_begin(ts->st, 0, &txn), -EROFS);
	char *s = tu_dump_st(ts->st, "t", NULL);
	assert_string_equal(s, "r f:q@1=v\n");
	free(s);
}

static void test_store__abort_discards_and_commit_persists(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *txn;
	char *s;

	tu_table(ts->st, "t", "f", NULL, NULL);
	txn = tu_begin(ts->st, 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("gone"), "f", CS_STR("q"), 1, CS_STR("v")), 0);
	cs_txn_abort(txn);
	cs_txn_abort(NULL);
	tu_put(ts->st, "t", "kept", "f", "q", 1, "v");
	assert_int_equal(cs_store_sync(ts->st), 0);
	tu_reopen(ts, 0, 0);
	s = tu_dump_st(ts->st, "t", NULL);
	assert_string_equal(s, "kept f:q@1=v\n");
	free(s);
}

static void test_store__max_value(void **state)
{
	struct tu_store *ts = *state;
	uint8_t *big = tu_filled(1001, 'x');
	cs_txn *txn;

	assert_int_equal(cs_store_max_value(ts->st), CS_DEFAULT_MAX_VALUE);
	tu_table(ts->st, "t", "f", NULL, NULL);
	tu_reopen(ts, 0, 1000);
	assert_int_equal(cs_store_max_value(ts->st), 1000);
	txn = tu_begin(ts->st, 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("r"), "f", CS_STR("q"), 1, CS_BYTES(big, 1001)), -EFBIG);
	assert_int_equal(tu_set(txn, "t", CS_STR("r"), "f", CS_STR("q"), 1, CS_BYTES(big, 1000)), 0);
	tu_commit(txn);
	free(big);
}

static void test_store__default_path(void **state)
{
	static const struct {
		const char *db, *xdg, *home, *want;
		int rc;
	} cases[] = {
		{ "/x/db", "/x/xdg", "/x/home", "/x/db", 0 },
		{ "", "/x/xdg", "/x/home", "/x/xdg/cellfs/default", 0 },
		{ NULL, "/x/xdg", "/x/home", "/x/xdg/cellfs/default", 0 },
		{ NULL, "", "/x/home", "/x/home/.local/share/cellfs/default", 0 },
		{ NULL, NULL, "/x/home", "/x/home/.local/share/cellfs/default", 0 },
		{ NULL, NULL, NULL, NULL, -ENOENT },
		{ NULL, NULL, "", NULL, -ENOENT },
	};
	static const char *vars[] = { "CELLFS_DB", "XDG_DATA_HOME", "HOME" };
	char *saved[3];

	for (int v = 0; v < 3; v++) {
		const char *s = getenv(vars[v]);
		saved[v] = s ? strdup(s) : NULL;
	}
	for (size_t i = 0; i < TU_ARRAY_SIZE(cases); i++) {
		const char *vals[3] = { cases[i].db, cases[i].xdg, cases[i].home };
		char *out = NULL;
		for (int v = 0; v < 3; v++)
			vals[v] ? setenv(vars[v], vals[v], 1) : unsetenv(vars[v]);
		assert_int_equal(cs_default_path(&out), cases[i].rc);
		if (!cases[i].rc)
			assert_string_equal(out, cases[i].want);
		free(out);
	}
	for (int v = 0; v < 3; v++) {
		saved[v] ? setenv(vars[v], saved[v], 1) : unsetenv(vars[v]);
		free(saved[v]);
	}
}

static void test_store__now_is_microseconds(void **state)
{
	int64_t a = cs_now_us(), b = cs_now_us();
	assert_true(a > 1600000000LL * 1000000 && a < 5000000000LL * 1000000);
	assert_true(b >= a);
}

/* A drop is judged by write sequence: rows written after it, even after reopening, must show. */
static void test_store__sequence_survives_reopen(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *txn;
	char *s;

	tu_table(ts->st, "t", "f", NULL, NULL);
	tu_put(ts->st, "t", "a1", "f", "q", 1, "old");
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("a")), 0);
	tu_commit(txn);
	tu_reopen(ts, 0, 0);
	tu_put(ts->st, "t", "a1", "f", "q", 2, "new");
	tu_reopen(ts, 0, 0);
	tu_put(ts->st, "t", "a2", "f", "q", 3, "newer");
	s = tu_dump_st(ts->st, "t", NULL);
	assert_string_equal(s, "a1 f:q@2=new\na2 f:q@3=newer\n");
	free(s);
}

/* A compacted copy starts its transaction ids again: drops and families made in the copy still come after
 * every cell written before the copy (many writes first, so the source's ids are well past the copy's). */
static void test_store__sequence_survives_compaction(void **state)
{
	struct tu_store *ts = *state;
	cs_open_opts o = { 0 };
	cs_store *copy;
	char *dest, *s;
	cs_txn *txn;

	tu_table(ts->st, "t", "f", NULL, "g", NULL, NULL);
	for (int i = 0; i < 50; i++)
		tu_put(ts->st, "t", "a1", "f", "q", 1 + i, "old");
	tu_put(ts->st, "t", "b1", "g", "q", 1, "gone with g");
	tu_put(ts->st, "t", "c1", "f", "q", 1, "kept");
	assert_true(asprintf(&dest, "%s/copy", ts->dir) > 0);
	assert_int_equal(cs_store_compact(ts->st, dest, NULL), 0);
	assert_int_equal(cs_store_open(dest, &o, &copy), 0);
	txn = tu_begin(copy, 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("a")), 0);
	assert_int_equal(cs_family_delete(txn, "t", "g"), 0);
	tu_commit(txn);
	txn = tu_begin(copy, 0);
	assert_int_equal(cs_family_create(txn, "t", "g", NULL), 0);
	tu_commit(txn);
	tu_put(copy, "t", "a2", "f", "q", 1, "new");
	s = tu_dump_st(copy, "t", NULL);
	assert_string_equal(s, "a2 f:q@1=new\nc1 f:q@1=kept\n");
	free(s);
	cs_store_close(copy);
	free(dest);
}

/* Several read-only snapshots at once see what was committed when each began. */
static void test_store__snapshots_are_isolated(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *r1, *r2, *w;
	char *s;

	tu_table(ts->st, "t", "f", NULL, NULL);
	tu_put(ts->st, "t", "r", "f", "q", 1, "one");
	r1 = tu_begin(ts->st, CS_TXN_RDONLY);
	w = tu_begin(ts->st, 0);
	assert_int_equal(tu_set(w, "t", CS_STR("r"), "f", CS_STR("q"), 2, CS_STR("two")), 0);
	s = tu_dump(w, "t", NULL); /* a write transaction sees its own writes */
	assert_string_equal(s, "r f:q@2=two f:q@1=one\n");
	free(s);
	tu_commit(w);
	r2 = tu_begin(ts->st, CS_TXN_RDONLY);
	s = tu_dump(r1, "t", NULL);
	assert_string_equal(s, "r f:q@1=one\n");
	free(s);
	s = tu_dump(r2, "t", NULL);
	assert_string_equal(s, "r f:q@2=two f:q@1=one\n");
	free(s);
	tu_commit(r1);
	cs_txn_abort(r2);
}

/* A renewed read transaction sees what was committed since; the store version moves with commits. */
static void test_store__renew_and_version(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *r, *w;
	uint64_t v0, v1;
	char *s;

	tu_table(ts->st, "t", "f", NULL, NULL);
	r = tu_begin(ts->st, CS_TXN_RDONLY);
	v0 = cs_store_version(ts->st);
	w = tu_begin(ts->st, 0);
	assert_int_equal(cs_txn_renew(w), -EINVAL); /* only readers renew */
	assert_int_equal(tu_set(w, "t", CS_STR("r"), "f", CS_STR("q"), 1, CS_STR("one")), 0);
	tu_commit(w);
	v1 = cs_store_version(ts->st);
	assert_true(v1 > v0);
	s = tu_dump(r, "t", NULL);
	assert_string_equal(s, ""); /* still the old snapshot */
	free(s);
	assert_int_equal(cs_txn_renew(r), 0);
	s = tu_dump(r, "t", NULL);
	assert_string_equal(s, "r f:q@1=one\n");
	free(s);
	assert_int_equal(cs_store_version(ts->st), v1); /* reading changes nothing */
	cs_txn_reset(r); /* idle: no snapshot held; renewing picks up where commits are */
	cs_txn_reset(r);
	tu_put(ts->st, "t", "r2", "f", "q", 1, "two");
	assert_int_equal(cs_txn_renew(r), 0);
	s = tu_dump(r, "t", NULL);
	assert_string_equal(s, "r f:q@1=one\nr2 f:q@1=two\n");
	free(s);
	cs_txn_abort(r);
}

/* Tables record when they were created. */
static void test_store__table_created_time(void **state)
{
	struct tu_store *ts = *state;
	int64_t before = cs_now_us(), after;
	cs_table_info *info;
	cs_txn *r;

	tu_table(ts->st, "t", "f", NULL, NULL);
	after = cs_now_us();
	r = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_table_info_get(r, "t", &info), 0);
	assert_true(info->created >= before && info->created <= after);
	cs_table_info_free(info);
	cs_txn_abort(r);
}

/* mdb_reader_list's lines: count those of pid *CTX that hold a snapshot (a txnid, not "-"). */
static int count_held(const char *msg, void *ctx)
{
	int *c = ctx, pid;
	char txnid[32];
	if (sscanf(msg, "%d %*s %31s", &pid, txnid) == 2 && pid == c[0] && strcmp(txnid, "-"))
		c[1]++;
	return 0;
}

/* How many of this process's readers in DIR's reader table hold a snapshot, read by a child (a process
 * must not open one LMDB environment twice). */
static int held_snapshots(const char *dir)
{
	int fds[2], st, n = -1;
	pid_t pid, self = getpid();
	assert_int_equal(pipe(fds), 0);
	if (!(pid = fork())) {
		MDB_env *env;
		int c[2] = { (int)self, 0 };
		if (mdb_env_create(&env) || mdb_env_open(env, dir, MDB_RDONLY, 0) || mdb_reader_list(env, count_held, c) < 0)
			_exit(1);
		_exit(write(fds[1], &c[1], sizeof(c[1])) == sizeof(c[1]) ? 0 : 1);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &n, sizeof(n)), (ssize_t)sizeof(n));
	close(fds[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && !WEXITSTATUS(st));
	return n;
}

/* A writer keeps the snapshot of its last sync point pinned; cs_store_unpin() lets go of it only when
 * nothing of this process's is unsynced, and the next write pins again (a sync point before it). */
static void test_store__unpin_when_idle(void **state)
{
	struct tu_store *ts = *state;
	char *s;

	tu_table(ts->st, "t", "f", NULL, NULL); /* the first write: a sync point, then a commit unsynced */
	assert_int_equal(held_snapshots(ts->dir), 1);
	assert_false(cs_store_unpin(ts->st)); /* a commit to sync: the pin stays */
	assert_int_equal(held_snapshots(ts->dir), 1);
	assert_int_equal(cs_store_sync(ts->st), 0);
	assert_true(cs_store_unpin(ts->st));
	assert_int_equal(held_snapshots(ts->dir), 0);
	assert_true(cs_store_unpin(ts->st)); /* nothing to let go of */
	tu_put(ts->st, "t", "r", "f", "q", 1, "v"); /* pinned again before it commits */
	assert_int_equal(held_snapshots(ts->dir), 1);
	assert_false(cs_store_unpin(ts->st));
	s = tu_dump_st(ts->st, "t", NULL);
	assert_non_null(strstr(s, "v"));
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, tu_store_setup, tu_store_teardown)
		T(test_store__open_errors),
		T(test_store__rdonly_store_and_txn),
		T(test_store__abort_discards_and_commit_persists),
		T(test_store__max_value),
		cmocka_unit_test(test_store__default_path),
		cmocka_unit_test(test_store__now_is_microseconds),
		T(test_store__sequence_survives_reopen),
		T(test_store__sequence_survives_compaction),
		T(test_store__snapshots_are_isolated),
		T(test_store__renew_and_version),
		T(test_store__table_created_time),
		T(test_store__unpin_when_idle),
#undef T
	};
	return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
