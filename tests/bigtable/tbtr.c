/* tbtr.c — test_btr.c's request builders and reply readers (tbtr.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tbtr.h"

/* A conn to the emulator; the test's env says where it is when it connects. */
btr_conn *tb_conn_to(const struct temu *e)
{
	setenv("BIGTABLE_EMULATOR_HOST", e->addr, 1);
	btr_conn *c = NULL;
	assert_int_equal(btr_connect("proj", "inst", NULL, &c), 0);
	return c;
}

/* ---- building requests */

char *tb_table_path(btr_conn *c, const char *table)
{
	static _Thread_local char buf[BTR_NAME_MAX];
	assert_int_equal(btr_table_name(c, table, buf, sizeof buf), 0);
	return buf;
}

const char *tb_route(btr_conn *c, int api, const char *key, const char *value)
{
	static _Thread_local char buf[BTR_NAME_MAX];
	assert_int_equal(btr_routing(c, api, key, value, buf, sizeof buf), 0);
	return buf;
}

ProtobufCBinaryData tb_bin(const void *p, size_t n)
{
	return (ProtobufCBinaryData){ .len = n, .data = (uint8_t *)(uintptr_t)p };
}

ProtobufCBinaryData tb_str(const char *s)
{
	return tb_bin(s, strlen(s));
}

/* CreateTable TABLE with NFAM families: NAMES[i] keeps VERSIONS[i] versions; AGG[i] (if AGG) makes it an
 * intsum family. Returns btr_unary's result; ST receives the status. */
int tb_create_table(btr_conn *c, const char *table, int nfam, const char *const *names,
			const int *versions, const bool *agg, btr_status *st)
{
	Google__Bigtable__Admin__V2__CreateTableRequest req =
		GOOGLE__BIGTABLE__ADMIN__V2__CREATE_TABLE_REQUEST__INIT;
	Table t = GOOGLE__BIGTABLE__ADMIN__V2__TABLE__INIT;
	FamilyEntry ent[8], *entp[8];
	ColumnFamily cf[8];
	GcRule gc[8];
	Google__Bigtable__Admin__V2__Type agg_type = GOOGLE__BIGTABLE__ADMIN__V2__TYPE__INIT,
					  int64_type = GOOGLE__BIGTABLE__ADMIN__V2__TYPE__INIT;
	Google__Bigtable__Admin__V2__Type__Aggregate aggregate = GOOGLE__BIGTABLE__ADMIN__V2__TYPE__AGGREGATE__INIT;
	Google__Bigtable__Admin__V2__Type__Aggregate__Sum sum = GOOGLE__BIGTABLE__ADMIN__V2__TYPE__AGGREGATE__SUM__INIT;
	Google__Bigtable__Admin__V2__Type__Int64 int64 = GOOGLE__BIGTABLE__ADMIN__V2__TYPE__INT64__INIT;
	int64_type.kind_case = GOOGLE__BIGTABLE__ADMIN__V2__TYPE__KIND_INT64_TYPE;
	int64_type.int64_type = &int64;
	aggregate.input_type = &int64_type;
	aggregate.aggregator_case = GOOGLE__BIGTABLE__ADMIN__V2__TYPE__AGGREGATE__AGGREGATOR_SUM;
	aggregate.sum = &sum;
	agg_type.kind_case = GOOGLE__BIGTABLE__ADMIN__V2__TYPE__KIND_AGGREGATE_TYPE;
	agg_type.aggregate_type = &aggregate;

	assert_true(nfam <= 8);
	for (int i = 0; i < nfam; i++) {
		google__bigtable__admin__v2__table__column_families_entry__init(&ent[i]);
		google__bigtable__admin__v2__column_family__init(&cf[i]);
		google__bigtable__admin__v2__gc_rule__init(&gc[i]);
		gc[i].rule_case = GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__RULE_MAX_NUM_VERSIONS;
		gc[i].max_num_versions = versions[i];
		cf[i].gc_rule = &gc[i];
		if (agg && agg[i])
			cf[i].value_type = &agg_type;
		ent[i].key = (char *)names[i];
		ent[i].value = &cf[i];
		entp[i] = &ent[i];
	}
	t.n_column_families = (size_t)nfam;
	t.column_families = entp;
	req.parent = (char *)btr_instance_name(c);
	req.table_id = (char *)table;
	req.table = &t;
	ProtobufCMessage *resp = NULL;
	int r = btr_unary(c, BTR_ADMIN, ADMIN("CreateTable"), &req.base,
			  &google__bigtable__admin__v2__table__descriptor, &resp,
			  tb_route(c, BTR_ADMIN, "parent", btr_instance_name(c)), 0, st);
	if (r == 0) {
		Table *got = (Table *)resp;
		assert_string_equal(got->name, tb_table_path(c, table));
		protobuf_c_message_free_unpacked(resp, NULL);
	}
	return r;
}

