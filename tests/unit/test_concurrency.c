/* test_concurrency.c — several processes on one store, as the daemon and cellctl use it: a writer and a
 * reader (which writes too), each committing, with every snapshot consistent; ReadModifyWrite from
 * several processes at once counting exactly; a snapshot held in one process while another commits; a
 * file growing while other processes open the store.
 * Children open the store themselves after fork() (LMDB environments do not survive fork) and report
 * through their exit status; the parent checks the store afterwards. */
#include "testutil.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "keys.h"

#define CHILD_TIMEOUT 120 /* seconds; a child that hangs is killed by SIGALRM */

/* In a child: report and exit(1) instead of cmocka's assertions (which belong to the parent). */
#define CHECK(cond)                                                                                    \
	do {                                                                                           \
		if (!(cond)) {                                                                         \
			fprintf(stderr, "child %d: %s:%d: check failed: %s\n", (int)getpid(), __FILE__, \
				__LINE__, #cond);                                                      \
			_exit(1);                                                                      \
		}                                                                                      \
	} while (0)

#define CHECK_RC(call)                                                                                 \
	do {                                                                                           \
		int rc_ = (call);                                                                      \
		if (rc_ < 0) {                                                                         \
			fprintf(stderr, "child %d: %s:%d: %s = %d (%s)\n", (int)getpid(), __FILE__,     \
				__LINE__, #call, rc_, strerror(-rc_));                                 \
			_exit(1);                                                                      \
		}                                                                                      \
	} while (0)

struct fixture {
	char *dir;
	int go[2]; /* children wait for the parent to close go[1], so they start together */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	cs_open_opts o = { .flags = CS_OPEN_CREATE };
	cs_store *st;

	assert_non_null(f);
	f->dir = tu_mkdtemp();
	assert_int_equal(cs_store_open(f->dir, &o, &st), 0);
	tu_table(st, "t", "a", NULL, NULL);
	cs_store_close(st); /* not open across fork() */
	assert_int_equal(pipe(f->go), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	if (f->go[0] >= 0)
		close(f->go[0]);
	if (f->go[1] >= 0)
		close(f->go[1]);
	tu_rmtree(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

/* Fork a child that waits for the start signal, opens the store and runs FN; returns its pid. */
static pid_t spawn(struct fixture *f, void (*fn)(cs_store *st, int arg), int arg)
{
	pid_t pid;
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		cs_store *st;
		char c;
		alarm(CHILD_TIMEOUT);
		close(f->go[1]);
		CHECK(read(f->go[0], &c, 1) == 0);
		CHECK_RC(cs_store_open(f->dir, NULL, &st));
		fn(st, arg);
		cs_store_close(st);
		_exit(0);
	}
	return pid;
}

static void start(struct fixture *f)
{
	close(f->go[1]);
	f->go[1] = -1;
}

static void wait_ok(pid_t pid, const char *what)
{
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail_msg("%s (pid %d) failed: %s %d", what, (int)pid, WIFEXITED(status) ? "exit" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

static cs_store *parent_open(struct fixture *f)
{
	cs_store *st;
	assert_int_equal(cs_store_open(f->dir, NULL, &st), 0);
	return st;
}

/* The newest value of ROW a:Q, or NULL. Child-safe. */
static char *get(cs_txn *txn, const char *row, const char *q, size_t *n)
{
	cs_bytes r = CS_STR(row), qq = CS_STR(q);
	cs_column_sel sel = { .family = "a", .qualifier = &qq };
	cs_read_opts o = { .row = &r, .ncolumns = 1, .columns = &sel, .cells_per_column = 1 };
	const cs_row *rw;
	cs_scan *scan;
	char *v = NULL;
	int rc;

	CHECK_RC(cs_scan_open(txn, "t", &o, &scan));
	CHECK_RC(rc = cs_scan_next(scan, &rw));
	if (rc == 1) {
		CHECK(rw->ncells == 1);
		v = malloc(rw->cells[0].value.len + 1);
		CHECK(v);
		memcpy(v, rw->cells[0].value.data, rw->cells[0].value.len);
		v[rw->cells[0].value.len] = 0;
		if (n)
			*n = rw->cells[0].value.len;
	}
	cs_scan_close(scan);
	return v;
}

static int64_t get_counter(cs_txn *txn, const char *row, const char *q)
{
	size_t n;
	char *v = get(txn, row, q, &n);
	int64_t c = 0;
	if (v) {
		CHECK(n == 8);
		c = (int64_t)key_get_u64((uint8_t *)v);
	}
	free(v);
	return c;
}

/* ---- a writer and a reader ---- */

#define NWRITES 300

/* Each transaction writes one new row whose two cells agree, and counts rows in "ctr". Every 50 rows it
 * waits for the reader to have written once more, so the two really interleave. */
static void writer(cs_store *st, int arg)
{
	for (int i = 0; i < NWRITES; i++) {
		char row[16], v[16];
		cs_txn *txn;
		for (int64_t r = 0; r < i / 50; usleep(200)) {
			CHECK_RC(cs_txn_begin(st, CS_TXN_RDONLY, &txn));
			r = get_counter(txn, "reader", "n");
			CHECK_RC(cs_txn_commit(txn));
		}
		snprintf(row, sizeof(row), "k%04d", i);
		snprintf(v, sizeof(v), "%d", i);
		const cs_mutation m[] = {
			{ .op = CS_SET_CELL, .family = "a", .qualifier = CS_STR("x"), .ts = 1, .value = CS_STR(v) },
			{ .op = CS_SET_CELL, .family = "a", .qualifier = CS_STR("pad"), .ts = 1, .value = CS_STR(row) },
			{ .op = CS_SET_CELL, .family = "a", .qualifier = CS_STR("y"), .ts = 1, .value = CS_STR(v) },
		};
		CHECK_RC(cs_txn_begin(st, 0, &txn));
		CHECK_RC(cs_row_mutate(txn, "t", CS_STR(row), m, 3));
		CHECK_RC(cs_rmw_increment(txn, "t", CS_STR("ctr"), "a", CS_STR("n"), 1, NULL));
		CHECK_RC(cs_txn_commit(txn));
	}
}

/* Check snapshots until the writer is done; every snapshot must hold whole transactions only. Write
 * now and then too: a counter and, at the end, how many times it wrote. */
static void reader(cs_store *st, int arg)
{
	int64_t seen = 0, writes = 0, snapshots = 0;

	while (seen < NWRITES) {
		cs_txn *txn;
		cs_scan *scan;
		const cs_row *r;
		int64_t rows = 0;
		cs_read_opts o = { .prefix = CS_STR("k") };
		int rc;

		CHECK_RC(cs_txn_begin(st, CS_TXN_RDONLY, &txn));
		seen = get_counter(txn, "ctr", "n");
		CHECK_RC(cs_scan_open(txn, "t", &o, &scan));
		while ((rc = cs_scan_next(scan, &r)) == 1) {
			char row[32];
			snprintf(row, sizeof(row), "k%04lld", (long long)rows);
			CHECK(r->key.len == strlen(row) && !memcmp(r->key.data, row, r->key.len));
			CHECK(r->ncells == 3);
			/* pad, x, y: x and y were written together */
			CHECK(r->cells[1].value.len == r->cells[2].value.len);
			CHECK(!memcmp(r->cells[1].value.data, r->cells[2].value.data, r->cells[1].value.len));
			rows++;
		}
		CHECK_RC(rc);
		cs_scan_close(scan);
		CHECK(rows == seen); /* the counter and the rows come from the same commits */
		CHECK_RC(cs_txn_commit(txn));
		snapshots++;

		if (snapshots % 5 == 0) {
			CHECK_RC(cs_txn_begin(st, 0, &txn));
			CHECK_RC(cs_rmw_increment(txn, "t", CS_STR("reader"), "a", CS_STR("n"), 1, NULL));
			CHECK_RC(cs_txn_commit(txn));
			writes++;
		}
	}
	cs_txn *txn;
	char v[32];
	CHECK(writes >= (NWRITES - 1) / 50);
	snprintf(v, sizeof(v), "%lld", (long long)writes);
	const cs_mutation m = { .op = CS_SET_CELL, .family = "a", .qualifier = CS_STR("total"), .ts = 1, .value = CS_STR(v) };
	CHECK_RC(cs_txn_begin(st, 0, &txn));
	CHECK_RC(cs_row_mutate(txn, "t", CS_STR("reader"), &m, 1));
	CHECK_RC(cs_txn_commit(txn));
}

static void test_concurrency__writer_and_reader(void **state)
{
	struct fixture *f = *state;
	pid_t w = spawn(f, writer, 0), r = spawn(f, reader, 0);
	cs_store *st;
	cs_txn *txn;
	char *total;

	start(f);
	wait_ok(w, "writer");
	wait_ok(r, "reader");

	st = parent_open(f);
	txn = tu_begin(st, CS_TXN_RDONLY);
	assert_int_equal(get_counter(txn, "ctr", "n"), NWRITES);
	total = get(txn, "reader", "total", NULL);
	assert_non_null(total);
	assert_int_equal(get_counter(txn, "reader", "n"), atoll(total));
	free(total);
	char *s = tu_dump(txn, "t", &(cs_read_opts){ .prefix = CS_STR("k"), .keys_only = true, .limit = 2 });
	assert_string_equal(s, "k0000 a:pad@1=[5] a:x@1=[1] a:y@1=[1]\nk0001 a:pad@1=[5] a:x@1=[1] a:y@1=[1]\n");
	free(s);
	tu_commit(txn);
	cs_store_close(st);
}

/* ---- ReadModifyWrite from several processes ---- */

#define NPROC 4
#define NINCR 150

static void incrementer(cs_store *st, int id)
{
	char letter[2] = { (char)('A' + id), 0 };
	for (int i = 0; i < NINCR; i++) {
		cs_txn *txn;
		int64_t result;
		CHECK_RC(cs_txn_begin(st, 0, &txn));
		CHECK_RC(cs_rmw_increment(txn, "t", CS_STR("counter"), "a", CS_STR("n"), 1, &result));
		CHECK(result >= 1 && result <= NPROC * NINCR);
		if (i % 3 == 0)
			CHECK_RC(cs_rmw_append(txn, "t", CS_STR("counter"), "a", CS_STR("log"), CS_STR(letter), NULL));
		CHECK_RC(cs_txn_commit(txn));
	}
}

static void test_concurrency__increment_from_many_processes(void **state)
{
	struct fixture *f = *state;
	pid_t pids[NPROC];
	cs_store *st;
	cs_txn *txn;
	size_t n, count[NPROC] = { 0 };
	char *log;

	for (int i = 0; i < NPROC; i++)
		pids[i] = spawn(f, incrementer, i);
	start(f);
	for (int i = 0; i < NPROC; i++)
		wait_ok(pids[i], "incrementer");

	st = parent_open(f);
	txn = tu_begin(st, CS_TXN_RDONLY);
	assert_int_equal(get_counter(txn, "counter", "n"), NPROC * NINCR);
	log = get(txn, "counter", "log", &n);
	assert_non_null(log);
	assert_int_equal(n, NPROC * ((NINCR + 2) / 3));
	for (size_t i = 0; i < n; i++) {
		assert_true(log[i] >= 'A' && log[i] < 'A' + NPROC);
		count[log[i] - 'A']++;
	}
	for (int i = 0; i < NPROC; i++)
		assert_int_equal(count[i], (NINCR + 2) / 3);
	free(log);
	tu_commit(txn);
	cs_store_close(st);
}

/* ---- a snapshot held while another process commits ---- */

static int ping[2], pong[2];

static void snapshot_holder(cs_store *st, int arg)
{
	cs_txn *old, *fresh;
	char c = 0, *v;

	CHECK_RC(cs_txn_begin(st, CS_TXN_RDONLY, &old));
	v = get(old, "r", "q", NULL);
	CHECK(v && !strcmp(v, "before"));
	free(v);
	CHECK(write(ping[1], &c, 1) == 1); /* holding the snapshot: go ahead */
	CHECK(read(pong[0], &c, 1) == 1);  /* the other process has committed */
	v = get(old, "r", "q", NULL);
	CHECK(v && !strcmp(v, "before"));
	free(v);
	CHECK_RC(cs_txn_begin(st, CS_TXN_RDONLY, &fresh));
	v = get(fresh, "r", "q", NULL);
	CHECK(v && !strcmp(v, "after"));
	free(v);
	CHECK_RC(cs_txn_commit(fresh));
	CHECK_RC(cs_txn_commit(old));
}

static void committer(cs_store *st, int arg)
{
	cs_txn *txn;
	char c;
	CHECK(read(ping[0], &c, 1) == 1);
	for (int i = 0; i < 20; i++) { /* enough commits to reuse pages the old snapshot must keep */
		const cs_mutation m[] = {
			{ .op = CS_DELETE_ROW },
			{ .op = CS_SET_CELL, .family = "a", .qualifier = CS_STR("q"), .ts = 1,
			  .value = CS_STR(i == 19 ? "after" : "during") },
		};
		CHECK_RC(cs_txn_begin(st, 0, &txn));
		CHECK_RC(cs_row_mutate(txn, "t", CS_STR("r"), m, 2));
		CHECK_RC(cs_txn_commit(txn));
	}
	CHECK(write(pong[1], &c, 1) == 1);
}

static void test_concurrency__snapshot_survives_other_commits(void **state)
{
	struct fixture *f = *state;
	cs_store *st = parent_open(f);
	pid_t a, b;

	tu_put(st, "t", "r", "a", "q", 1, "before");
	cs_store_close(st);
	assert_int_equal(pipe(ping), 0);
	assert_int_equal(pipe(pong), 0);
	a = spawn(f, snapshot_holder, 0);
	b = spawn(f, committer, 0);
	start(f);
	wait_ok(a, "snapshot holder");
	wait_ok(b, "committer");
	close(ping[0]);
	close(ping[1]);
	close(pong[0]);
	close(pong[1]);
}

/* ---- a file that grows while other processes open the store ---- */

#define GROW_VALUES 300
#define GROW_VALUE (48u << 10)
#define GROW_OPENS 60

static void grow_value(char *v, int i)
{
	for (size_t j = 0; j < GROW_VALUE; j++)
		v[j] = (char)('a' + (i + j / 4096) % 26);
}

static void grower(cs_store *st, int arg)
{
	char row[16], *v = malloc(GROW_VALUE);
	CHECK(v);
	for (int i = 0; i < GROW_VALUES; i++) {
		cs_txn *txn;
		grow_value(v, i);
		snprintf(row, sizeof(row), "g%04d", i);
		const cs_mutation m = { .op = CS_SET_CELL, .family = "a", .qualifier = CS_STR("q"), .ts = 1,
					.value = { v, GROW_VALUE } };
		CHECK_RC(cs_txn_begin(st, 0, &txn));
		CHECK_RC(cs_row_mutate(txn, "t", CS_STR(row), &m, 1));
		CHECK_RC(cs_txn_commit(txn));
	}
	free(v);
}

/* A child that opens the store writable and closes it again, GROW_OPENS times. */
static pid_t spawn_opener(struct fixture *f)
{
	pid_t pid;
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char c;
		alarm(CHILD_TIMEOUT);
		close(f->go[1]);
		CHECK(read(f->go[0], &c, 1) == 0);
		for (int i = 0; i < GROW_OPENS; i++) {
			cs_store *st;
			CHECK_RC(cs_store_open(f->dir, NULL, &st));
			cs_store_close(st);
		}
		_exit(0);
	}
	return pid;
}

/* One process writes values that grow the file (in memory its commits write the map, and the file
 * grows on faults) while two others keep opening the store, each open making the file the map's size
 * and cutting it back (store/README.md, "The map"): every commit succeeds and every value reads back. */
static void test_concurrency__a_file_growing_while_others_open_the_store(void **state)
{
	struct fixture *f = *state;
	pid_t w = spawn(f, grower, 0), o1 = spawn_opener(f), o2 = spawn_opener(f);
	char row[16], *want = malloc(GROW_VALUE);

	assert_non_null(want);
	start(f);
	wait_ok(w, "grower");
	wait_ok(o1, "opener");
	wait_ok(o2, "opener");

	cs_store *st = parent_open(f);
	cs_txn *txn = tu_begin(st, CS_TXN_RDONLY);
	for (int i = 0; i < GROW_VALUES; i++) {
		size_t n;
		snprintf(row, sizeof(row), "g%04d", i);
		char *v = get(txn, row, "q", &n);
		grow_value(want, i);
		assert_non_null(v);
		assert_int_equal(n, GROW_VALUE);
		assert_memory_equal(v, want, n);
		free(v);
	}
	tu_commit(txn);
	cs_store_close(st);
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_concurrency__writer_and_reader, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrency__increment_from_many_processes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrency__snapshot_survives_other_commits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrency__a_file_growing_while_others_open_the_store, setup,
						teardown),
	};
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("concurrency", tests, NULL, NULL);
}
