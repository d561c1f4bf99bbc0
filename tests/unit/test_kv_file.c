/* test_kv_file.c — the file of a written map (MDB_WRITEMAP): it grows as it is written, not to the
 * map's size, grows again after another opener cut it back, is cut back by any open when left at the
 * map's size, and a write it cannot grow for (a full disk) is ENOSPC with nothing changed; on a disk
 * the map is not written. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <linux/magic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "kv.h"

/* tu_kv_setup on a memory file system (TMPDIR if it is one, else /dev/shm), where a writable env writes
 * its map (MDB_WRITEMAP); skipped where there is none. */
static int kv_setup_mem(void **state)
{
	const char *tmp = getenv("TMPDIR"), *shm = "/dev/shm";
	struct statfs sf;
	char *dir;

	if (!tmp || statfs(tmp, &sf) || sf.f_type != TMPFS_MAGIC)
		tmp = shm;
	if (statfs(tmp, &sf) || sf.f_type != TMPFS_MAGIC)
		skip();
	assert_true(asprintf(&dir, "%s/cellfs-unit-XXXXXX", tmp) > 0);
	assert_non_null(mkdtemp(dir));
	struct tu_kv *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	f->dir = dir;
	assert_int_equal(kv_env_open(f->dir, false, true, &f->env), 0);
	*state = f;
	return 0;
}

static uint64_t data_size(const char *dir)
{
	char *path;
	struct stat sb;
	assert_true(asprintf(&path, "%s/data.mdb", dir) > 0);
	assert_int_equal(stat(path, &sb), 0);
	free(path);
	return (uint64_t)sb.st_size;
}

static void set_data_size(const char *dir, uint64_t size)
{
	char *path;
	assert_true(asprintf(&path, "%s/data.mdb", dir) > 0);
	assert_int_equal(truncate(path, (off_t)size), 0);
	free(path);
}

/* Where the last page LMDB wrote ends: every page it uses begins with its own number, not zero; the
 * file past its pages is zeros. */
static uint64_t pages_end(const char *dir)
{
	char *path;
	uint8_t pg[4096];
	uint64_t end = 0, off = 0;
	FILE *fp;
	assert_true(asprintf(&path, "%s/data.mdb", dir) > 0);
	assert_non_null(fp = fopen(path, "rb"));
	for (; fread(pg, 1, sizeof(pg), fp) == sizeof(pg); off += sizeof(pg))
		for (size_t i = 0; i < sizeof(pg); i++)
			if (pg[i]) {
				end = off + sizeof(pg);
				break;
			}
	fclose(fp);
	free(path);
	return end;
}

/* Values FROM..TO-1 of N bytes, each its own commit: key "vNNN", value bytes = its number. */
static void put_values(struct tu_kv *f, int from, int to, size_t n)
{
	char key[16];
	for (int i = from; i < to; i++) {
		uint8_t *val = tu_filled(n, (uint8_t)i);
		kv_txn *t = tu_kv_begin(f, false);
		snprintf(key, sizeof(key), "v%03d", i);
		assert_int_equal(kv_put(t, key, strlen(key), val, n), 0);
		assert_int_equal(kv_txn_commit(t), 0);
		free(val);
	}
}

/* KEY holds exactly the N bytes at WANT. */
static void expect_stored(struct tu_kv *f, const char *key, const void *want, size_t n)
{
	const void *v;
	size_t vn;
	kv_txn *t = tu_kv_begin(f, true);
	assert_int_equal(kv_get(t, key, strlen(key), &v, &vn), 0);
	assert_int_equal(vn, n);
	assert_memory_equal(v, want, n);
	kv_txn_abort(t);
}

static void expect_values(struct tu_kv *f, int from, int to, size_t n)
{
	char key[16];
	kv_txn *t = tu_kv_begin(f, true);
	for (int i = from; i < to; i++) {
		uint8_t *want = tu_filled(n, (uint8_t)i);
		const void *v;
		size_t vn;
		snprintf(key, sizeof(key), "v%03d", i);
		assert_int_equal(kv_get(t, key, strlen(key), &v, &vn), 0);
		assert_int_equal(vn, n);
		assert_memory_equal(v, want, n);
		free(want);
	}
	kv_txn_abort(t);
}

