/* fuzz_dump.c — the dump reader (cs_restore, store/lmdb/restore.c; format in store/dump-format.md).
 *
 * One store in a temporary directory serves every input; it holds a table "base" that no input may
 * change. Input: a flags byte, then either the dump stream as it is (flags bit 0 clear) or "framed":
 * a 16-byte header then frames without their checksums (12-byte frame header, payload), to which the
 * harness adds the checksum chain, so mutations reach the frame parsers instead of stopping at a hash
 * mismatch (enc 2 in a frame header: the harness compresses the payload with zstd). Flags bits 1-3
 * choose how many bytes each read returns, bits 5-7 the batch size (small batches commit staging
 * cells, which a failed restore must remove again). Properties:
 *   - cs_restore() succeeds or fails with an error it documents (-EBADMSG, -ENOTSUP with a one-line
 *     reason; -EEXIST naming the table; -EFBIG), never -EIO, -ENOMEM or a crash;
 *   - after a failure the store is exactly as before: the same tables, "base" dumps to the same bytes,
 *     and cs_verify() finds no problem and no orphaned (staging) cells;
 *   - after a success, the restored tables dump to a stream that restores again (overwriting them) and
 *     dumps to the same bytes; deleting them and cs_gc() bring the store back to its start.
 */
#include <errno.h>
#include <unistd.h>

#include "cellstore.h"
#include "codec.h"
#include "dumpfmt.h"
#include "fuzz.h"
#include "hash.h"

static cs_store *st;
static char dir[64];
static uint8_t *base_dump;
static size_t base_n;

struct buf {
	uint8_t *p;
	size_t n, cap;
};

static void buf_put(struct buf *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->n + n)
			cap *= 2;
		if (!(b->p = realloc(b->p, cap)))
			abort();
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->n, p, n);
	b->n += n;
}

static int buf_write(void *ctx, const void *p, size_t n)
{
	buf_put(ctx, p, n);
	return 0;
}

struct src {
	const uint8_t *p;
	size_t n, pos, chunk;
};

static int src_read(void *ctx, void *p, size_t n, size_t *got)
{
	struct src *s = ctx;
	size_t k = s->n - s->pos;

	if (k > n)
		k = n;
	if (k > s->chunk)
		k = s->chunk;
	if (k)
		memcpy(p, s->p + s->pos, k);
	s->pos += k;
	*got = k;
	return 0;
}

static void remove_store(void)
{
	char path[96];

	cs_store_close(st);
	snprintf(path, sizeof(path), "%s/data.mdb", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/lock.mdb", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/anchor", dir); /* (store/lmdb/anchor.h) */
	unlink(path);
	snprintf(path, sizeof(path), "%s/heat.spool", dir); /* (store/keyviz/heatspool.h) */
	unlink(path);
	rmdir(dir);
}

static cs_txn *begin(unsigned flags)
{
	cs_txn *txn;

	FUZZ_CHECK(cs_txn_begin(st, flags, &txn) == 0);
	return txn;
}

static void dump_tables(const char *const *names, size_t n, struct buf *out)
{
	cs_txn *txn = begin(CS_TXN_RDONLY);

	out->n = 0;
	FUZZ_CHECK(cs_dump(txn, names, n, buf_write, out, NULL) == 0);
	cs_txn_abort(txn);
}

static void open_store(void)
{
	const char *tmp = getenv("TMPDIR");
	cs_open_opts o = { .flags = CS_OPEN_CREATE, .max_value = 1 << 16 };
	static const char *const base[] = { "base" };
	struct buf b = { 0 };
	cs_txn *txn;

	snprintf(dir, sizeof(dir), "%s/fuzz_dump.XXXXXX", tmp && strlen(tmp) < 40 ? tmp : "/tmp");
	FUZZ_CHECK(mkdtemp(dir));
	FUZZ_CHECK(cs_store_open(dir, &o, &st) == 0);
	atexit(remove_store);
	txn = begin(0);
	FUZZ_CHECK(cs_table_create(txn, "base", '#') == 0);
	FUZZ_CHECK(cs_family_create(txn, "base", "f", "maxversions=2") == 0);
	FUZZ_CHECK(cs_family_create(txn, "base", "g", NULL) == 0);
	for (int i = 0; i < 4; i++) {
		char row[16];
		cs_mutation m[2] = {
			{ .op = CS_SET_CELL, .family = "f", .qualifier = CS_STR("q"), .ts = 1000 + i, .value = CS_STR("v") },
			{ .op = CS_SET_CELL, .family = "g", .qualifier = CS_STR(""), .ts = i, .value = CS_STR("") },
		};
		snprintf(row, sizeof(row), "r#%d", i % 2);
		FUZZ_CHECK(cs_row_mutate(txn, "base", CS_STR(row), m, 2) == 0);
	}
	FUZZ_CHECK(cs_txn_commit(txn) == 0);
	dump_tables(base, 1, &b);
	base_dump = b.p;
	base_n = b.n;
}

static void no_problem(void *ctx, const cs_problem *p)
{
	(void)ctx;
	fprintf(stderr, "verify: %s\n", p->what);
	FUZZ_CHECK(!"cs_verify() found a problem");
}

