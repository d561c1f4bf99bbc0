/* schema.h — a table's schema as the store's modules see it (schema.c): its families with their GC
 * policies and value types, its dropped row ranges, its id. A transaction parses each table's record once
 * and keeps it until it ends; the store keeps the parsed tables of ended transactions as spares, reused
 * while the record is unchanged. Internal: fs/ and tools/ use cellstore.h. */
#ifndef CELLFS_SCHEMA_H
#define CELLFS_SCHEMA_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cellstore.h"
#include "lm_types.h"
#include "gcpolicy.h"

/* A dropped row range [start, end) of a table: hides cells written before it (seq < its seq). "dirty"
 * once a row inside it has been written again, so reads can no longer skip it in one seek. */
struct sch_drop {
	uint8_t *start, *end;
	size_t startn, endn;
	bool has_end;
	bool dirty;
	uint64_t seq;
	uint8_t *xkey; /* its record's key */
	size_t xkeyn;
};

struct sch_family {
	char *name;
	char *gc;     /* canonical policy text */
	gcp *policy;
	uint64_t since; /* cells written before this sequence belong to an earlier family of that name */
	cs_value_type type; /* CS_TYPE_BYTES, or an aggregate type (aggregate.h) */
};

/* A table's schema, cached per transaction (borrowed by the modules until the transaction ends). */
struct sch_table {
	struct sch_table *next;
	char *name;
	uint32_t id;
	char delim;
	int64_t created;           /* µs since the epoch */
	bool heat_off;             /* the Key Visualizer records nothing of it (heat.h) */
	uint32_t ndrops;
	size_t nfam;
	struct sch_family *fam;    /* sorted by name */
	bool drops_loaded;
	size_t ndrop_list;
	struct sch_drop *drops;    /* sorted by start */
	uint8_t *rec;              /* the record it was parsed from, NULL once changed (sch_table_put) */
	size_t recn;
};

/* The parsed tables a store keeps between transactions (embedded in struct lm_store). */
struct sch_spares {
	pthread_mutex_t lock;
	struct sch_table *list;
	size_t n;
};
void sch_spares_init(struct sch_spares *sp);
void sch_spares_release(struct sch_spares *sp);

/* *OUT = the schema of table NAME, valid until TXN ends. Errors: -ENOENT (no such table, or a name no
 * table can have), -EIO (a damaged record), -ENOMEM, a read's errors. */
int sch_table_get(lm_txn *txn, const char *name, struct sch_table **out);

/* The family NAME of T, or NULL. */
struct sch_family *sch_family_find(const struct sch_table *t, const char *name);

/* For a change to family FAMILY of TABLE in the write transaction TXN: *T and *F, valid until TXN ends.
 * Errors: -EROFS or TXN's earlier error, -ENOENT (no such table or family); a read's errors fail TXN. */
int sch_family_get(lm_txn *txn, const char *table, const char *family, struct sch_table **t,
		   struct sch_family **f);

/* Load T's dropped ranges into t->drops (once per transaction). Errors: -EIO, -ENOMEM, a read's. */
int sch_drops_load(lm_txn *txn, struct sch_table *t);

/* Write T's record (after the caller changed T). A failure fails TXN. */
int sch_table_put(lm_txn *txn, struct sch_table *t);

/* Allocate a table id (never reused). A failure fails TXN: -ENOSPC (ids exhausted), -EIO, a write's. */
int sch_new_table_id(lm_txn *txn, uint32_t *id);

/* Parse policy GC (NULL: "never") into *P and its canonical text *CANON; the caller frees both (gcp_free,
 * free). Errors: -EINVAL (bad syntax), -ENOMEM. */
int sch_policy_parse(const char *gc, gcp **p, char **canon);

/* Give family F of T the policy P (text CANON), taking ownership of both, and write T's record. A
 * failure fails TXN. */
int sch_family_set_policy(lm_txn *txn, struct sch_table *t, struct sch_family *f, gcp *p, char *canon);

/* End TXN's use of its parsed tables. KEEP (a read-only transaction, or a committed one): those still as
 * read go to the store's spares, for sch_table_get() to reuse when it reads the same record again. */
void sch_cache_release(lm_txn *txn, bool keep);

#endif
