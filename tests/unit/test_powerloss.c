/* test_powerloss.c — a power loss never leaves a torn store: opened in another boot, a store is its last
 * synced state, whole, whichever of the later unsynced writes reached the disk (anchor.h, kv_env.c).
 *
 * A power loss is simulated on files: the data file as it stood right after a sync (what the disk surely
 * holds), the data file later (what the page cache held), and images mixing the two page by page, with
 * the newer meta pages always landed — the worst case, which LMDB with MDB_NOSYNC does not prevent. The
 * image is opened as if after a reboot (anchor_test_boot_id). The stores are opened CS_OPEN_BG_SYNC, so
 * that sync points are the tests' own (cs_store_sync()) and never come on their own in between. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "anchor.h"

#define PAGE 4096

struct file {
	uint8_t *p;
	size_t n;
};

static struct file slurp(const char *dir, const char *name)
{
	char path[512];
	struct stat sb;
	struct file f;
	int fd;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_true((fd = open(path, O_RDONLY)) >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	f.n = (size_t)sb.st_size;
	assert_non_null(f.p = malloc(f.n + 1));
	assert_int_equal(pread(fd, f.p, f.n, 0), (ssize_t)f.n);
	close(fd);
	return f;
}

static void spit(const char *dir, const char *name, const uint8_t *p, size_t n)
{
	char path[512];
	int fd;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_true((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) >= 0);
	assert_int_equal(write(fd, p, n), (ssize_t)n);
	close(fd);
}

static void put_n(cs_store *st, int from, int to, const char *tag)
{
	char row[32], val[160];
	for (int i = from; i < to; i++) {
		snprintf(row, sizeof(row), "r%05d", (i * 7919) % 3000);
		snprintf(val, sizeof(val), "%s-%d-%0120d", tag, i, i);
		tu_put(st, "t", row, "f", "q", 1000 + i, val);
	}
}

static void count_problem(void *ctx, const cs_problem *p)
{
	(void)p;
	++*(int *)ctx;
}

/* Open DIR (as after a reboot when REBOOT), dump table t into *OUT (NULL if unreadable); returns the
 * number of problems cs_verify found, or -1 when the store would not open. */
static int open_dump(const char *dir, int reboot, char **out)
{
	cs_store *st;
	cs_txn *txn;
	int problems = 0, rc;
	*out = NULL;
	anchor_test_boot_id(reboot ? "another-boot" : NULL);
	rc = cs_store_open(dir, NULL, &st);
	anchor_test_boot_id(NULL);
	if (rc)
		return -1;
	if (!cs_txn_begin(st, CS_TXN_RDONLY, &txn)) {
		if (cs_verify(txn, count_problem, &problems, NULL))
			problems++;
		if (tu_try_dump(txn, "t", NULL, out))
			problems++;
		cs_txn_abort(txn);
	} else {
		problems++;
	}
	cs_store_close(st);
	return problems;
}

/* An image: the metas of NEWER, each other page as OLDER had it (zeros past its end) or as NEWER has it,
 * as MODE says (0: older, 1: newer, -1: each at random), written with ANCHOR into a fresh directory. */
static char *image(const struct file *older, const struct file *newer, const struct file *anchor, uint64_t *seed,
		   int mode)
{
	char *dir = tu_mkdtemp();
	uint8_t *p = malloc(newer->n);
	assert_non_null(p);
	memcpy(p, newer->p, newer->n);
	for (size_t off = 2 * PAGE; off < newer->n; off += PAGE) {
		int pick = mode < 0 ? (int)(tu_rand(seed) % 2) : mode;
		if (pick == 0 && off < older->n)
			memcpy(p + off, older->p + off, PAGE);
		else if (pick == 0) /* the file grew, the page never reached the disk */
			memset(p + off, 0, PAGE);
	}
	spit(dir, "data.mdb", p, newer->n);
	spit(dir, "anchor", anchor->p, anchor->n);
	free(p);
	return dir;
}

/* The image of OLDER, NEWER and ANCHOR (as image() with MODE), opened (as after a reboot when REBOOT):
 * clean, and table t is exactly WANT. */
static void expect_image(const struct file *older, const struct file *newer, const struct file *anchor,
			 uint64_t *seed, int mode, int reboot, const char *want)
{
	char *dir = image(older, newer, anchor, seed, mode), *got;
	assert_int_equal(open_dump(dir, reboot, &got), 0);
	assert_string_equal(got, want);
	free(got);
	tu_rmtree(dir);
	free(dir);
}

/* 300 cells synced, then 350 commits not synced (fewer than the 384 after which a commit makes the sync
 * point itself): after the power loss, exactly the synced 300. */
