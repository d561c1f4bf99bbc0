/* test_btw.c — the hand-written wire format (store/bigtable/btw.h) against protobuf-c's generated code for
 * the same messages: ReadRowsResponses packed by protobuf-c read back by btw_rr the way bt_read would
 * take them, and MutateRowsRequests written by btw unpacked by protobuf-c, field by field; truncated and
 * malformed bytes refused where protobuf-c refuses them. Random messages come from a fixed seed.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <stdarg.h>
#include <cmocka.h>

#include "bigtable.pb-c.h"
#include "btw.h"

typedef Google__Bigtable__V2__ReadRowsResponse ReadRowsResponse;
typedef Google__Bigtable__V2__ReadRowsResponse__CellChunk CellChunk;
typedef Google__Bigtable__V2__MutateRowsRequest MutateRowsRequest;
typedef Google__Bigtable__V2__Mutation Mutation;

static uint64_t rng = 0x9E3779B97F4A7C15u;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static size_t pick(size_t n)
{
	return (size_t)(next_rand() % n);
}

/* N random bytes (any byte, NUL included) in a new buffer. */
static uint8_t *rand_bytes(size_t n)
{
	uint8_t *p = malloc(n ? n : 1);
	assert_non_null(p);
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)next_rand();
	return p;
}

/* A random printable NUL-terminated string of at most MAX bytes. */
static char *rand_name(size_t max)
{
	size_t n = pick(max + 1);
	char *s = malloc(n + 1);
	assert_non_null(s);
	for (size_t i = 0; i < n; i++)
		s[i] = (char)('a' + pick(26));
	s[n] = '\0';
	return s;
}

static int64_t rand_ts(void)
{
	switch (pick(4)) {
	case 0: return 0;
	case 1: return -(int64_t)pick(5000);
	case 2: return (int64_t)(next_rand() >> 1);
	default: return (int64_t)pick(1u << 30) * 1000;
	}
}

/* ---- ReadRowsResponse */

/* A random chunk, every field's presence chosen at random. */
static CellChunk *rand_chunk(void)
{
	CellChunk *c = calloc(1, sizeof(*c));
	assert_non_null(c);
	google__bigtable__v2__read_rows_response__cell_chunk__init(c);
	if (pick(2)) {
		c->row_key.len = 1 + pick(20);
		c->row_key.data = rand_bytes(c->row_key.len);
	}
	if (pick(3)) {
		c->family_name = calloc(1, sizeof(*c->family_name));
		google__protobuf__string_value__init(c->family_name);
		c->family_name->value = rand_name(8);
	}
	if (pick(3)) {
		c->qualifier = calloc(1, sizeof(*c->qualifier));
		google__protobuf__bytes_value__init(c->qualifier);
		c->qualifier->value.len = pick(12);
		c->qualifier->value.data = rand_bytes(c->qualifier->value.len);
	}
	c->timestamp_micros = rand_ts();
	c->n_labels = pick(4) == 0 ? 1 + pick(3) : 0;
	if (c->n_labels) {
		c->labels = calloc(c->n_labels, sizeof(char *));
		for (size_t i = 0; i < c->n_labels; i++)
			c->labels[i] = rand_name(10);
	}
	c->value.len = pick(4) == 0 ? 0 : pick(300);
	c->value.data = rand_bytes(c->value.len);
	c->value_size = pick(4) == 0 ? (int32_t)(next_rand() % 2000) - 1000 : 0;
	switch (pick(5)) {
	case 0:
		c->row_status_case = GOOGLE__BIGTABLE__V2__READ_ROWS_RESPONSE__CELL_CHUNK__ROW_STATUS_RESET_ROW;
		c->reset_row = pick(4) != 0;
		break;
	case 1:
	case 2:
		c->row_status_case = GOOGLE__BIGTABLE__V2__READ_ROWS_RESPONSE__CELL_CHUNK__ROW_STATUS_COMMIT_ROW;
		c->commit_row = pick(4) != 0;
		break;
	}
	return c;
}

static void free_chunk(CellChunk *c)
{
	free(c->row_key.data);
	if (c->family_name)
		free(c->family_name->value);
	free(c->family_name);
	if (c->qualifier)
		free(c->qualifier->value.data);
	free(c->qualifier);
	for (size_t i = 0; i < c->n_labels; i++)
		free(c->labels[i]);
	free(c->labels);
	free(c->value.data);
	free(c);
}

