/* fuzz_btm.c — the ReadRows chunk merger (store/bigtable/btm.h) over arbitrary chunk sequences.
 *
 * Input: a flags byte (bit 0: a reversed read), then records: 0xff restarts the stream (btm_restart),
 * 0xfe KEY-LEN KEY is a last_scanned_row_key (btm_scanned), any other byte is a chunk whose bits say
 * which fields follow (row key, family, qualifier, timestamp, labels, value_size; commit, reset), then
 * its value. Short keys and names, so rows collide and compare. Properties:
 *   - btm_feed() returns 0, 1 or -EIO with a reason, and an error sticks until btm_restart();
 *   - whether a row is in progress follows from the answers alone (a chunk accepted without committing
 *     starts or continues one; a commit or an accepted reset ends it): btm_end() agrees (at a restart
 *     and at the end of the input), a reset is accepted only inside a row, a chunk outside one only
 *     with a row key, family and qualifier, and one inside a row only with no row key or the row's own;
 *   - no accepted chunk has a family without a qualifier, a negative value_size, a value_size with a
 *     commit, or both a reset and a commit; an accepted reset carries nothing else, nor does a split
 *     value's continuation (the chunk after one accepted with value_size > 0) but value bytes and
 *     value_size;
 *   - a committed row has a key and cells, lies beyond the last key before it (in the read's direction)
 *     and becomes the last key; a scanned key becomes the last key exactly when it lies beyond it and
 *     no row is in progress;
 *   - each committed row, sent again to a second merger as plain chunks (every cell naming its family and
 *     qualifier, each value split in pieces of 1 to 3 bytes), commits there as the same row.
 */
#include <errno.h>
#include <stdbool.h>

#include "btm.h"
#include "fuzz.h"

/* Whether A comes after B in the read's direction. */
static bool beyond(const uint8_t *a, size_t an, const uint8_t *b, size_t bn, bool reversed)
{
	size_t n = an < bn ? an : bn;
	int c = n ? memcmp(a, b, n) : 0;

	if (!c)
		c = (an > bn) - (an < bn);
	return reversed ? c < 0 : c > 0;
}

static bool same_bytes(const void *a, size_t an, const void *b, size_t bn)
{
	return an == bn && (!an || !memcmp(a, b, an));
}

/* Feed ROW to M2 as plain chunks: it must come out the same. */
static void resend(btm *m2, const btm_row *row)
{
	const btm_row *out = NULL;
	int rc = 0;

	for (size_t i = 0; i < row->ncells; i++) {
		const btm_cell *c = &row->cells[i];
		size_t at = 0;

		do {
			size_t piece = c->value_len - at < 3 ? c->value_len - at : 1 + (at + i) % 3;
			bool last = at + piece == c->value_len;
			btm_chunk k = {
				.value = c->value + at,
				.value_len = piece,
				.value_size = last ? 0 : (int32_t)c->value_len,
				.commit_row = last && i + 1 == row->ncells,
			};

			if (!at) {
				k.row_key = row->key;
				k.row_key_len = row->key_len;
				k.has_family = k.has_qualifier = true;
				k.family = c->family;
				k.family_len = c->family_len;
				k.qualifier = c->qualifier;
				k.qualifier_len = c->qualifier_len;
				k.timestamp_micros = c->ts;
				k.labels = (char *const *)c->labels;
				k.nlabels = c->nlabels;
			}
			rc = btm_feed(m2, &k, &out);
			FUZZ_CHECK(rc == (k.commit_row ? 1 : 0));
			at += piece;
		} while (at < c->value_len);
	}
	FUZZ_CHECK(out && same_bytes(out->key, out->key_len, row->key, row->key_len));
	FUZZ_CHECK(out->ncells == row->ncells);
	for (size_t i = 0; i < row->ncells; i++) {
		const btm_cell *a = &row->cells[i], *b = &out->cells[i];

		FUZZ_CHECK(same_bytes(a->family, a->family_len, b->family, b->family_len));
		FUZZ_CHECK(same_bytes(a->qualifier, a->qualifier_len, b->qualifier, b->qualifier_len));
		FUZZ_CHECK(a->ts == b->ts);
		FUZZ_CHECK(same_bytes(a->value, a->value_len, b->value, b->value_len));
		FUZZ_CHECK(a->nlabels == b->nlabels);
		for (size_t l = 0; l < a->nlabels; l++)
			FUZZ_CHECK(!strcmp(a->labels[l], b->labels[l]));
	}
}

