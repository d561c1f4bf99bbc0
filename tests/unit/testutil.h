/* testutil.h — what the store's cmocka unit tests share: fresh stores in mkdtemp directories, recursive
 * removal, a fixed-seed PRNG, short-hand writes, and a text dump of scans so read results compare as
 * strings in table-driven tests. Every helper asserts through cmocka: a failure fails the calling test. */
#ifndef CELLFS_TESTUTIL_H
#define CELLFS_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cellstore.h"

#define TU_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A fresh store in its own temporary directory (the cmocka state of tu_store_setup). */
struct tu_store {
	char *dir;
	cs_store *st;
};

/* A new empty directory under $TMPDIR (default /tmp). Caller frees the string (and removes the tree). */
char *tu_mkdtemp(void);
/* Remove PATH and everything under it. Returns 0 or -errno. */
int tu_rmtree(const char *path);

/* cmocka group/test fixtures: *STATE becomes a struct tu_store with an open store (CS_OPEN_CREATE). */
int tu_store_setup(void **state);
int tu_store_teardown(void **state);
/* Close TS's store and open it again with FLAGS (CS_OPEN_*) and MAX_VALUE (0 = default). */
void tu_reopen(struct tu_store *ts, unsigned flags, uint64_t max_value);

cs_txn *tu_begin(cs_store *st, unsigned flags);
void tu_commit(cs_txn *txn); /* asserts success */

/* Create TABLE with families given as NULL-terminated (name, gc) pairs, in one committed transaction. */
void tu_table(cs_store *st, const char *table, ...);

/* Set one cell; returns cs_row_mutate's result. */
int tu_set(cs_txn *txn, const char *table, cs_bytes row, const char *family, cs_bytes q, int64_t ts,
	   cs_bytes value);
/* Set one cell from C strings in its own committed transaction; asserts success. */
void tu_put(cs_store *st, const char *table, const char *row, const char *family, const char *q, int64_t ts,
	    const char *value);

/* Scan TABLE with OPTS and print what it returns, one line per row:
 *   ROW FAM:QUAL@TS=VALUE FAM:QUAL@TS=VALUE ...
 * (with keys_only, =VALUE is [VALUE_LEN]). Bytes outside 0x21..0x7e and '\' '=' '@' ':' are written as
 * \xHH. Asserts that the scan succeeds. Caller frees. */
char *tu_dump(cs_txn *txn, const char *table, const cs_read_opts *opts);
/* The same in a read-only transaction of its own. */
char *tu_dump_st(cs_store *st, const char *table, const cs_read_opts *opts);
/* Like tu_dump, but returns the scan's error (negative) instead of asserting; *OUT set on success. */
int tu_try_dump(cs_txn *txn, const char *table, const cs_read_opts *opts, char **out);
/* A growing string (always NUL-terminated once anything was added). */
struct tu_buf {
	char *s;
	size_t n, cap;
};
void tu_buf_add(struct tu_buf *b, const void *p, size_t n);
/* Escape N bytes at P as tu_dump does, appending to B. */
void tu_escape(struct tu_buf *b, const void *p, size_t n);

/* splitmix64: a small PRNG for reproducible random inputs. */
uint64_t tu_rand(uint64_t *seed);
/* Fill P with N random bytes; with SPECIAL, mostly the bytes that stress key encoding (0x00, 0x01, 0xFE,
 * 0xFF, '#') and only sometimes uniform ones. */
void tu_rand_bytes(uint64_t *seed, uint8_t *p, size_t n, int special);

/* A malloc'd buffer of N bytes, each FILL. */
uint8_t *tu_filled(size_t n, uint8_t fill);

/* Mutations from string literals, usable in static tables. */
#define TU_LIT(s) { (s), sizeof(s) - 1 }
#define TU_SET(f, q, t, v) { .op = CS_SET_CELL, .family = (f), .qualifier = TU_LIT(q), .ts = (t), .value = TU_LIT(v) }
#define TU_DELCOL(f, q, s, e) \
	{ .op = CS_DELETE_COLUMN, .family = (f), .qualifier = TU_LIT(q), .ts_start = (s), .ts_end = (e) }
#define TU_DELFAM(f) { .op = CS_DELETE_FAMILY, .family = (f) }
#define TU_DELROW() { .op = CS_DELETE_ROW }

/* The fixture of the mutation tests (test_mutate, test_rmw, test_drops, test_move): tu_store_setup, then
 * table "t" with families a, ab, b (no GC policy) and v1 (maxversions=1). Always returns 0. */
int tu_mutate_setup(void **state);
/* Apply M[0..N) to ROW of table "t" in a transaction of its own; asserts success. */
void tu_mutate_ok(cs_store *st, const char *row, const cs_mutation *m, size_t n);
/* Assert that table "t" read with O (NULL: all of it) dumps (tu_dump) as WANT. */
void tu_expect_dump(cs_store *st, const cs_read_opts *o, const char *want);
/* The newest cell of a column of table "t": its value (NUL-terminated, caller frees), its timestamp in
 * *TS and length in *N (either may be NULL); NULL if there is none. */
char *tu_newest(cs_txn *txn, const char *row, const char *fam, const char *q, int64_t *ts, size_t *n);

/* The stored keys of TXN's store (through kv: hidden and dropped data too) that start with the N bytes
 * PREFIX, counted; asserts the scan ends cleanly. */
size_t tu_count_keys(cs_txn *txn, const void *prefix, size_t n);

/* A bare kv environment (store/kv/kv.h) in its own temporary directory: the cmocka state of tu_kv_setup. */
struct kv_env;
struct kv_txn;
struct tu_kv {
	char *dir;
	struct kv_env *env;
};
/* cmocka fixtures: *STATE becomes a struct tu_kv with a writable env; teardown closes it and removes
 * the directory. Always return 0. */
int tu_kv_setup(void **state);
int tu_kv_teardown(void **state);
/* Begin a transaction on F's env (RDONLY: read-only); asserts success. */
struct kv_txn *tu_kv_begin(struct tu_kv *f, bool rdonly);

#endif
