/* btw.h — the protobuf wire format by hand, for the two messages a bulk transfer spends its time on: a
 * ReadRowsResponse read in place (no copy of a value, no allocation per chunk) and a MutateRowsRequest
 * written straight from the loader's batch. protobuf-c does both through its generic descriptors, at
 * several times the cost; every other message still goes through the generated code (proto/), and
 * tests/bigtable/test_btw.c checks these two against it. Plain C: no gRPC, no protobuf-c. Prints nothing.
 */
#ifndef CELLFS_BTW_H
#define CELLFS_BTW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "btm.h"

/* ---- reading a ReadRowsResponse ------------------------------------------------------------------- */

/* A ReadRowsResponse being read: its chunks one by one, then its last_scanned_row_key. The labels of a
 * chunk are copied (NUL-terminated, as btm_chunk wants) into buffers kept from message to message. */
typedef struct btw_rr {
	const uint8_t *p, *end;
	const uint8_t *scanned; /* last_scanned_row_key, once btw_rr_next() returned 0 (NULL: absent) */
	size_t scanned_len;
	char **labels;          /* the last chunk's labels: pointers into lbuf */
	size_t labcap;
	char *lbuf;
	size_t lbufcap;
} btw_rr;

/* Start reading the encoded message MSG (LEN bytes, borrowed until the last btw_rr_next() on it). R
 * starts zeroed ({0}) the first time; later messages reuse its buffers. */
void btw_rr_start(btw_rr *r, const uint8_t *msg, size_t len);

/* The next chunk into *C, borrowing from the message (and, for labels, from R) until the next call:
 * 1; 0 after the last (R->scanned is then set); -EIO when the bytes are not a ReadRowsResponse (a
 * truncated field, a wrong wire type for a known field, a group); -ENOMEM (labels). As protobuf does, a
 * field given twice takes its last value, fields the message does not declare are skipped, and of
 * reset_row and commit_row the last one given counts. */
int btw_rr_next(btw_rr *r, btm_chunk *c);

/* Free R's buffers. Accepts a zeroed R. */
void btw_rr_free(btw_rr *r);

/* ---- writing ---------------------------------------------------------------------------------------- */

/* A growing buffer of encoded bytes. Starts zeroed; a failed allocation sets FAILED and later writes do
 * nothing, so a writer checks once at the end. */
typedef struct btw_buf {
	uint8_t *p;
	size_t n, cap;
	bool failed;
} btw_buf;

/* The encoded size of V as a varint; of field FIELD's tag; of a length-delimited field of N bytes. */
size_t btw_varint_size(uint64_t v);
size_t btw_tag_size(unsigned field);
size_t btw_len_field_size(unsigned field, size_t n);

/* Append a varint field (an int64 as its two's complement, as protobuf does), a length-delimited field
 * (N bytes of P; for a message, its encoded bytes), or only a length-delimited field's tag and length
 * (its N bytes follow from the caller). Proto3 leaves out a scalar equal to its default: these write
 * what they are given, the caller leaves it out. */
void btw_put_varint_field(btw_buf *b, unsigned field, uint64_t v);
void btw_put_len_field(btw_buf *b, unsigned field, const void *p, size_t n);
void btw_put_len_head(btw_buf *b, unsigned field, size_t n);

/* ---- writing a MutateRowsRequest ------------------------------------------------------------------- */

/* A cell to write, borrowed. A plain cell is one SetCell. An aggregate cell (AGG) is two mutations: a
 * DeleteFromColumn of [ts, ts + 1 ms), then an AddToCell of INPUT at TS, so that copying it again does
 * not add it twice (VALUE is then not sent). */
typedef struct btw_cell {
	const char *family;
	size_t family_len;
	const uint8_t *qualifier;
	size_t qualifier_len;
	int64_t ts;
	const uint8_t *value;
	size_t value_len;
	bool agg;
	int64_t input;
} btw_cell;

/* A request is its head, then per row an entry head followed by its cells:
 *     btw_put_mutate_rows_head(o, table, profile);
 *     for each row: btw_put_entry_head(o, key, n, sum of btw_cell_size()), then btw_put_cell() each cell.
 * TABLE is the table's full name; APP_PROFILE NULL or "" sends none. */
void btw_put_mutate_rows_head(btw_buf *o, const char *table, const char *app_profile);
void btw_put_entry_head(btw_buf *o, const uint8_t *key, size_t key_len, size_t cells_size);
size_t btw_cell_size(const btw_cell *c);
void btw_put_cell(btw_buf *o, const btw_cell *c);

/* Forget the contents, keeping the memory; free it. */
void btw_buf_reset(btw_buf *b);
void btw_buf_free(btw_buf *b);

#endif