/* Whether btw's chunk D says what protobuf-c's chunk C says, read as bt_read reads it (btm_chunk). */
static void assert_same_chunk(const CellChunk *c, const btm_chunk *d)
{
	assert_int_equal(d->row_key_len, c->row_key.len);
	if (c->row_key.len)
		assert_memory_equal(d->row_key, c->row_key.data, c->row_key.len);
	else
		assert_null(d->row_key);
	assert_int_equal(d->has_family, c->family_name != NULL);
	if (c->family_name) {
		assert_int_equal(d->family_len, strlen(c->family_name->value));
		assert_memory_equal(d->family, c->family_name->value, d->family_len);
	}
	assert_int_equal(d->has_qualifier, c->qualifier != NULL);
	if (c->qualifier) {
		assert_int_equal(d->qualifier_len, c->qualifier->value.len);
		assert_memory_equal(d->qualifier, c->qualifier->value.data, d->qualifier_len);
	}
	assert_int_equal(d->timestamp_micros, c->timestamp_micros);
	assert_int_equal(d->nlabels, c->n_labels);
	for (size_t i = 0; i < c->n_labels; i++)
		assert_string_equal(d->labels[i], c->labels[i]);
	assert_int_equal(d->value_len, c->value.len);
	if (c->value.len)
		assert_memory_equal(d->value, c->value.data, c->value.len);
	assert_int_equal(d->value_size, c->value_size);
	assert_int_equal(d->reset_row,
			 c->row_status_case == GOOGLE__BIGTABLE__V2__READ_ROWS_RESPONSE__CELL_CHUNK__ROW_STATUS_RESET_ROW && c->reset_row);
	assert_int_equal(d->commit_row,
			 c->row_status_case == GOOGLE__BIGTABLE__V2__READ_ROWS_RESPONSE__CELL_CHUNK__ROW_STATUS_COMMIT_ROW && c->commit_row);
}

/* Read every chunk of MSG: 0 when btw took it whole, else its error. */
static int read_all(btw_rr *r, const uint8_t *msg, size_t len)
{
	btm_chunk ch;
	int rc;
	btw_rr_start(r, msg, len);
	while ((rc = btw_rr_next(r, &ch)) == 1)
		;
	return rc;
}

static void test_btw__read_rows_response_as_protobuf_c_packs_it(void **state)
{
	(void)state;
	btw_rr r = { 0 };
	for (int round = 0; round < 2000; round++) {
		ReadRowsResponse m = GOOGLE__BIGTABLE__V2__READ_ROWS_RESPONSE__INIT;
		m.n_chunks = pick(6);
		m.chunks = calloc(m.n_chunks ? m.n_chunks : 1, sizeof(CellChunk *));
		for (size_t i = 0; i < m.n_chunks; i++)
			m.chunks[i] = rand_chunk();
		if (pick(3) == 0) {
			m.last_scanned_row_key.len = 1 + pick(30);
			m.last_scanned_row_key.data = rand_bytes(m.last_scanned_row_key.len);
		}
		size_t n = protobuf_c_message_get_packed_size(&m.base);
		uint8_t *buf = malloc(n ? n : 1);
		assert_int_equal(protobuf_c_message_pack(&m.base, buf), n);

		btm_chunk ch;
		size_t got = 0;
		int rc;
		btw_rr_start(&r, buf, n);
		while ((rc = btw_rr_next(&r, &ch)) == 1) {
			assert_true(got < m.n_chunks);
			assert_same_chunk(m.chunks[got++], &ch);
		}
		assert_int_equal(rc, 0);
		assert_int_equal(got, m.n_chunks);
		assert_int_equal(r.scanned_len, m.last_scanned_row_key.len);
		if (m.last_scanned_row_key.len)
			assert_memory_equal(r.scanned, m.last_scanned_row_key.data, r.scanned_len);
		else
			assert_null(r.scanned);

		/* every prefix: btw takes it exactly when protobuf-c does */
		for (size_t cut = 0; cut < n; cut++) {
			ProtobufCMessage *u = protobuf_c_message_unpack(&google__bigtable__v2__read_rows_response__descriptor,
									 NULL, cut, buf);
			int brc = read_all(&r, buf, cut);
			if (u)
				assert_int_equal(brc, 0);
			else
				assert_int_equal(brc, -EIO);
			protobuf_c_message_free_unpacked(u, NULL);
		}
		free(buf);
		for (size_t i = 0; i < m.n_chunks; i++)
			free_chunk(m.chunks[i]);
		free(m.chunks);
		free(m.last_scanned_row_key.data);
	}
	btw_rr_free(&r);
}

