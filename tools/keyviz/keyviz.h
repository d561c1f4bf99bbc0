/* keyviz.h — the key-design report of cellctl keyviz: one pass over a table's rows (keys only) gathers,
 * per row-key segment depth, how many distinct values there are and what they look like (kzclass.h),
 * and the sizes of rows and cells and where the newest writes land; kz_finish() then applies the rules
 * of Google's schema guides and lists what breaks them (findings), each with its numbers and examples.
 *
 * Memory is bounded whatever the table's size: per depth, distinct values are counted exactly up to
 * KZ_EXACT_CAP, then estimated (HyperLogLog, about 1.6% error); a few samples, the newest
 * KZ_WINDOW_CAP cells' positions, and up to KZ_EXAMPLES examples per finding are kept. Nothing here
 * prints or opens the store: the caller feeds rows from a scan (cs_scan_open with keys_only) and,
 * optionally, the table's statistics.
 */
#ifndef CELLFS_KEYVIZ_H
#define CELLFS_KEYVIZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cellstore.h"
#include "kzclass.h"

#define KZ_MAX_DEPTH 16        /* segments deeper than this are not analysed (counted in deeper_rows) */
#define KZ_EXACT_CAP 16384     /* distinct values per depth counted exactly; beyond, estimated */
#define KZ_WINDOW_CAP 10000    /* the newest cells whose positions are kept */
#define KZ_SAMPLES 3           /* distinct values kept per depth, as examples */
#define KZ_EXAMPLES 3          /* example keys per finding */

/* The guide's numbers (seeds.md, "Limits"): a row under 100 MB (hard limit 256 MB), a cell under 10 MB,
 * families under about 100. Sizes are MiB, as the store's value limit is. */
#define KZ_DEFAULT_ROW_SIZE (100ull << 20)
#define KZ_DEFAULT_ROW_LIMIT (256ull << 20)
#define KZ_DEFAULT_CELL_SIZE (10ull << 20)
#define KZ_DEFAULT_MAX_FAMILIES 100u

struct kz_opts {
	char delim;                /* the table's row-key delimiter */
	uint64_t row_size;         /* rows above this many value bytes are a finding */
	uint64_t row_limit;        /* rows at 80% of this or more are a finding (near the hard limit) */
	uint64_t cell_size;        /* cells above this are a finding */
	unsigned max_families;     /* more families than this are a finding */
	const cs_table_info *info; /* the table's schema (families, GC policies); borrowed until kz_free() */
};

/* One depth of the keys: segment D of every row key with more than D segments. */
struct kz_depth {
	uint64_t rows;                  /* rows whose key has this segment */
	uint64_t distinct;              /* distinct values (exact when distinct_exact) */
	bool distinct_exact;
	uint64_t kinds[KZC_NKINDS];     /* values of each kind */
	enum kzc_kind kind;             /* the kind of at least 90% of the values, else KZC_NKINDS (mixed) */
	const char *unit;               /* for a timestamp kind: the unit of the first one ("epoch ms") */
	char detail[96];                /* what the values look like, in words ("hash: 32 hex digits") */
	size_t min_len, max_len;        /* segment lengths in bytes */
	size_t nsamples;
	cs_bytes samples[KZ_SAMPLES];   /* the first distinct values seen (owned by the kz) */
	/* set by kz_finish() */
	bool hash, sequence, salt, unpadded;
};

/* A finding: a rule of the guides the table breaks. */
enum kz_rule {
	KZ_TIMESTAMP_FIRST,  /* keys start with a timestamp: new rows all land at the end */
	KZ_SEQUENCE_FIRST,   /* keys start with a sequential number: the same */
	KZ_HASHED_PREFIX,    /* keys start with a hash: no useful order, range reads become full scans */
	KZ_SALTED_PREFIX,    /* a small computed prefix: one scan per salt value to read a range */
	KZ_UNPADDED_NUMBERS, /* numbers of varying width: "10" sorts before "9" */
	KZ_REVERSED_TS,      /* Long.MAX - ts: newest first; a reversed scan does it with plain timestamps */
	KZ_ROW_SIZE,         /* rows over the recommended size */
	KZ_ROW_LIMIT,        /* rows near the hard limit */
	KZ_CELL_SIZE,        /* cells over the recommended size */
	KZ_FAMILIES,         /* too many column families */
	KZ_VERSIONS,         /* columns written more versions than their GC policy keeps */
	KZ_NRULES
};