/* GetTable with the schema view; NULL and *ERR on an error. */
Table *tb_get_table(btr_conn *c, const char *table, int *err, btr_status *st)
{
	Google__Bigtable__Admin__V2__GetTableRequest req = GOOGLE__BIGTABLE__ADMIN__V2__GET_TABLE_REQUEST__INIT;
	req.name = tb_table_path(c, table);
	req.view = GOOGLE__BIGTABLE__ADMIN__V2__TABLE__VIEW__SCHEMA_VIEW;
	ProtobufCMessage *resp = NULL;
	*err = btr_unary(c, BTR_ADMIN, ADMIN("GetTable"), &req.base,
			 &google__bigtable__admin__v2__table__descriptor, &resp,
			 tb_route(c, BTR_ADMIN, "name", req.name), BTR_IDEMPOTENT, st);
	return (Table *)resp;
}

const ColumnFamily *tb_family_of(const Table *t, const char *name)
{
	for (size_t i = 0; i < t->n_column_families; i++)
		if (strcmp(t->column_families[i]->key, name) == 0)
			return t->column_families[i]->value;
	return NULL;
}

/* MutateRow ROW: SetCell FAM:QUAL@TS = VALUE (LEN bytes). */
int tb_set_cell(btr_conn *c, const char *table, const char *row, const char *fam, const char *qual,
		    int64_t ts, const void *value, size_t len, btr_status *st)
{
	Google__Bigtable__V2__MutateRowRequest req = GOOGLE__BIGTABLE__V2__MUTATE_ROW_REQUEST__INIT;
	Mutation m = GOOGLE__BIGTABLE__V2__MUTATION__INIT, *mp = &m;
	Google__Bigtable__V2__Mutation__SetCell sc = GOOGLE__BIGTABLE__V2__MUTATION__SET_CELL__INIT;
	sc.family_name = (char *)fam;
	sc.column_qualifier = tb_str(qual);
	sc.timestamp_micros = ts;
	sc.value = tb_bin(value, len);
	m.mutation_case = GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_SET_CELL;
	m.set_cell = &sc;
	req.table_name = tb_table_path(c, table);
	req.row_key = tb_str(row);
	req.n_mutations = 1;
	req.mutations = &mp;
	ProtobufCMessage *resp = NULL;
	int r = btr_unary(c, BTR_DATA, DATA("MutateRow"), &req.base,
			  &google__bigtable__v2__mutate_row_response__descriptor, &resp,
			  tb_route(c, BTR_DATA, "table_name", req.table_name), BTR_IDEMPOTENT, st);
	protobuf_c_message_free_unpacked(resp, NULL);
	return r;
}

/* ---- reading: cells assembled from a ReadRows stream (chunks whose values may be split) */

void tb_cells_free(struct cells *cs)
{
	for (int i = 0; i < cs->n; i++)
		free(cs->c[i].val);
	free(cs);
}

