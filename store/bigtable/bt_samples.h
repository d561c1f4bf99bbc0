/* bt_samples.h — a table's row-key samples (Bigtable's SampleRowKeys) as a list: how many bytes a key range
 * holds at most, before reading it, and where to split it. Pure: no I/O and no gRPC, so that its test
 * builds everywhere (suite unit). Getting and caching a table's samples: bt_internal.h, "bt_samples.c".
 *
 * Invariants: a list is immutable once made and shared by reference (atomic count), so any number of
 * threads may read it; keys are copies, sorted (bytewise, a prefix first), without duplicates, and their
 * offsets never go down along them. */
#ifndef CELLFS_BT_SAMPLES_H
#define CELLFS_BT_SAMPLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Allowance for the bytes after the last sample when the server sent no end marker (the emulator): at
 * least this much (see bt_samples_bound). */
#define BT_SAMPLES_TAIL_MIN (64u << 10)
/* The most samples a list holds (a server sending more is -EIO), and the most bytes of their keys. */
#define BT_SAMPLES_MAX (1u << 20)
#define BT_SAMPLES_MAX_KEYS (64u << 20)

struct bt_samples;

/* One sample as the server sends it: row KEY (KEYN bytes; 0: the end marker, "end of table") and
 * OFFSET, the approximate bytes of all rows before KEY (of the whole table for the end marker). */
struct bt_sample {
	const void *key;
	size_t keyn;
	int64_t offset;
};

/* bt_samples_new — a list made of the N samples at IN, in any order: keys copied and sorted; an empty
 * key is the end marker (several: the largest offset); of equal keys the smallest offset is kept; a
 * negative offset counts as 0 and one smaller than an earlier key's as that one (so offsets never go
 * down). FETCHED_MS is kept for the cache (bt_samples_fetched_ms). Returns 0 and *OUT (one reference: give
 * it back with bt_samples_put), or -ENOMEM, or -EIO (more than BT_SAMPLES_MAX samples or
 * BT_SAMPLES_MAX_KEYS bytes of keys: no real table has that many). */
int bt_samples_new(const struct bt_sample *in, size_t n, int64_t fetched_ms, struct bt_samples **out);

/* One more reference to S (not NULL); returns S. Thread-safe. */
struct bt_samples *bt_samples_ref(struct bt_samples *s);
/* Give back a reference; the last frees S. Accepts NULL. Thread-safe. */
void bt_samples_put(struct bt_samples *s);

/* bt_samples_bound — an upper bound of the bytes stored in rows [LO, HI) of the sampled table: HI NULL (or
 * HIN 0, as an empty end key in Bigtable's RowRange) means to the end of the table, LON 0 from its start. It is the offset of the first sample at or after
 * HI less the offset of the last sample at or before LO (0 if none), since a sample's offset counts the
 * rows before it. HI beyond every sample: the end marker's offset (the table's size) when the server sent
 * one (real Bigtable does); otherwise (the emulator sends the last row as its last sample, its offset
 * without that row's own bytes) the last sample's offset plus an allowance for what follows it: the
 * largest gap between two neighbouring samples (the first counted from 0), at least BT_SAMPLES_TAIL_MIN.
 * The largest gap rather than the mean because the emulator samples rows at random (about 1 in 100):
 * gaps vary, the tail is then one row, and a gap is many; an estimate too high only costs a range read
 * level by level instead of whole. An empty list (an empty table), or HI <= LO: 0. Pure: no I/O. Returns
 * 0 and *BYTES.
 * The bytes are as the server counts them: real Bigtable its storage (compressed; keys included), the
 * emulator the values alone (bttest's row size: no keys, families or qualifiers). A caller weighing a
 * range against memory adds what its own copy costs per cell. */
int bt_samples_bound(const struct bt_samples *s, const void *lo, size_t lon, const void *hi, size_t hin,
		     uint64_t *bytes);

/* The samples, in key order, for splitting a range (the end marker is not among them: see
 * bt_samples_size): their number; key I (*N its length; valid while the caller holds S); its offset. */
size_t bt_samples_count(const struct bt_samples *s);
const uint8_t *bt_samples_key(const struct bt_samples *s, size_t i, size_t *n);
uint64_t bt_samples_offset(const struct bt_samples *s, size_t i);
/* Whether the server sent the end marker, and the table's size by it (0 without one). */
bool bt_samples_has_end(const struct bt_samples *s);
uint64_t bt_samples_size(const struct bt_samples *s);
/* When S was fetched (monotonic ms, as given to bt_samples_new). */
int64_t bt_samples_fetched_ms(const struct bt_samples *s);

#endif