/* The rule's stable name (JSON "rule", the text report's heading): "timestamp-first", "sequence-first",
 * "hashed-prefix", "salted-prefix", "unpadded-numbers", "reversed-timestamp", "row-size", "row-limit",
 * "cell-size", "families", "versions". Static. */
const char *kz_rule_name(enum kz_rule r);

#define KZ_MAX_NUMBERS 6
struct kz_number {
	const char *name; /* static: "rows", "newest_cells", ... */
	double value;     /* a count (exact up to 2^53) or a ratio */
};

struct kz_example {
	cs_bytes row;       /* a row key (owned by the kz) */
	char *column;       /* "family:qualifier" (qualifier Go-quoted when not printable) or NULL; owned */
	char *note;         /* what about this row, in words ("sorts before \"user#9\"", "12 MiB") or NULL */
};

struct kz_finding {
	enum kz_rule rule;
	int depth;                          /* the key depth it is about, or -1 */
	char *message;                      /* one sentence with the numbers, for people (owned) */
	size_t nnumbers;
	struct kz_number numbers[KZ_MAX_NUMBERS]; /* the same numbers, for machines */
	size_t nexamples;
	struct kz_example examples[KZ_EXAMPLES];
};

/* Where the newest writes land: of the WINDOW newest cells (by timestamp; ties broken by a hash of the
 * row's position, so equal timestamps say nothing), IN_LAST are in the last REGION rows of the key order
 * and IN_FIRST in the first REGION rows. WINDOW is the newest 1% of the cells and REGION 1% of the rows; in a table of
 * fewer than 1000 cells both are widened to the same share, holding 10 cells (at most a quarter of
 * them). A table without a hotspot has about WINDOW * REGION / ROWS of them there. */
struct kz_writes {
	uint64_t window, region, in_last, in_first;
	int64_t newest_ts, window_oldest_ts;
};

struct kz_report {
	uint64_t rows, cells, value_bytes;
	uint64_t deeper_rows;             /* rows with more than KZ_MAX_DEPTH segments */
	size_t ndepths;
	struct kz_depth depths[KZ_MAX_DEPTH];
	struct kz_writes writes;
	bool have_stats;                  /* kz_add_stats() was called: the versions rule was applied */
	size_t nfindings;
	struct kz_finding *findings;      /* in enum kz_rule order, then by depth */
};

struct kz;

/* A new analysis with OPTS (copied; OPTS->info borrowed). Errors: -ENOMEM. Free with kz_free(). */
int kz_new(const struct kz_opts *opts, struct kz **out);

/* Feed the next row of a forward scan in key order (keys_only is enough: value_len gives the sizes).
 * All its cells (every version) should be there. Errors: -ENOMEM (the analysis is then unusable). */
int kz_add_row(struct kz *z, const cs_row *row);

/* The table's statistics (cs_table_stats_get()), for the versions rule: how many cells each family's GC
 * policy has collected and the most versions a column held. S is borrowed for the call. */
void kz_add_stats(struct kz *z, const cs_table_stats *s);

/* Whether the versions rule needs kz_add_stats(): some family's GC policy limits versions. */
bool kz_wants_stats(const struct kz *z);

/* Decide the depth kinds and findings (kzrules.c). Call once, after the last row. The report lives in
 * Z (borrowed until kz_free()). Errors: -ENOMEM, -EINVAL (called before). */
int kz_finish(struct kz *z, const struct kz_report **out);

void kz_free(struct kz *z); /* accepts NULL */

#endif
