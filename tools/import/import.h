/* import.h — what cmd_import.c (the command, CSV, JSON lines, the two passes, batches) and import_ddb.c
 * (DynamoDB exports) share. Internal to cellctl.
 *
 * An input format is one pass function reading lines from a csv_reader: it calls imp_cell() for every
 * cell of a line and imp_line_done() after the line. In the first pass (im->writing false) imp_cell()
 * only checks and counts; in the second it writes. A pass returns CC_OK or CC_FAIL (message printed).
 */
#ifndef CELLFS_IMPORT_H
#define CELLFS_IMPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cellctl.h"
#include "csv.h"
#include "gzin.h"
#include "progress.h"

struct column {
	const char *family; /* borrowed from the table info or the column-family= argument */
	const char *q;      /* borrowed from the header record's copy */
	size_t qn;
};

enum imp_format { IMP_CSV, IMP_JSONL, IMP_DYNAMODB };

struct imp {
	struct cellctl *cc;
	const char *table;
	const char *name;      /* the input in messages: the quoted path, or "standard input" (owned) */
	int fd;
	off_t start, size;     /* where the input starts in FD, and its size from there */
	bool gzip;             /* the input starts with gzip's magic bytes: every pass reads through gz */
	gzin *gz;              /* this pass's decompressor, or NULL */
	enum imp_format format;
	bool value_ts;
	const char *colfam;
	cs_table_info *info;
	uint64_t max_value;
	int64_t now;
	/* CSV header */
	struct column *cols;
	size_t ncols, nfields;
	char *qbuf;            /* the qualifier row's bytes */
	/* DynamoDB (import_ddb.c) */
	const char *pk, *sk;   /* key=PK[#SK]: the key attributes' names (sk NULL: none) */
	const char *ddb_family; /* the family of scalars and lists (column-family=, default "cf") */
	int64_t ddb_ts;        /* the cells' timestamp (-1: the time of the import); list element i gets it + i ms */
	char **newfams;        /* families the table lacks, to be created before the first batch (sorted) */
	size_t nnew;
	/* the pass */
	bool writing;
	uint64_t cells;        /* cells so far in this pass */
	uint64_t total;        /* cells found by the first pass */
	cs_txn *txn;
	cs_bulk *bulk;
	uint64_t batch_cells, batch_bytes, batch_lines;
	uint64_t max_lines;    /* batch-size=N: at most N lines a batch (0: no limit but cells and bytes) */
	uint64_t committed, committed_line;
	uint64_t last_line;    /* the last line read in this pass */
	bool report;           /* --batches: a line on stderr after each batch is committed and synced */
	bool families_made;    /* newfams created (the first batch does it) */
	struct progress prog;
};

/* One cell of input line LINE (FIELD: its 1-based CSV field, 0 otherwise): count it after checking its
 * value's size (first pass), or write it (second). FAMILY must outlive the import (the table info's or
 * imp_family()'s). Prints the error. */
int imp_cell(struct imp *im, uint64_t line, size_t field, cs_bytes row, const char *family, cs_bytes q,
	     int64_t ts, cs_bytes value);

/* Line LINE is done: commit the batch if it is full. Prints the error. */
int imp_line_done(struct imp *im, uint64_t line, const csv_reader *r);

/* The table's family named by F (N bytes), NULL if it has none. */
const char *imp_family_name(const struct imp *im, const char *f, size_t n);

/* The value type name of family FAM if it is an aggregate family (import refuses those), else NULL. */
const char *imp_family_aggregate(const struct imp *im, const char *fam);

/* Whether line L (N bytes) is only blanks (spaces, tabs, CR, LF): such lines are skipped. */
bool imp_blank(const char *l, size_t n);

/* A failed read of the input by R (RC from csv_read_line()/csv_read()) in words: a damaged gzip stream
 * named with the line it stopped in. Returns CC_FAIL. */
int imp_read_failed(const struct imp *im, const csv_reader *r, int rc);

/* DynamoDB exports (import_ddb.c). imp_ddb_args(): format=dynamodb's arguments (KEY, COLFAM, TS: the
 * values of key=, column-family=, timestamp=, each NULL if not given; KEY is cut in place) into IM.
 * imp_ddb_setup(): once the table's info is read, the family of scalars (created by the import if the
 * table lacks it). imp_ddb_pass(): one pass. Each prints its error and returns CC_OK or CC_FAIL. */
int imp_ddb_args(struct imp *im, const char *key, const char *colfam, const char *ts);
int imp_ddb_setup(struct imp *im);
int imp_ddb_pass(struct imp *im, csv_reader *r);

#endif