static void test_powerloss__unsynced_commits_roll_back_to_the_synced_state_whole(void **state)
{
	struct tu_store *ts = *state;
	char *synced, *later, *got;
	struct file d0, d1, a0, a1;
	uint64_t seed = 42;
	int torn = 0;

	tu_reopen(ts, CS_OPEN_BG_SYNC, 0);

	tu_table(ts->st, "t", "f", "maxversions=2", NULL);
	put_n(ts->st, 0, 300, "old");
	assert_int_equal(cs_store_sync(ts->st), 0);
	synced = tu_dump_st(ts->st, "t", NULL);
	d0 = slurp(ts->dir, "data.mdb");
	a0 = slurp(ts->dir, "anchor");
	put_n(ts->st, 300, 650, "new"); /* overwrites, so pages are freed and (but for the pin) reused */
	later = tu_dump_st(ts->st, "t", NULL);
	d1 = slurp(ts->dir, "data.mdb");
	a1 = slurp(ts->dir, "anchor");
	assert_true(d1.n > d0.n);
	assert_true(a0.n == a1.n && !memcmp(a0.p, a1.p, a0.n)); /* nothing synced since */

	/* Every later page reached the disk but not the sync: the synced snapshot's pages are untouched. */
	char *dir = image(&d0, &d1, &a1, &seed, 1);
	assert_int_equal(open_dump(dir, 1, &got), 0);
	assert_string_equal(got, synced);
	free(got);
	/* the recovery is done once: opened again in this boot, the same */
	assert_int_equal(open_dump(dir, 0, &got), 0);
	assert_string_equal(got, synced);
	free(got);
	tu_rmtree(dir);
	free(dir);

	/* A crash of the process only (same boot): every commit stays. */
	expect_image(&d0, &d1, &a1, &seed, 1, 0, later);

	/* Torn: the newer meta pages landed, the data pages only here and there. */
	for (int trial = 0; trial < 40; trial++) {
		dir = image(&d0, &d1, &a1, &seed, trial == 0 ? 0 : -1);
		/* without the recovery: torn, as a rule (LMDB may even abort on it, so in a child) */
		pid_t pid = fork();
		int status;
		assert_true(pid >= 0);
		if (pid == 0) {
			int bad;
			if (!freopen("/dev/null", "w", stderr)) /* (LMDB's assertion message) */
				_exit(1);
			bad = open_dump(dir, 0, &got);
			_exit(bad || !got || (strcmp(got, later) && strcmp(got, synced)));
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			torn++;
		tu_rmtree(dir);
		free(dir);
		expect_image(&d0, &d1, &a1, &seed, trial == 0 ? 0 : -1, 1, synced);
	}
	assert_true(torn >= 30); /* the images really are torn: the recovery is what makes them whole */

	/* And the store the images came from syncs on: its next sync is the next state a reboot keeps. */
	assert_int_equal(cs_store_sync(ts->st), 0);
	free(d0.p);
	d0 = slurp(ts->dir, "data.mdb");
	free(a1.p);
	a1 = slurp(ts->dir, "anchor");
	put_n(ts->st, 650, 850, "newer");
	free(d1.p);
	d1 = slurp(ts->dir, "data.mdb");
	expect_image(&d0, &d1, &a1, &seed, 1, 1, later);

	free(synced);
	free(later);
	free(d0.p);
	free(d1.p);
	free(a0.p);
	free(a1.p);
}

/* A writer killed with commits unsynced: the next writer syncs them before its first commit, so a power
 * loss after it keeps them (the dead writer's pin is gone, and nothing is built on unsynced pages). */
static void test_powerloss__a_dead_writers_unsynced_commits_are_synced_by_the_next(void **state)
{
	struct tu_store *ts = *state;
	cs_open_opts o = { .flags = CS_OPEN_BG_SYNC };
	struct file d0, d1, a;
	char *kept;
	uint64_t seed = 7;
	pid_t pid;
	int status;

	tu_reopen(ts, CS_OPEN_BG_SYNC, 0);

	tu_table(ts->st, "t", "f", "maxversions=1", NULL);
	put_n(ts->st, 0, 100, "a");
	assert_int_equal(cs_store_sync(ts->st), 0);
	cs_store_close(ts->st);
	ts->st = NULL;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		cs_store *st;
		if (cs_store_open(ts->dir, &o, &st))
			_exit(2);
		put_n(st, 100, 400, "b");
		_exit(0); /* no sync, no close: as a SIGKILL leaves it */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	assert_int_equal(cs_store_open(ts->dir, &o, &ts->st), 0);
	kept = tu_dump_st(ts->st, "t", NULL);
	put_n(ts->st, 400, 401, "c"); /* the first write: a sync point first */
	d0 = slurp(ts->dir, "data.mdb");
	a = slurp(ts->dir, "anchor");
	put_n(ts->st, 401, 700, "c");
	d1 = slurp(ts->dir, "data.mdb");
	expect_image(&d0, &d1, &a, &seed, 1, 1, kept);
	free(kept);
	free(d0.p);
	free(d1.p);
	free(a.p);
}

/* The anchor's newer slot cut short by the power loss as it was written: the older one still names a
 * whole state. */
static void test_powerloss__a_torn_anchor_slot_falls_back_to_the_other(void **state)
{
	struct tu_store *ts = *state;
	struct file d0, d1, a;
	char *first;
	uint64_t seed = 9;
	anchor_rec *rec = malloc(sizeof(*rec));
	int fd;

	tu_reopen(ts, CS_OPEN_BG_SYNC, 0);

	assert_non_null(rec);
	tu_table(ts->st, "t", "f", "maxversions=1", NULL);
	put_n(ts->st, 0, 200, "a");
	assert_int_equal(cs_store_sync(ts->st), 0);
	first = tu_dump_st(ts->st, "t", NULL);
	d0 = slurp(ts->dir, "data.mdb");
	put_n(ts->st, 200, 260, "b");
	assert_true((fd = anchor_open(ts->dir, 0)) >= 0);
	assert_int_equal(anchor_read(fd, rec), 0);
	uint64_t before = rec->seq;
	close(fd);
	/* A second slot, which the power loss tears while it is written: so the data file is as it stood then
	 * (after the sync of its data, before any later commit; until the slot is written the pin stays on
	 * the first snapshot, whose pages are therefore whole). */
	assert_int_equal(cs_store_sync(ts->st), 0);
	d1 = slurp(ts->dir, "data.mdb");
	a = slurp(ts->dir, "anchor");
	size_t slot = (size_t)(before % 2) * ANCHOR_STRIDE; /* the slot written after BEFORE's */
	assert_true(a.n > slot + 4096 + 100);
	a.p[slot + 4096 + 50] ^= 0x55; /* a meta byte: the checksum no longer holds */

	expect_image(&d0, &d1, &a, &seed, 1, 1, first);
	free(first);
	free(d0.p);
	free(d1.p);
	free(a.p);
	free(rec);
}

/* A store never synced (or made before anchors) opens as it is, in any boot. */
struct waiter {
	cs_store *st;
	atomic_int woke; /* 0: waiting; 1: woken with a sync point due; 2: woken with none */
};

static void *wait_due(void *arg)
{
	struct waiter *w = arg;
	bool due = cs_store_sync_wait(w->st, 600000); /* ten minutes: only a commit's telling ends it sooner */
	atomic_store(&w->woke, due ? 1 : 2);
	return NULL;
}

/* A CS_OPEN_BG_SYNC owner's thread waiting in cs_store_sync_wait() is woken by the commit that makes a
 * sync point due (so the daemon's sync points come every few dozen commits on a fast disk, not every
 * tick), and the sync point it then makes lets it wait again. */
static void test_powerloss__a_commit_that_makes_a_sync_point_due_wakes_the_waiter(void **state)
{
	struct tu_store *ts = *state;
	struct waiter w = { 0 };
	pthread_t th;
	int i;

	tu_reopen(ts, CS_OPEN_BG_SYNC, 0);
	tu_table(ts->st, "t", "f", NULL, NULL);
	w.st = ts->st;
	for (int round = 0; round < 2; round++) {
		atomic_store(&w.woke, 0);
		assert_int_equal(pthread_create(&th, NULL, wait_due, &w), 0);
		/* A sync point is due after 64 commits once ten times the last one's disk time has passed: the
		 * commits are spaced so that time passes before 4,096 (when a commit makes the sync point
		 * itself) on a slow disk too. */
		for (i = 0; i < 100000 && !atomic_load(&w.woke); i++) {
			put_n(ts->st, i, i + 1, "w");
			usleep(200);
		}
		if (!atomic_load(&w.woke)) {
			pthread_cancel(th); /* (waiting on a condition: a cancellation point) */
			pthread_join(th, NULL);
			fail_msg("round %d: %d commits and the waiter was never told a sync point is due", round, i);
		}
		pthread_join(th, NULL);
		assert_int_equal(atomic_load(&w.woke), 1);
		assert_true(cs_store_sync_due(ts->st));
		assert_int_equal(cs_store_sync(ts->st), 0);
		assert_false(cs_store_sync_due(ts->st));
	}
}

static void test_powerloss__no_anchor_opens_as_it_is(void **state)
{
	struct tu_store *ts = *state;
	char path[512], *got, *want;
	tu_table(ts->st, "t", "f", "maxversions=1", NULL);
	put_n(ts->st, 0, 50, "a");
	assert_int_equal(cs_store_sync(ts->st), 0);
	want = tu_dump_st(ts->st, "t", NULL);
	cs_store_close(ts->st);
	ts->st = NULL;
	snprintf(path, sizeof(path), "%s/anchor", ts->dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(open_dump(ts->dir, 1, &got), 0);
	assert_string_equal(got, want);
	free(got);
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_powerloss__unsynced_commits_roll_back_to_the_synced_state_whole,
						tu_store_setup, tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_powerloss__a_dead_writers_unsynced_commits_are_synced_by_the_next,
						tu_store_setup, tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_powerloss__a_torn_anchor_slot_falls_back_to_the_other,
						tu_store_setup, tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_powerloss__a_commit_that_makes_a_sync_point_due_wakes_the_waiter,
						tu_store_setup, tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_powerloss__no_anchor_opens_as_it_is, tu_store_setup,
						tu_store_teardown),
	};
	cs_store_catch_faults();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