static void test_btw__unknown_fields_skipped_and_last_row_status_wins(void **state)
{
	(void)state;
	/* chunks { row_key "k"; field 15 varint 7; field 16 fixed64; field 17 "xyz"; field 18 fixed32;
	 *          commit_row true; reset_row true }  request_stats (field 3) { }  field 20 varint 1 */
	static const uint8_t msg[] = {
		0x0A, 31,
		0x0A, 1, 'k',
		0x78, 7,
		0x81, 0x01, 1, 2, 3, 4, 5, 6, 7, 8,
		0x8A, 0x01, 3, 'x', 'y', 'z',
		0x95, 0x01, 1, 2, 3, 4,
		0x48, 1,
		0x40, 1,
		0x1A, 0,
		0xA0, 0x01, 1,
	};
	btw_rr r = { 0 };
	btm_chunk ch;
	ProtobufCMessage *u = protobuf_c_message_unpack(&google__bigtable__v2__read_rows_response__descriptor, NULL,
							 sizeof msg, msg);
	assert_non_null(u); /* the bytes are a valid message */
	btw_rr_start(&r, msg, sizeof msg);
	assert_int_equal(btw_rr_next(&r, &ch), 1);
	assert_same_chunk(((ReadRowsResponse *)u)->chunks[0], &ch);
	assert_true(ch.reset_row);
	assert_false(ch.commit_row);
	assert_int_equal(ch.row_key_len, 1);
	assert_int_equal(btw_rr_next(&r, &ch), 0);
	protobuf_c_message_free_unpacked(u, NULL);
	btw_rr_free(&r);
}

static void test_btw__malformed_bytes_refused(void **state)
{
	(void)state;
	static const struct {
		const char *what;
		uint8_t b[8];
		size_t n;
	} bad[] = {
		{ "a chunk given as a varint", { 0x08, 1 }, 2 },
		{ "a row key given as a varint", { 0x0A, 2, 0x08, 1 }, 4 },
		{ "a timestamp given as bytes", { 0x0A, 3, 0x22, 1, 'x' }, 5 },
		{ "a group", { 0x0A, 2, 0x5B, 0x5C }, 4 },
		{ "field number 0", { 0x0A, 2, 0x00, 1 }, 4 },
		{ "a length past the end", { 0x0A, 5, 0x0A, 1, 'k' }, 5 },
		{ "a varint that never ends", { 0x0A, 3, 0x20, 0xFF, 0xFF }, 5 },
		{ "a family wrapper with a varint value", { 0x0A, 4, 0x12, 2, 0x08, 1 }, 6 },
	};
	btw_rr r = { 0 };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ProtobufCMessage *u = protobuf_c_message_unpack(&google__bigtable__v2__read_rows_response__descriptor,
								 NULL, bad[i].n, bad[i].b);
		if (u)
			fail_msg("protobuf-c takes %s", bad[i].what);
		if (read_all(&r, bad[i].b, bad[i].n) != -EIO)
			fail_msg("btw takes %s", bad[i].what);
	}
	btw_rr_free(&r);
}

/* ---- MutateRowsRequest */

struct row {
	uint8_t *key;
	size_t klen;
	btw_cell *cells;
	size_t ncells;
};

static void assert_bytes(ProtobufCBinaryData b, const uint8_t *p, size_t n)
{
	assert_int_equal(b.len, n);
	if (n)
		assert_memory_equal(b.data, p, n);
}