/* Up to MAX bytes of the input, as a heap copy (ASan sees reads past it). */
static uint8_t *take_dup(struct fuzz_in *in, size_t max, size_t *len)
{
	const uint8_t *p = fuzz_take(in, fuzz_u8(in) % (max + 1), len);

	return fuzz_dup(p, *len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	bool reversed = fuzz_u8(&in) & 1, in_row = false, in_value = false, broken = false;
	uint8_t *row_key = NULL; /* the row in progress's key, as the model knows it */
	size_t row_key_len = 0;
	btm *m, *m2;

	if (btm_new(&m, reversed) || btm_new(&m2, reversed))
		abort();
	while (in.n) {
		uint8_t op = fuzz_u8(&in), *key, *fam = NULL, *q = NULL, *val;
		char *labels[2] = { NULL, NULL };
		size_t last_len, last_len2, len;
		const uint8_t *lk = btm_last_key(m, &last_len);
		uint8_t *last = lk ? fuzz_dup(lk, last_len) : NULL;
		const btm_row *row;
		btm_chunk c = { 0 };
		int rc;

		if (op == 0xff) {
			FUZZ_CHECK(btm_end(m) == (broken || in_row ? -EIO : 0));
			btm_restart(m);
			FUZZ_CHECK(!btm_error(m) && btm_end(m) == 0);
			FUZZ_CHECK(btm_last_key(m, &len) == lk && len == last_len);
			in_row = in_value = broken = false;
			free(last);
			continue;
		}
		if (op == 0xfe) {
			key = take_dup(&in, 5, &len);
			FUZZ_CHECK(btm_scanned(m, key, len) == 0);
			lk = btm_last_key(m, &last_len2);
			if (!broken && !in_row && len && (!last || beyond(key, len, last, last_len, reversed)))
				FUZZ_CHECK(lk && same_bytes(lk, last_len2, key, len));
			else
				FUZZ_CHECK(same_bytes(lk, last_len2, last, last_len));
			free(key);
			free(last);
			continue;
		}
		key = take_dup(&in, 5, &c.row_key_len);
		if (op & 1)
			c.row_key = key;
		else
			c.row_key_len = 0;
		if (op & 2) {
			fam = take_dup(&in, 2, &c.family_len);
			c.has_family = true;
			c.family = (const char *)fam;
		}
		if (op & 4) {
			q = take_dup(&in, 2, &c.qualifier_len);
			c.has_qualifier = true;
			c.qualifier = q;
		}
		if (op & 8)
			c.timestamp_micros = (int8_t)fuzz_u8(&in);
		if (op & 16) {
			c.nlabels = 1 + fuzz_u8(&in) % 2;
			for (size_t l = 0; l < c.nlabels; l++) {
				size_t n = fuzz_u8(&in) % 3;

				if (!(labels[l] = calloc(n + 1, 1)))
					abort();
				for (size_t j = 0; j < n; j++)
					labels[l][j] = (char)('a' + fuzz_u8(&in) % 26);
			}
			c.labels = labels;
		}
		if (op & 32)
			c.value_size = (int8_t)fuzz_u8(&in);
		c.commit_row = op & 64;
		c.reset_row = op & 128;
		val = take_dup(&in, 7, &c.value_len);
		c.value = val;

		rc = btm_feed(m, &c, &row);
		FUZZ_CHECK(rc == 0 || rc == 1 || rc == -EIO);
		FUZZ_CHECK((rc == 1) == (row != NULL));
		if (broken) {
			FUZZ_CHECK(rc == -EIO);
		} else if (rc == -EIO) {
			FUZZ_CHECK(btm_error(m) != NULL);
			FUZZ_CHECK(btm_end(m) == -EIO);
			broken = true;
		} else {
			FUZZ_CHECK(!btm_error(m));
			if (!in_row) {
				FUZZ_CHECK(!c.reset_row && c.row_key_len && c.has_family && c.has_qualifier);
				free(row_key);
				row_key = fuzz_dup(c.row_key, c.row_key_len);
				row_key_len = c.row_key_len;
			} else if (c.row_key_len) {
				FUZZ_CHECK(same_bytes(c.row_key, c.row_key_len, row_key, row_key_len));
			}
			FUZZ_CHECK(!c.has_family || c.has_qualifier);
			FUZZ_CHECK(c.value_size >= 0 && !(c.value_size && c.commit_row));
			FUZZ_CHECK(!(c.reset_row && c.commit_row));
			if (c.reset_row)
				FUZZ_CHECK(!c.row_key_len && !c.has_family && !c.has_qualifier && !c.timestamp_micros &&
					   !c.nlabels && !c.value_len && !c.value_size);
			else if (in_value)
				FUZZ_CHECK(!c.row_key_len && !c.has_family && !c.has_qualifier && !c.timestamp_micros &&
					   !c.nlabels);
			in_row = rc == 0 && !c.reset_row;
			in_value = in_row && c.value_size > 0;
			FUZZ_CHECK(!c.reset_row || rc == 0);
			if (rc == 1) {
				FUZZ_CHECK(row->key_len && row->ncells >= 1);
				FUZZ_CHECK(same_bytes(row->key, row->key_len, row_key, row_key_len));
				FUZZ_CHECK(!last || beyond(row->key, row->key_len, last, last_len, reversed));
				lk = btm_last_key(m, &len);
				FUZZ_CHECK(same_bytes(lk, len, row->key, row->key_len));
				resend(m2, row);
			}
		}
		free(key);
		free(fam);
		free(q);
		free(val);
		free(labels[0]);
		free(labels[1]);
		free(last);
	}
	FUZZ_CHECK(btm_end(m) == (broken || in_row ? -EIO : 0));
	FUZZ_CHECK(btm_end(m2) == 0);
	free(row_key);
	btm_free(m);
	btm_free(m2);
	return 0;
}
