/* btw.c — the protobuf wire format by hand (btw.h). The encoding: each field is a tag (field number << 3 |
 * wire type) as a varint, then a varint (type 0), 8 bytes (1), a varint length and that many bytes (2),
 * or 4 bytes (5); types 3 and 4 (groups) are not proto3's. */
#include "btw.h"
#include "mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

/* ReadRowsResponse and its CellChunk (proto/bigtable.proto) */
enum { RR_CHUNKS = 1, RR_LAST_SCANNED = 2 };
enum {
	CH_ROW_KEY = 1, CH_FAMILY = 2, CH_QUALIFIER = 3, CH_TIMESTAMP = 4, CH_LABELS = 5, CH_VALUE = 6,
	CH_VALUE_SIZE = 7, CH_RESET = 8, CH_COMMIT = 9,
};
enum { WRAPPER_VALUE = 1 }; /* google.protobuf.StringValue and BytesValue */

/* ---- reading */

static int get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t x = 0;
	for (unsigned shift = 0; shift < 70 && p < end; shift += 7) {
		uint8_t b = *p++;
		x |= (uint64_t)(b & 0x7F) << shift;
		if (!(b & 0x80)) {
			*pp = p;
			*v = x;
			return 0;
		}
	}
	return -EIO;
}

/* One field at *PP: its number and wire type, and for a length-delimited field its bytes (*DATA, *LEN),
 * for the others its value in *V (a fixed field skipped). */
