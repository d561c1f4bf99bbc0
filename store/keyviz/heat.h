/* heat.h — the Key Visualizer's counts (heat.c): per table and minute, reads and writes in at most
 * CS_HEAT_RANGES ranges of row keys in key order (cellstore.h, "Key Visualizer"). Counted in memory per
 * store handle (struct heat, shared by its threads), a write transaction's writes apart until it commits
 * (struct heat_pend), and written into 'M' records ("Mheat" table 0x00 minute) by the LMDB store's
 * commits (lmdb/lm_heat.c). Internal: fs/ and tools/ use cellstore.h.
 *
 * Invariants: a histogram's ranges are sorted, disjoint intervals [key, last] (last < the next's key),
 * at most CS_HEAT_RANGES; a count is always in the range holding its key; adding or merging never
 * changes the sum of the counts. */
#ifndef CELLFS_HEAT_H
#define CELLFS_HEAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cellstore.h"
#include "kv.h"

/* A bounded, order-preserving histogram of row keys (one slot spare, for an insert before a merge). */
struct heat_hist {
	size_t n;
	cs_heat_range r[CS_HEAT_RANGES + 1];
};

/* A histogram as records hold it (heat.c's header comment): at most HEAT_REC_MAX bytes into OUT, its
 * length returned; decoded, with every invariant checked (-EIO if one fails, or the bytes are short). */
#define HEAT_REC_MAX (1 + 10 + CS_HEAT_RANGES * (1 + CS_HEAT_KEY + 2 + CS_HEAT_KEY + 10 + 10))
size_t heat_hist_encode(uint8_t *out, const struct heat_hist *h);
int heat_hist_decode(const uint8_t *v, size_t vn, struct heat_hist *h);

/* Count READS and WRITES for row key KEY (N bytes; only its first CS_HEAT_KEY count) in H. */
void heat_hist_add(struct heat_hist *h, const void *key, size_t n, uint64_t reads, uint64_t writes);
/* Count range R's counts for keys in [R's key, R's last] in H (ranges of H it meets become one). */
void heat_hist_add_range(struct heat_hist *h, const cs_heat_range *r);
/* Add every range of FROM to INTO. */
void heat_hist_merge(struct heat_hist *into, const struct heat_hist *from);

/* A store handle's counts not yet written. */
struct heat;
/* Errors: -ENOMEM. Free with heat_free() (accepts NULL). */
int heat_new(struct heat **out);
void heat_free(struct heat *h);
void heat_set_clock(struct heat *h, int64_t (*now_us)(void *ctx), void *ctx);
/* The current minute by H's clock. */
int64_t heat_minute(struct heat *h);
/* Whether H holds counts not yet written. */
bool heat_pending(struct heat *h);
/* How many counts H had to drop (its pending minutes full, or out of memory). */
uint64_t heat_lost(struct heat *h);

/* Drop H's pending counts of TABLE (its keyviz turned off). */
void heat_forget(struct heat *h, const char *table);

/* What one scan read, counted into the handle when it ends (one lock per scan, not per row): rows with
 * one bound counted together, in the scan's order; past RUN_MAX bounds, each two neighbours become one
 * (a bounded, order-preserving, exact count, at a constant cost per row). TABLE is copied. */
#define HEAT_RUN_MAX (2 * CS_HEAT_RANGES)
struct heat_run_ent {
	uint8_t key[CS_HEAT_KEY], last[CS_HEAT_KEY]; /* rows from key to last */
	size_t keyn, lastn;
	uint64_t n;
};
struct heat_run {
	char table[CS_MAX_TABLE + 1];
	bool reversed;             /* the scan's order: keys descending */
	size_t n;                  /* entries in use */
	struct heat_run_ent one;   /* the entry, while there is one */
	struct heat_run_ent *ents; /* HEAT_RUN_MAX entries, once there were two (NULL: none, or no memory) */
};
void heat_run_start(struct heat_run *r, const char *table, bool reversed);
void heat_run_row(struct heat *h, struct heat_run *r, const void *key, size_t n);
/* Count what R holds into H (R stays usable). */
void heat_run_end(struct heat *h, struct heat_run *r);
/* heat_run_end(), and free R's memory. */
void heat_run_release(struct heat *h, struct heat_run *r);

/* A write transaction's writes, until it commits (embedded in struct cs_txn, zeroed): the run of its
 * last row inline (most transactions write one row: no allocation), the rest in a histogram per table. */
struct heat_pend {
	char table[CS_MAX_TABLE + 1];
	uint8_t key[CS_HEAT_KEY];
	size_t keyn;
	uint64_t n;                /* writes of that row (0: none inline) */
	struct heat_item *items;
	bool force;                /* its commit writes every count the handle holds (cs_heat_flush()) */
};
void heat_pend_note(struct heat *h, struct heat_pend *p, const char *table, const void *key, size_t n);
void heat_pend_release(struct heat_pend *p);

/* What a commit writes: the handle's pending minutes, taken out of it while the commit runs. */
struct heat_item {
	struct heat_item *next;
	char table[CS_MAX_TABLE + 1];
	int64_t minute;
	bool from_txn; /* a transaction's writes: dropped, not given back, if its commit fails */
	struct heat_hist h;
};

/* Whether a write transaction committing with pending writes P should write the counts: there are
 * some, and P is forced, or H has written none yet, or not in this minute. */
bool heat_due(struct heat *h, const struct heat_pend *p);
/* Take H's pending minutes out of it, and P's writes (as of this minute) with them: the list to write.
 * P is emptied. Never fails (without memory, P's writes are dropped and counted lost). */
struct heat_item *heat_take(struct heat *h, struct heat_pend *p);
/* After the commit: written (OK: the list is freed, and H's minute of writing noted), or not (given back
 * to H, but for the transaction's own writes). */
void heat_taken_done(struct heat *h, struct heat_item *items, bool ok);
/* A commit that did not write the counts: P's writes go into H's current minute. P is emptied. */
void heat_pend_commit(struct heat *h, struct heat_pend *p);

/* Add HIST to the record of TABLE's minute MINUTE in KV (a record that does not decode is replaced),
 * unless MINUTE is no longer kept at NOW (a minute), and drop TABLE's records no longer kept.
 * Errors: -ENOSPC, -EIO, -ENOMEM, as kv_put's. */
int heat_write(kv_txn *kv, const char *table, int64_t minute, const struct heat_hist *hist, int64_t now);
/* For cs_gc(): delete the records of names not among the N tables NAMES (sorted), and those no longer
 * kept at NOW (a minute). Errors as kv_del's. */
int heat_gc(kv_txn *kv, char *const *names, size_t n, int64_t now);
/* TABLE's records of minutes FROM and later, oldest first. Errors: -EIO (a record does not decode),
 * -ENOMEM. */
int heat_read(kv_txn *kv, const char *table, int64_t from, cs_heat **out);

/* Add the counts of ITEMS (of one table) to H, those of minutes FROM and later still kept at NOW (a
 * minute), keeping H's order. Errors: -ENOMEM (H holds what was added before). */
int heat_add_items(cs_heat *h, const struct heat_item *items, int64_t from, int64_t now);

/* For cs_verify(): whether key K (KN bytes) is a heat record's key; if so, *WHAT gets a problem with it
 * and its value V (VN bytes), or NULL. */
bool heat_check_record(const uint8_t *k, size_t kn, const uint8_t *v, size_t vn, const char **what);

#endif