/* On a disk (TMPDIR, if it is one) the map is not written: the file grows as LMDB pwrite()s pages, not
 * to the map's size, and a reopen leaves it as it is. */
static void test_kv__a_store_on_a_disk_writes_its_pages_not_its_map(void **state)
{
	struct tu_kv *f = *state;
	struct statfs sf;
	assert_int_equal(statfs(f->dir, &sf), 0);
	if (sf.f_type == TMPFS_MAGIC)
		skip(); /* (TMPDIR is in memory) */
	assert_true(data_size(f->dir) <= (64u << 10));
	put_values(f, 0, 40, 256 << 10);
	uint64_t size = data_size(f->dir);
	assert_true(size >= 10u << 20 && size <= 16u << 20);
	kv_env_close(f->env);
	set_data_size(f->dir, 32u << 20);
	assert_int_equal(kv_env_open(f->dir, false, false, &f->env), 0);
	assert_int_equal(data_size(f->dir), 32u << 20);
	expect_values(f, 0, 40, 256 << 10);
}

/* On a memory file system LMDB makes a written map's file as large as the map (1 TiB here); the store's file holds what it
 * stores and grows as it is written, stays as it was across a reopen, and is cut back when an opener
 * died before cutting it. */
static void test_kv__the_file_grows_as_written_not_to_the_maps_size(void **state)
{
	struct tu_kv *f = *state;
	uint64_t size;

	assert_true(data_size(f->dir) <= (1u << 20)); /* a new store: one MiB */
	put_values(f, 0, 40, 256 << 10);               /* 10 MiB */
	size = data_size(f->dir);
	assert_true(size >= 10u << 20);
	assert_true(size <= 16u << 20);
	expect_values(f, 0, 40, 256 << 10);

	kv_env_close(f->env);
	assert_int_equal(kv_env_open(f->dir, false, false, &f->env), 0);
	assert_int_equal(data_size(f->dir), size);

	kv_env_close(f->env);
	set_data_size(f->dir, (uint64_t)1 << 40); /* as LMDB's open leaves it */
	assert_int_equal(kv_env_open(f->dir, false, false, &f->env), 0);
	assert_true(data_size(f->dir) >= 10u << 20);
	assert_true(data_size(f->dir) <= 16u << 20);
	expect_values(f, 0, 40, 256 << 10);
	put_values(f, 40, 48, 256 << 10);
	expect_values(f, 0, 48, 256 << 10);
}

/* Another process's open cuts the file back to the pages in use while this one has it open (its record
 * of the file's size is then too large): this one's next writes grow it again, and nothing is lost. */
static void test_kv__a_file_cut_back_meanwhile_grows_again(void **state)
{
	struct tu_kv *f = *state;

	put_values(f, 0, 12, 256 << 10);
	set_data_size(f->dir, pages_end(f->dir));
	put_values(f, 12, 24, 256 << 10);
	kv_txn *t = tu_kv_begin(f, false); /* several MiB in one commit */
	uint8_t *big = tu_filled(5u << 20, 0x5a);
	assert_int_equal(kv_put(t, "big", 3, big, 5u << 20), 0);
	assert_int_equal(kv_txn_commit(t), 0);
	expect_values(f, 0, 24, 256 << 10);

	kv_env_close(f->env);
	assert_int_equal(kv_env_open(f->dir, false, false, &f->env), 0);
	expect_values(f, 0, 24, 256 << 10);
	expect_stored(f, "big", big, 5u << 20);
	free(big);
}

/* A file left at the map's size (an opener killed between LMDB's open and its cut) is cut back by the
 * next open of any kind: a read-only one (which may write the file) too, on a disk and in memory. The
 * pages stay, and the store reads and writes as before. */
