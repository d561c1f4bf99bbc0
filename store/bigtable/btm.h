/* btm.h — the ReadRows chunk merger: turns the CellChunks of one ReadRows stream into committed rows and
 * rejects every sequence the protocol forbids. Plain C, no gRPC or protobuf: the caller copies each
 * protobuf CellChunk's fields into a btm_chunk (borrowing, not copying, their bytes). Prints nothing.
 *
 * The rules (google/bigtable/v2/bigtable.proto, ReadRowsResponse.CellChunk):
 *   - A row starts with a chunk carrying its row key, family and qualifier; the key must come after the
 *     last committed row (before it, for a reversed read). Within the row, a chunk without row key,
 *     family or qualifier carries the previous one over (an empty family or qualifier that is present
 *     is a name of its own); a new family needs a qualifier.
 *   - Each chunk that is not a reset or the continuation of a split value starts a new cell (a bare
 *     commit makes a cell with timestamp 0 and an empty value). A value is split over chunks when
 *     value_size > 0 (the total size, a hint): the following chunks carry only value bytes, and the one
 *     with value_size 0 ends the cell.
 *   - reset_row (alone in its chunk) drops the row in progress; commit_row completes it, and may not come
 *     in the middle of a split value.
 *   - The stream may end only between rows.
 */
#ifndef CELLFS_BTM_H
#define CELLFS_BTM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One CellChunk, as the caller received it. Every pointer is borrowed for the duration of btm_feed(). */
typedef struct btm_chunk {
	const uint8_t *row_key; /* row_key_len 0: absent (proto3: an empty key is no key) */
	size_t row_key_len;
	bool has_family; /* family_name (a StringValue) is present, even if empty */
	const char *family;
	size_t family_len;
	bool has_qualifier; /* qualifier (a BytesValue) is present, even if empty */
	const uint8_t *qualifier;
	size_t qualifier_len;
	int64_t timestamp_micros; /* 0: absent */
	char *const *labels; /* NLABELS NUL-terminated strings (protobuf-c's char **labels fits as is) */
	size_t nlabels;
	const uint8_t *value;
	size_t value_len;
	int32_t value_size; /* > 0: the value continues in the next chunk; this is its total size */
	bool reset_row, commit_row;
} btm_chunk;

/* A cell of a committed row. Its family is also NUL-terminated; labels are NUL-terminated strings. */
typedef struct btm_cell {
	const char *family;
	size_t family_len;
	const uint8_t *qualifier;
	size_t qualifier_len;
	int64_t ts; /* microseconds */
	const uint8_t *value;
	size_t value_len;
	const char *const *labels; /* NULL when NLABELS is 0 */
	size_t nlabels;
} btm_cell;

/* A committed row: its cells in the order received (families are not sorted). */
typedef struct btm_row {
	const uint8_t *key;
	size_t key_len;
	const btm_cell *cells;
	size_t ncells; /* >= 1 */
} btm_row;

/* The merger's state for one stream (and its resumptions): the row in progress, the last committed row
 * key, and buffers reused from row to row (one arena per row for every byte of it). */
typedef struct btm btm;

/* A merger for a read in increasing row order, or decreasing with REVERSED. Errors: -ENOMEM.
 * Free with btm_free(). */
int btm_new(btm **out, bool reversed);
void btm_free(btm *m); /* accepts NULL */

/* Start a new stream (another read) on M, keeping its buffers: forgets the last row key, the row in
 * progress and any error. */
void btm_start(btm *m, bool reversed);

/* Feed the next chunk C. Returns 0 when more chunks are needed, 1 when C committed a row: *DONE points to
 * it, borrowed (with every byte of it) until the next btm_feed(), btm_scanned(), btm_restart(),
 * btm_start() or btm_free() on M. Errors (*DONE is then NULL): -EIO when C breaks the protocol
 * (btm_error() says how), -ENOMEM. An error sticks: every later btm_feed() and btm_end() returns it until
 * btm_restart() or btm_start(). */
int btm_feed(btm *m, const btm_chunk *c, const btm_row **done);

/* The stream ended. Returns 0 between rows; -EIO when a row is in progress (a stream must not end there),
 * or the error that stopped the stream. */
int btm_end(btm *m);

/* Why the last -EIO or -ENOMEM happened: a static string, or NULL when M has had no error since
 * btm_start() or btm_restart(). */
const char *btm_error(const btm *m);

/* Where a broken stream resumes: the last committed row key (or the last scanned key, btm_scanned()),
 * borrowed until the next btm_feed(), btm_scanned(), btm_start() or btm_free() on M; NULL with *LEN 0
 * before the first. A resumed read asks for the rows after it (before it, for a reversed read). */
const uint8_t *btm_last_key(const btm *m, size_t *len);

/* The response carried last_scanned_row_key KEY (KEY_LEN > 0): the server has read up to it, so a resumed
 * read may start beyond it, and later rows must come after it. Taken only between rows and when it lies
 * beyond the last key (else ignored: it is an optimisation). Errors: -ENOMEM (then it is not taken, and
 * nothing else changes). */
int btm_scanned(btm *m, const uint8_t *key, size_t key_len);

/* The stream broke and is being resumed: drops the row in progress and clears the error; keeps the last
 * key, so the resumed stream's rows are checked against it. */
void btm_restart(btm *m);

#endif