static void test_btw__mutate_rows_request_as_protobuf_c_unpacks_it(void **state)
{
	(void)state;
	static const char *const fams[] = { "MD", "cf", "a-much-longer-family-name_with.punctuation" };
	for (int round = 0; round < 1000; round++) {
		btw_buf o = { 0 };
		size_t nrows = 1 + pick(8);
		struct row *rows = calloc(nrows, sizeof(*rows));
		const char *profile = pick(2) ? "" : "batch-profile";
		char table[80];
		snprintf(table, sizeof table, "projects/p/instances/i/tables/t%d", round);

		btw_put_mutate_rows_head(&o, table, profile);
		for (size_t i = 0; i < nrows; i++) {
			struct row *w = &rows[i];
			size_t size = 0;
			w->klen = 1 + pick(pick(10) == 0 ? 5000 : 30);
			w->key = rand_bytes(w->klen);
			w->ncells = 1 + pick(6);
			w->cells = calloc(w->ncells, sizeof(btw_cell));
			for (size_t j = 0; j < w->ncells; j++) {
				btw_cell *c = &w->cells[j];
				const char *f = fams[pick(3)];
				c->family = f;
				c->family_len = strlen(f);
				c->qualifier_len = pick(4) == 0 ? 0 : pick(pick(10) == 0 ? 20000 : 16);
				c->qualifier = rand_bytes(c->qualifier_len);
				c->ts = rand_ts();
				c->agg = pick(4) == 0;
				if (c->agg) {
					c->input = (int64_t)next_rand();
				} else {
					c->value_len = pick(4) == 0 ? 0 : pick(pick(10) == 0 ? 70000 : 100);
					c->value = rand_bytes(c->value_len);
				}
				size += btw_cell_size(c);
			}
			btw_put_entry_head(&o, w->key, w->klen, size);
			for (size_t j = 0; j < w->ncells; j++)
				btw_put_cell(&o, &w->cells[j]);
		}
		assert_false(o.failed);

		MutateRowsRequest *u = (MutateRowsRequest *)protobuf_c_message_unpack(
			&google__bigtable__v2__mutate_rows_request__descriptor, NULL, o.n, o.p);
		assert_non_null(u);
		assert_string_equal(u->table_name, table);
		assert_string_equal(u->app_profile_id, profile);
		assert_int_equal(u->n_entries, nrows);
		for (size_t i = 0; i < nrows; i++) {
			const struct row *w = &rows[i];
			const Google__Bigtable__V2__MutateRowsRequest__Entry *e = u->entries[i];
			size_t k = 0;
			assert_bytes(e->row_key, w->key, w->klen);
			for (size_t j = 0; j < w->ncells; j++) {
				const btw_cell *c = &w->cells[j];
				assert_true(k < e->n_mutations);
				const Mutation *m = e->mutations[k++];
				if (!c->agg) {
					assert_int_equal(m->mutation_case, GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_SET_CELL);
					assert_string_equal(m->set_cell->family_name, c->family);
					assert_bytes(m->set_cell->column_qualifier, c->qualifier, c->qualifier_len);
					assert_int_equal(m->set_cell->timestamp_micros, c->ts);
					assert_bytes(m->set_cell->value, c->value, c->value_len);
					continue;
				}
				assert_int_equal(m->mutation_case, GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_DELETE_FROM_COLUMN);
				assert_string_equal(m->delete_from_column->family_name, c->family);
				assert_bytes(m->delete_from_column->column_qualifier, c->qualifier, c->qualifier_len);
				assert_non_null(m->delete_from_column->time_range);
				assert_int_equal(m->delete_from_column->time_range->start_timestamp_micros, c->ts);
				assert_int_equal(m->delete_from_column->time_range->end_timestamp_micros,
						 (int64_t)((uint64_t)c->ts + 1000));
				assert_true(k < e->n_mutations);
				m = e->mutations[k++];
				assert_int_equal(m->mutation_case, GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_ADD_TO_CELL);
				const Google__Bigtable__V2__Mutation__AddToCell *a = m->add_to_cell;
				assert_string_equal(a->family_name, c->family);
				assert_non_null(a->column_qualifier);
				assert_int_equal(a->column_qualifier->kind_case, GOOGLE__BIGTABLE__V2__VALUE__KIND_RAW_VALUE);
				assert_bytes(a->column_qualifier->raw_value, c->qualifier, c->qualifier_len);
				assert_non_null(a->timestamp);
				assert_int_equal(a->timestamp->kind_case, GOOGLE__BIGTABLE__V2__VALUE__KIND_RAW_TIMESTAMP_MICROS);
				assert_int_equal(a->timestamp->raw_timestamp_micros, c->ts);
				assert_non_null(a->input);
				assert_int_equal(a->input->kind_case, GOOGLE__BIGTABLE__V2__VALUE__KIND_INT_VALUE);
				assert_int_equal(a->input->int_value, c->input);
			}
			assert_int_equal(k, e->n_mutations);
		}
		protobuf_c_message_free_unpacked(&u->base, NULL);
		for (size_t i = 0; i < nrows; i++) {
			for (size_t j = 0; j < rows[i].ncells; j++) {
				free((void *)rows[i].cells[j].qualifier);
				free((void *)rows[i].cells[j].value);
			}
			free(rows[i].cells);
			free(rows[i].key);
		}
		free(rows);
		btw_buf_free(&o);
	}
}

static void test_btw__varint_sizes(void **state)
{
	(void)state;
	static const struct { uint64_t v; size_t n; } cases[] = {
		{ 0, 1 }, { 127, 1 }, { 128, 2 }, { 16383, 2 }, { 16384, 3 }, { (1ull << 63) - 1, 9 }, { ~0ull, 10 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		btw_buf o = { 0 };
		assert_int_equal(btw_varint_size(cases[i].v), cases[i].n);
		btw_put_varint_field(&o, 1, cases[i].v);
		assert_int_equal(o.n, 1 + cases[i].n);
		btw_buf_free(&o);
	}
	assert_int_equal(btw_tag_size(15), 1);
	assert_int_equal(btw_tag_size(16), 2);
	assert_int_equal(btw_len_field_size(2, 200), 1 + 2 + 200);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_btw__varint_sizes),
		cmocka_unit_test(test_btw__read_rows_response_as_protobuf_c_packs_it),
		cmocka_unit_test(test_btw__unknown_fields_skipped_and_last_row_status_wins),
		cmocka_unit_test(test_btw__malformed_bytes_refused),
		cmocka_unit_test(test_btw__mutate_rows_request_as_protobuf_c_unpacks_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