static void test_kv__a_file_left_at_the_maps_size_is_cut_back_by_any_open(void **state)
{
	struct tu_kv *f = *state;
	uint64_t pages;

	put_values(f, 0, 8, 64 << 10);
	kv_env_close(f->env);
	pages = pages_end(f->dir);
	for (int rdonly = 1; rdonly >= 0; rdonly--) {
		set_data_size(f->dir, (uint64_t)1 << 40);
		assert_int_equal(kv_env_open(f->dir, rdonly, false, &f->env), 0);
		assert_true(data_size(f->dir) >= pages);
		assert_true(data_size(f->dir) <= (pages + (1u << 20)) / (1u << 20) * (1u << 20));
		expect_values(f, 0, 8, 64 << 10);
		kv_env_close(f->env);
	}
	assert_int_equal(kv_env_open(f->dir, false, false, &f->env), 0);
	put_values(f, 8, 16, 64 << 10);
	expect_values(f, 0, 16, 64 << 10);
	/* A file that is merely larger than its pages is not the map's size: it stays. */
	kv_env_close(f->env);
	set_data_size(f->dir, 64u << 20);
	assert_int_equal(kv_env_open(f->dir, true, false, &f->env), 0);
	assert_int_equal(data_size(f->dir), 64u << 20);
	expect_values(f, 0, 16, 64 << 10);
}

/* A write that needs the file to grow when it cannot (the disk is full; here a file size limit) fails
 * with ENOSPC, whether LMDB or the copy of the value meets the end, and leaves the store as it was; the
 * same write succeeds once there is room. With a written map (in memory) the fault handler is SIGBUS's
 * again after something else took it over; on a disk LMDB's pwrite() fails. */
static void test_kv__a_write_the_file_cannot_grow_for_is_enospc_and_changes_nothing(void **state)
{
	struct tu_kv *f = *state;
	struct rlimit old, lim;
	uint8_t *big = tu_filled(3u << 20, 0xa5);
	const void *v;
	size_t vn;
	kv_txn *t;

	put_values(f, 0, 4, 256 << 10);
	signal(SIGBUS, SIG_DFL); /* as a test framework does: the store puts its handler back */
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = data_size(f->dir);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);

	for (int i = 0; i < 2; i++) { /* the file can grow neither for the value's pages nor for its copy */
		t = tu_kv_begin(f, false);
		int rc = kv_put(t, "big", 3, big, 3u << 20);
		if (!rc)
			rc = kv_txn_commit(t);
		else
			kv_txn_abort(t);
		assert_int_equal(rc, -ENOSPC);
	}
	t = tu_kv_begin(f, false);
	assert_int_equal(kv_put(t, "v000", 4, "x", 1), 0); /* within the file: fits */
	kv_txn_abort(t);

	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	expect_values(f, 0, 4, 256 << 10);
	t = tu_kv_begin(f, true);
	assert_int_equal(kv_get(t, "big", 3, &v, &vn), -ENOENT);
	kv_txn_abort(t);

	t = tu_kv_begin(f, false);
	assert_int_equal(kv_put(t, "big", 3, big, 3u << 20), 0);
	assert_int_equal(kv_txn_commit(t), 0);
	expect_stored(f, "big", big, 3u << 20);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_kv__the_file_grows_as_written_not_to_the_maps_size, kv_setup_mem,
						tu_kv_teardown),
		cmocka_unit_test_setup_teardown(test_kv__a_file_cut_back_meanwhile_grows_again, kv_setup_mem,
						tu_kv_teardown),
		cmocka_unit_test_setup_teardown(test_kv__a_write_the_file_cannot_grow_for_is_enospc_and_changes_nothing,
						kv_setup_mem, tu_kv_teardown),
		cmocka_unit_test_setup_teardown(test_kv__a_write_the_file_cannot_grow_for_is_enospc_and_changes_nothing,
						tu_kv_setup, tu_kv_teardown),
		cmocka_unit_test_setup_teardown(test_kv__a_store_on_a_disk_writes_its_pages_not_its_map, tu_kv_setup,
						tu_kv_teardown),
		cmocka_unit_test_setup_teardown(test_kv__a_file_left_at_the_maps_size_is_cut_back_by_any_open, tu_kv_setup,
						tu_kv_teardown),
		cmocka_unit_test_setup_teardown(test_kv__a_file_left_at_the_maps_size_is_cut_back_by_any_open,
						kv_setup_mem, tu_kv_teardown),
	};
	return cmocka_run_group_tests_name("kv", tests, NULL, NULL);
}