static int get_field(const uint8_t **pp, const uint8_t *end, unsigned *field, unsigned *wt, uint64_t *v,
		     const uint8_t **data, size_t *len)
{
	uint64_t tag;
	if (get_varint(pp, end, &tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1FFFFFFF)
		return -EIO;
	*field = (unsigned)(tag >> 3);
	*wt = (unsigned)(tag & 7);
	switch (*wt) {
	case WT_VARINT:
		return get_varint(pp, end, v);
	case WT_I64:
	case WT_I32: {
		size_t n = *wt == WT_I64 ? 8 : 4;
		if ((size_t)(end - *pp) < n)
			return -EIO;
		*pp += n;
		return 0;
	}
	case WT_LEN:
		if (get_varint(pp, end, v) || *v > (uint64_t)(end - *pp))
			return -EIO;
		*data = *pp;
		*len = (size_t)*v;
		*pp += *len;
		return 0;
	default:
		return -EIO;
	}
}

/* The value of a StringValue or BytesValue message in P (N bytes): "" when it has none. */
static int get_wrapper(const uint8_t *p, size_t n, const uint8_t **data, size_t *len)
{
	const uint8_t *end = p + n;
	*data = p;
	*len = 0;
	while (p < end) {
		unsigned field, wt;
		uint64_t v;
		const uint8_t *d;
		size_t l;
		if (get_field(&p, end, &field, &wt, &v, &d, &l))
			return -EIO;
		if (field == WRAPPER_VALUE) {
			if (wt != WT_LEN)
				return -EIO;
			*data = d;
			*len = l;
		}
	}
	return 0;
}

static int add_label(btw_rr *r, size_t nlab, size_t *lused, const uint8_t *d, size_t l)
{
	if (nlab + 1 > r->labcap) {
		size_t cap = r->labcap ? 2 * r->labcap : 4;
		char **v = mem_realloc(r->labels, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		r->labels = v;
		r->labcap = cap;
	}
	if (*lused + l + 1 > r->lbufcap) {
		size_t cap = r->lbufcap ? r->lbufcap : 64;
		char *b;
		while (cap < *lused + l + 1)
			cap *= 2;
		if (!(b = mem_realloc(r->lbuf, cap)))
			return -ENOMEM;
		for (size_t i = 0; i < nlab; i++) /* (pointers into the old buffer) */
			r->labels[i] = b + (r->labels[i] - r->lbuf);
		r->lbuf = b;
		r->lbufcap = cap;
	}
	memcpy(r->lbuf + *lused, d, l);
	r->lbuf[*lused + l] = '\0';
	r->labels[nlab] = r->lbuf + *lused;
	*lused += l + 1;
	return 0;
}

static int get_chunk(btw_rr *r, const uint8_t *p, size_t n, btm_chunk *c)
{
	const uint8_t *end = p + n;
	size_t nlab = 0, lused = 0;
	int rc;

	memset(c, 0, sizeof(*c));
	while (p < end) {
		unsigned field, wt;
		uint64_t v = 0;
		const uint8_t *d = NULL;
		size_t l = 0;
		if (get_field(&p, end, &field, &wt, &v, &d, &l))
			return -EIO;
		if (field > CH_COMMIT)
			continue;
		bool len_field = field == CH_ROW_KEY || field == CH_FAMILY || field == CH_QUALIFIER ||
				 field == CH_LABELS || field == CH_VALUE;
		if (wt != (len_field ? WT_LEN : WT_VARINT))
			return -EIO;
		switch (field) {
		case CH_ROW_KEY:
			c->row_key = d;
			c->row_key_len = l;
			break;
		case CH_FAMILY:
			if (get_wrapper(d, l, &d, &l))
				return -EIO;
			c->has_family = true;
			c->family = (const char *)d;
			c->family_len = l;
			break;
		case CH_QUALIFIER:
			if (get_wrapper(d, l, &d, &l))
				return -EIO;
			c->has_qualifier = true;
			c->qualifier = d;
			c->qualifier_len = l;
			break;
		case CH_TIMESTAMP:
			c->timestamp_micros = (int64_t)v;
			break;
		case CH_LABELS:
			if ((rc = add_label(r, nlab, &lused, d, l)))
				return rc;
			nlab++;
			break;
		case CH_VALUE:
			c->value = d;
			c->value_len = l;
			break;
		case CH_VALUE_SIZE:
			c->value_size = (int32_t)(uint32_t)v;
			break;
		case CH_RESET: /* the oneof row_status: the last member given is the one set */
			c->reset_row = v != 0;
			c->commit_row = false;
			break;
		case CH_COMMIT:
			c->commit_row = v != 0;
			c->reset_row = false;
			break;
		}
	}
	if (!c->row_key_len)
		c->row_key = NULL;
	c->labels = nlab ? r->labels : NULL;
	c->nlabels = nlab;
	return 0;
}

void btw_rr_start(btw_rr *r, const uint8_t *msg, size_t len)
{
	r->p = msg;
	r->end = msg + len;
	r->scanned = NULL;
	r->scanned_len = 0;
}

int btw_rr_next(btw_rr *r, btm_chunk *c)
{
	while (r->p < r->end) {
		unsigned field, wt;
		uint64_t v;
		const uint8_t *d = NULL;
		size_t l = 0;
		if (get_field(&r->p, r->end, &field, &wt, &v, &d, &l))
			return -EIO;
		if (field == RR_CHUNKS) {
			if (wt != WT_LEN)
				return -EIO;
			int rc = get_chunk(r, d, l, c);
			return rc ? rc : 1;
		}
		if (field == RR_LAST_SCANNED) {
			if (wt != WT_LEN)
				return -EIO;
			r->scanned = l ? d : NULL;
			r->scanned_len = l;
		}
	}
	return 0;
}

void btw_rr_free(btw_rr *r)
{
	free(r->labels);
	free(r->lbuf);
	r->labels = NULL;
	r->lbuf = NULL;
	r->labcap = r->lbufcap = 0;
}

/* ---- writing */

size_t btw_varint_size(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

size_t btw_tag_size(unsigned field)
{
	return btw_varint_size((uint64_t)field << 3);
}

size_t btw_len_field_size(unsigned field, size_t n)
{
	return btw_tag_size(field) + btw_varint_size(n) + n;
}

static bool room(btw_buf *b, size_t n)
{
	if (b->failed)
		return false;
	if (b->n + n <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->n + n)
		cap *= 2;
	uint8_t *p = mem_realloc(b->p, cap);
	if (!p) {
		b->failed = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

static void put_varint(btw_buf *b, uint64_t v)
{
	if (!room(b, 10))
		return;
	while (v >= 0x80) {
		b->p[b->n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->p[b->n++] = (uint8_t)v;
}

void btw_put_varint_field(btw_buf *b, unsigned field, uint64_t v)
{
	put_varint(b, (uint64_t)field << 3 | WT_VARINT);
	put_varint(b, v);
}

void btw_put_len_head(btw_buf *b, unsigned field, size_t n)
{
	put_varint(b, (uint64_t)field << 3 | WT_LEN);
	put_varint(b, n);
}

void btw_put_len_field(btw_buf *b, unsigned field, const void *p, size_t n)
{
	btw_put_len_head(b, field, n);
	if (n && room(b, n)) {
		memcpy(b->p + b->n, p, n);
		b->n += n;
	}
}

void btw_buf_reset(btw_buf *b)
{
	b->n = 0;
	b->failed = false;
}

void btw_buf_free(btw_buf *b)
{
	free(b->p);
	*b = (btw_buf){ 0 };
}

/* ---- MutateRowsRequest */

/* MutateRowsRequest and what it holds, by field number (proto/bigtable.proto) */
enum { MRQ_TABLE = 1, MRQ_ENTRIES = 2, MRQ_PROFILE = 3 };
enum { ENT_KEY = 1, ENT_MUTATIONS = 2 };
enum { MUT_SET = 1, MUT_DEL_COLUMN = 2, MUT_ADD = 5 };
enum { CELL_FAMILY = 1, CELL_QUALIFIER = 2, CELL_TS = 3, CELL_VALUE = 4 }; /* SetCell; AddToCell's 1-4 */
enum { DEL_TIME_RANGE = 3, TR_START = 1, TR_END = 2 };
enum { VALUE_INT = 6, VALUE_RAW = 8, VALUE_RAW_TS = 9 };

/* The size of a varint field V of FIELD that proto3 leaves out when 0, and of such a bytes field. */
static size_t opt_varint_size(unsigned field, uint64_t v)
{
	return v ? btw_tag_size(field) + btw_varint_size(v) : 0;
}

static size_t opt_len_size(unsigned field, size_t n)
{
	return n ? btw_len_field_size(field, n) : 0;
}

static void put_opt_varint(btw_buf *o, unsigned field, uint64_t v)
{
	if (v)
		btw_put_varint_field(o, field, v);
}

static void put_opt_len(btw_buf *o, unsigned field, const void *p, size_t n)
{
	if (n)
		btw_put_len_field(o, field, p, n);
}

/* C's mutations written to O when O is not NULL; their size either way. */
static size_t cell(btw_buf *o, const btw_cell *c)
{
	const char *fam = c->family;
	size_t flen = c->family_len;
	if (!c->agg) {
		size_t set = btw_len_field_size(CELL_FAMILY, flen) + opt_len_size(CELL_QUALIFIER, c->qualifier_len) +
			     opt_varint_size(CELL_TS, (uint64_t)c->ts) + opt_len_size(CELL_VALUE, c->value_len);
		if (o) {
			btw_put_len_head(o, ENT_MUTATIONS, btw_len_field_size(MUT_SET, set));
			btw_put_len_head(o, MUT_SET, set);
			btw_put_len_field(o, CELL_FAMILY, fam, flen);
			put_opt_len(o, CELL_QUALIFIER, c->qualifier, c->qualifier_len);
			put_opt_varint(o, CELL_TS, (uint64_t)c->ts);
			put_opt_len(o, CELL_VALUE, c->value, c->value_len);
		}
		return btw_len_field_size(ENT_MUTATIONS, btw_len_field_size(MUT_SET, set));
	}
	uint64_t start = (uint64_t)c->ts, end = (uint64_t)c->ts + 1000, in = (uint64_t)c->input;
	size_t range = opt_varint_size(TR_START, start) + opt_varint_size(TR_END, end);
	size_t del = btw_len_field_size(CELL_FAMILY, flen) + opt_len_size(CELL_QUALIFIER, c->qualifier_len) +
		     btw_len_field_size(DEL_TIME_RANGE, range);
	/* AddToCell's three Values: members of a oneof, written even when 0 or empty */
	size_t vq = btw_len_field_size(VALUE_RAW, c->qualifier_len);
	size_t vts = btw_tag_size(VALUE_RAW_TS) + btw_varint_size(start);
	size_t vin = btw_tag_size(VALUE_INT) + btw_varint_size(in);
	size_t add = btw_len_field_size(CELL_FAMILY, flen) + btw_len_field_size(CELL_QUALIFIER, vq) +
		     btw_len_field_size(CELL_TS, vts) + btw_len_field_size(CELL_VALUE, vin);
	if (o) {
		btw_put_len_head(o, ENT_MUTATIONS, btw_len_field_size(MUT_DEL_COLUMN, del));
		btw_put_len_head(o, MUT_DEL_COLUMN, del);
		btw_put_len_field(o, CELL_FAMILY, fam, flen);
		put_opt_len(o, CELL_QUALIFIER, c->qualifier, c->qualifier_len);
		btw_put_len_head(o, DEL_TIME_RANGE, range);
		put_opt_varint(o, TR_START, start);
		put_opt_varint(o, TR_END, end);
		btw_put_len_head(o, ENT_MUTATIONS, btw_len_field_size(MUT_ADD, add));
		btw_put_len_head(o, MUT_ADD, add);
		btw_put_len_field(o, CELL_FAMILY, fam, flen);
		btw_put_len_head(o, CELL_QUALIFIER, vq);
		btw_put_len_field(o, VALUE_RAW, c->qualifier, c->qualifier_len);
		btw_put_len_head(o, CELL_TS, vts);
		btw_put_varint_field(o, VALUE_RAW_TS, start);
		btw_put_len_head(o, CELL_VALUE, vin);
		btw_put_varint_field(o, VALUE_INT, in);
	}
	return btw_len_field_size(ENT_MUTATIONS, btw_len_field_size(MUT_DEL_COLUMN, del)) +
	       btw_len_field_size(ENT_MUTATIONS, btw_len_field_size(MUT_ADD, add));
}

size_t btw_cell_size(const btw_cell *c)
{
	return cell(NULL, c);
}

void btw_put_cell(btw_buf *o, const btw_cell *c)
{
	cell(o, c);
}

void btw_put_mutate_rows_head(btw_buf *o, const char *table, const char *app_profile)
{
	btw_put_len_field(o, MRQ_TABLE, table, strlen(table));
	if (app_profile)
		put_opt_len(o, MRQ_PROFILE, app_profile, strlen(app_profile));
}

void btw_put_entry_head(btw_buf *o, const uint8_t *key, size_t key_len, size_t cells_size)
{
	btw_put_len_head(o, MRQ_ENTRIES, btw_len_field_size(ENT_KEY, key_len) + cells_size);
	btw_put_len_field(o, ENT_KEY, key, key_len);
}
