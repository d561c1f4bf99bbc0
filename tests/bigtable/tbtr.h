/* tbtr.h — what test_btr.c's tests build requests and read replies with (tbtr.c): a conn to the test
 * emulator, resource names and routing headers, tables made and read through the Admin API, cells set
 * and read back whole. cmocka asserts inside: call from a test only. */
#ifndef CELLFS_TBTR_H
#define CELLFS_TBTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "admin.pb-c.h"
#include "bigtable.pb-c.h"
#include "btr.h"
#include "temu.h"

/* The generated names are long; the tests use these. */
typedef Google__Bigtable__Admin__V2__Table Table;
typedef Google__Bigtable__Admin__V2__ColumnFamily ColumnFamily;
typedef Google__Bigtable__Admin__V2__GcRule GcRule;
typedef Google__Bigtable__Admin__V2__Table__ColumnFamiliesEntry FamilyEntry;
typedef Google__Bigtable__V2__Mutation Mutation;
typedef Google__Bigtable__V2__ReadRowsResponse ReadRowsResponse;

#define DATA(m) "/google.bigtable.v2.Bigtable/" m
#define ADMIN(m) "/google.bigtable.admin.v2.BigtableTableAdmin/" m

struct cell {
	char row[64], fam[32], qual[64];
	int64_t ts;
	uint8_t *val;
	size_t len;
	bool committed;
};

struct cells {
	struct cell c[256];
	int n;
	bool open; /* the last cell still takes value chunks */
};

/* A conn to the emulator; the test's env says where it is when it connects. */
btr_conn *tb_conn_to(const struct temu *e);

/* projects/proj/instances/inst/tables/TABLE (a thread-local buffer). */
char *tb_table_path(btr_conn *c, const char *table);

/* btr_routing's header for KEY=VALUE (a thread-local buffer). */
const char *tb_route(btr_conn *c, int api, const char *key, const char *value);

/* P (N bytes) or S as a bytes field, borrowed. */
ProtobufCBinaryData tb_bin(const void *p, size_t n);
ProtobufCBinaryData tb_str(const char *s);

/* CreateTable TABLE with NFAM families: NAMES[i] keeps VERSIONS[i] versions; AGG[i] (if AGG) makes it an
 * intsum family. Returns btr_unary's result; ST receives the status. */
int tb_create_table(btr_conn *c, const char *table, int nfam, const char *const *names,
		    const int *versions, const bool *agg, btr_status *st);

/* GetTable with the schema view; NULL and *ERR on an error. */
Table *tb_get_table(btr_conn *c, const char *table, int *err, btr_status *st);

/* T's family NAME, or NULL. */
const ColumnFamily *tb_family_of(const Table *t, const char *name);

/* MutateRow ROW: SetCell FAM:QUAL@TS = VALUE (LEN bytes). */
int tb_set_cell(btr_conn *c, const char *table, const char *row, const char *fam, const char *qual,
		int64_t ts, const void *value, size_t len, btr_status *st);

/* Frees CS's values and CS. */
void tb_cells_free(struct cells *cs);
/* Adds chunk CH (a new cell, or more of the last one's value) to CS. */
void tb_cells_add(struct cells *cs, const Google__Bigtable__V2__ReadRowsResponse__CellChunk *ch);

/* ReadRows of TABLE (REQ filled by the caller or NULL for all rows): returns the stream's end (0 or an
 * errno) and the cells in *OUT (caller frees with tb_cells_free). */
int tb_read_rows(btr_conn *c, const char *table, Google__Bigtable__V2__ReadRowsRequest *req,
		     struct cells **out, btr_status *st);

/* CS's cells in row, family, qualifier, newest-first order. */
void tb_cells_sort(struct cells *cs);
/* C is ROW FAM:QUAL@TS = VAL. */
void tb_assert_cell(const struct cell *c, const char *row, const char *fam, const char *qual, int64_t ts,
			const char *val);

#endif