/* The store holds "base", unchanged, and nothing else: no table, no staging cell. */
static void check_unchanged(void)
{
	static const char *const base[] = { "base" };
	struct buf b = { 0 };
	cs_verify_stats vs;
	char **names;
	size_t n;
	cs_txn *txn = begin(CS_TXN_RDONLY);

	FUZZ_CHECK(cs_table_list(txn, &names, &n) == 0);
	FUZZ_CHECK(n == 1 && !strcmp(names[0], "base"));
	cs_strv_free(names, n);
	FUZZ_CHECK(cs_verify(txn, no_problem, NULL, &vs) == 0);
	FUZZ_CHECK(vs.problems == 0 && vs.orphans == 0 && vs.tables == 1);
	cs_txn_abort(txn);
	dump_tables(base, 1, &b);
	FUZZ_CHECK(b.n == base_n && !memcmp(b.p, base_dump, base_n));
	free(b.p);
}

/* Build the framed input into a dump with its checksum chain. */
static void frame(struct fuzz_in *in, struct buf *out)
{
	uint64_t chain;
	size_t n;
	const uint8_t *hdr = fuzz_take(in, DF_HDR, &n);
	void *z = NULL;
	size_t zcap = 0;

	buf_put(out, hdr, n);
	if (n < DF_HDR)
		return;
	chain = hash_xxh64(hdr, DF_HDR, 0);
	while (in->n) {
		uint8_t h[DF_FRAME_HDR], sum[DF_FRAME_SUM];
		const uint8_t *fh = fuzz_take(in, DF_FRAME_HDR, &n), *pay;
		size_t pn, start = out->n;

		if (n < DF_FRAME_HDR) {
			buf_put(out, fh, n);
			break;
		}
		memcpy(h, fh, DF_FRAME_HDR);
		pay = fuzz_take(in, df_get32(h + 4), &pn);
		if (h[1] == 2) {
			long c = codec_zpack(pay, pn, &z, &zcap, 0);
			FUZZ_CHECK(c >= 0);
			h[1] = c > 0 ? DF_ZSTD : DF_RAW;
			df_put32(h + 4, c > 0 ? (uint32_t)c : (uint32_t)pn);
			df_put32(h + 8, (uint32_t)pn);
			if (c > 0) {
				pay = z;
				pn = (size_t)c;
			}
		} else {
			df_put32(h + 4, (uint32_t)pn);
			if (h[1] == DF_RAW)
				df_put32(h + 8, (uint32_t)pn);
		}
		buf_put(out, h, DF_FRAME_HDR);
		buf_put(out, pay, pn);
		chain = hash_xxh64(out->p + start, out->n - start, chain);
		df_put64(sum, chain);
		buf_put(out, sum, DF_FRAME_SUM);
	}
	free(z);
}

/* A restore succeeded: its tables dump and restore again to the same bytes; then remove them. */
static void check_restored(const cs_restore_result *res)
{
	struct buf d1 = { 0 }, d2 = { 0 };
	const char **mine;
	char **names;
	size_t n, k = 0;
	cs_restore_result res2;
	cs_restore_opts o = { .overwrite = true };
	struct src s;
	cs_txn *txn = begin(CS_TXN_RDONLY);

	FUZZ_CHECK(cs_table_list(txn, &names, &n) == 0);
	cs_txn_abort(txn);
	if (!(mine = calloc(n, sizeof(*mine))))
		abort();
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], "base"))
			mine[k++] = names[i];
	FUZZ_CHECK(k == res->stats.tables);
	if (!k)
		goto out; /* a dump of no table: cs_dump() of no names would dump every table */
	dump_tables(mine, k, &d1);
	s = (struct src){ d1.p, d1.n, 0, SIZE_MAX };
	FUZZ_CHECK(cs_restore(st, src_read, &s, &o, &res2) == 0);
	dump_tables(mine, k, &d2);
	FUZZ_CHECK(d1.n == d2.n && !memcmp(d1.p, d2.p, d1.n));
	txn = begin(0);
	for (size_t i = 0; i < k; i++)
		FUZZ_CHECK(cs_table_delete(txn, mine[i]) == 0);
	FUZZ_CHECK(cs_gc(txn, NULL, NULL) == 0);
	FUZZ_CHECK(cs_txn_commit(txn) == 0);
out:
	free(mine);
	cs_strv_free(names, n);
	free(d1.p);
	free(d2.p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t chunks[8] = { SIZE_MAX, 1, 2, 3, 7, 12, 64, 4096 };
	struct fuzz_in in = { data, size };
	uint8_t flags = fuzz_u8(&in);
	cs_restore_opts o = { .batch_bytes = flags >> 5 ? 16u << (flags >> 5) : 0 };
	cs_restore_result res;
	struct buf framed = { 0 };
	struct src s = { in.p, in.n, 0, chunks[(flags >> 1) & 7] };
	int rc;

	if (!st)
		open_store();
	if (flags & 1) {
		frame(&in, &framed);
		s.p = framed.p;
		s.n = framed.n;
	}
	rc = cs_restore(st, src_read, &s, &o, &res);
	if (rc == -EBADMSG || rc == -ENOTSUP)
		FUZZ_CHECK(res.why[0] && !strchr(res.why, '\n'));
	if (rc == -EEXIST)
		FUZZ_CHECK(!strcmp(res.table, "base"));
	if (rc && rc != -EBADMSG && rc != -ENOTSUP && rc != -EEXIST && rc != -EFBIG)
		fprintf(stderr, "cs_restore: unexpected error %d (%s)\n", rc, strerror(-rc));
	FUZZ_CHECK(rc == 0 || rc == -EBADMSG || rc == -ENOTSUP || rc == -EEXIST || rc == -EFBIG);
	if (rc == 0)
		check_restored(&res);
	check_unchanged();
	free(framed.p);
	return 0;
}