void tb_cells_add(struct cells *cs, const Google__Bigtable__V2__ReadRowsResponse__CellChunk *ch)
{
	struct cell *cur;
	if (cs->open) {
		cur = &cs->c[cs->n - 1];
	} else {
		assert_true(cs->n < 256);
		cur = &cs->c[cs->n++];
		memset(cur, 0, sizeof *cur);
		if (cs->n > 1) { /* row, family and qualifier carry over between cells */
			const struct cell *prev = &cs->c[cs->n - 2];
			memcpy(cur->row, prev->row, sizeof cur->row);
			memcpy(cur->fam, prev->fam, sizeof cur->fam);
			memcpy(cur->qual, prev->qual, sizeof cur->qual);
		}
		if (ch->row_key.len) {
			assert_true(ch->row_key.len < sizeof cur->row);
			memcpy(cur->row, ch->row_key.data, ch->row_key.len);
			cur->row[ch->row_key.len] = '\0';
		}
		if (ch->family_name)
			snprintf(cur->fam, sizeof cur->fam, "%s", ch->family_name->value);
		if (ch->qualifier) {
			assert_true(ch->qualifier->value.len < sizeof cur->qual);
			memcpy(cur->qual, ch->qualifier->value.data, ch->qualifier->value.len);
			cur->qual[ch->qualifier->value.len] = '\0';
		}
		cur->ts = ch->timestamp_micros;
	}
	uint8_t *v = realloc(cur->val, cur->len + ch->value.len + 1);
	assert_non_null(v);
	if (ch->value.len)
		memcpy(v + cur->len, ch->value.data, ch->value.len);
	cur->val = v;
	cur->len += ch->value.len;
	cs->open = ch->value_size > 0;
	if (ch->row_status_case == GOOGLE__BIGTABLE__V2__READ_ROWS_RESPONSE__CELL_CHUNK__ROW_STATUS_COMMIT_ROW)
		cur->committed = true;
}

/* ReadRows of TABLE (REQ filled by the caller or NULL for all rows): returns the stream's end (0 or an
 * errno) and the cells in *OUT (caller frees with cells_free). */
int tb_read_rows(btr_conn *c, const char *table, Google__Bigtable__V2__ReadRowsRequest *req,
		     struct cells **out, btr_status *st)
{
	Google__Bigtable__V2__ReadRowsRequest all = GOOGLE__BIGTABLE__V2__READ_ROWS_REQUEST__INIT;
	if (!req)
		req = &all;
	req->table_name = tb_table_path(c, table);
	struct cells *cs = calloc(1, sizeof *cs);
	assert_non_null(cs);
	btr_stream *s = NULL;
	assert_int_equal(btr_stream_open(c, BTR_DATA, DATA("ReadRows"), &req->base,
					 tb_route(c, BTR_DATA, "table_name", req->table_name), &s), 0);
	ProtobufCMessage *m;
	int r;
	while ((r = btr_stream_next(s, &google__bigtable__v2__read_rows_response__descriptor, &m)) == 1) {
		ReadRowsResponse *resp = (ReadRowsResponse *)m;
		for (size_t i = 0; i < resp->n_chunks; i++)
			tb_cells_add(cs, resp->chunks[i]);
		protobuf_c_message_free_unpacked(m, NULL);
	}
	assert_null(m);
	if (st)
		*st = *btr_stream_status(s);
	btr_stream_close(s);
	*out = cs;
	return r;
}

/* Families of a row come in any order: cells sorted by row, family, qualifier, newest first. */
static int cell_cmp(const void *a, const void *b)
{
	const struct cell *x = a, *y = b;
	int d = strcmp(x->row, y->row);
	if (!d)
		d = strcmp(x->fam, y->fam);
	if (!d)
		d = strcmp(x->qual, y->qual);
	if (!d)
		d = (x->ts < y->ts) - (x->ts > y->ts);
	return d;
}

void tb_cells_sort(struct cells *cs)
{
	qsort(cs->c, (size_t)cs->n, sizeof cs->c[0], cell_cmp);
}

void tb_assert_cell(const struct cell *c, const char *row, const char *fam, const char *qual, int64_t ts,
			const char *val)
{
	assert_string_equal(c->row, row);
	assert_string_equal(c->fam, fam);
	assert_string_equal(c->qual, qual);
	assert_int_equal(c->ts, ts);
	assert_int_equal(c->len, strlen(val));
	assert_memory_equal(c->val, val, c->len);
}
