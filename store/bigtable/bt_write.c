/* bt_write.c — writes through the Data API: a row mutation is one MutateRow (atomic per row), sent when
 * called; ReadModifyWrite and CheckAndMutate are their calls; the bulk loader batches cells into
 * MutateRows and sends again only the entries that failed with a status worth retrying. Every write is
 * checked first as the local store checks it (cellstore.h), so a bad one is refused before anything is
 * sent. Timestamps are explicit (CS_TS_NOW is the client's whole-millisecond time), so every call but
 * AddToCell, ReadModifyWrite and CheckAndMutate is idempotent and retried. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "bigtable.pb-c.h"
#include "bt_internal.h"
#include "btw.h"
#include "mem.h"

#define DATA "/google.bigtable.v2.Bigtable/"
#define MAX_MUTATIONS 100000 /* per request, Bigtable's limit */

/* Bulk batches: sent when one more cell would pass any of these. */
#define BATCH_BYTES (4u << 20)
#define BATCH_MUTATIONS 10000
#define BULK_ATTEMPTS 6

/* Storage for the messages of N mutations (one call's; freed by msgs_free). */
struct msgs {
	Google__Bigtable__V2__Mutation *m, **mp;
	Google__Bigtable__V2__Mutation__SetCell *set;
	Google__Bigtable__V2__Mutation__DeleteFromColumn *dc;
	Google__Bigtable__V2__TimestampRange *tr;
	Google__Bigtable__V2__Mutation__DeleteFromFamily *df;
	Google__Bigtable__V2__Mutation__DeleteFromRow dr;
	Google__Bigtable__V2__Mutation__AddToCell *add;
	Google__Bigtable__V2__Value *val; /* 3 per AddToCell */
	size_t n;
	bool idempotent;
};

static void msgs_free(struct msgs *g)
{
	free(g->m);
	free(g->mp);
	free(g->set);
	free(g->dc);
	free(g->tr);
	free(g->df);
	free(g->add);
	free(g->val);
}

static int64_t ms_up(int64_t ts)
{
	if (ts <= 0)
		return 0;
	if (ts > INT64_MAX - 999)
		return INT64_MAX / 1000 * 1000;
	return (ts + 999) / 1000 * 1000;
}

/* Check the row key. */
static int check_row(cs_bytes row)
{
	if (row.len == 0)
		return -EINVAL;
	if (row.len > CS_MAX_ROW_KEY)
		return -ENAMETOOLONG;
	return 0;
}

/* Check FAMILY of S for a write of a cell (AGG: an AddToCell) and return its index, or an error. */
static int check_family(const struct bt_schema *s, const char *family, bool agg)
{
	int f = family ? bt_schema_family(s, family) : -1;
	if (f < 0)
		return -ENOENT;
	if ((s->info->families[f].type != CS_TYPE_BYTES) != agg)
		return -EINVAL;
	return f;
}

/* A timestamp for a cell: CS_TS_NOW becomes now; Bigtable keeps whole milliseconds. */
static int cell_ts(int64_t ts, int64_t *out)
{
	if (ts == CS_TS_NOW) {
		*out = bt_now_ts();
		return 0;
	}
	if (ts < 0 || ts % 1000)
		return -EINVAL;
	*out = ts;
	return 0;
}

/* Check the N mutations M of a row against S, and build their messages in G. */
static int build(const bt_store *st, const struct bt_schema *s, const cs_mutation *m, size_t n, struct msgs *g)
{
	size_t nadd = 0;
	int rc;

	memset(g, 0, sizeof(*g));
	g->idempotent = true;
	if (n > MAX_MUTATIONS)
		return -E2BIG;
	/* every check before anything is built */
	for (size_t i = 0; i < n; i++) {
		const cs_mutation *x = &m[i];
		int64_t ts;
		switch (x->op) {
		case CS_SET_CELL:
		case CS_ADD_TO_CELL:
			if ((rc = check_family(s, x->family, x->op == CS_ADD_TO_CELL)) < 0)
				return rc;
			if (x->qualifier.len > CS_MAX_QUALIFIER)
				return -ENAMETOOLONG;
			if ((rc = cell_ts(x->ts, &ts)))
				return rc;
			if (x->op == CS_SET_CELL && x->value.len > st->max_value)
				return -EFBIG;
			nadd += x->op == CS_ADD_TO_CELL;
			break;
		case CS_DELETE_COLUMN:
			if (!x->family || bt_schema_family(s, x->family) < 0)
				return -ENOENT;
			if (x->qualifier.len > CS_MAX_QUALIFIER)
				return -ENAMETOOLONG;
			if (x->ts_start < 0 || (x->ts_end != 0 && x->ts_end < x->ts_start))
				return -EINVAL;
			break;
		case CS_DELETE_FAMILY:
			if (!x->family || bt_schema_family(s, x->family) < 0)
				return -ENOENT;
			break;
		case CS_DELETE_ROW:
			break;
		default:
			return -EINVAL;
		}
	}
	if (n == 0)
		return 0;
	if (!(g->m = mem_calloc(n, sizeof(*g->m))) || !(g->mp = mem_calloc(n, sizeof(*g->mp))) ||
	    !(g->set = mem_calloc(n, sizeof(*g->set))) || !(g->dc = mem_calloc(n, sizeof(*g->dc))) ||
	    !(g->tr = mem_calloc(n, sizeof(*g->tr))) || !(g->df = mem_calloc(n, sizeof(*g->df))) ||
	    (nadd && (!(g->add = mem_calloc(nadd, sizeof(*g->add))) || !(g->val = mem_calloc(3 * nadd, sizeof(*g->val)))))) {
		msgs_free(g);
		return -ENOMEM;
	}
	google__bigtable__v2__mutation__delete_from_row__init(&g->dr);
	nadd = 0;
	for (size_t i = 0; i < n; i++) {
		const cs_mutation *x = &m[i];
		Google__Bigtable__V2__Mutation *y = &g->m[i];
		google__bigtable__v2__mutation__init(y);
		g->mp[i] = y;
		switch (x->op) {
		case CS_SET_CELL: {
			Google__Bigtable__V2__Mutation__SetCell *c = &g->set[i];
			google__bigtable__v2__mutation__set_cell__init(c);
			c->family_name = (char *)x->family;
			c->column_qualifier = (ProtobufCBinaryData){ x->qualifier.len, (uint8_t *)x->qualifier.data };
			cell_ts(x->ts, &c->timestamp_micros);
			c->value = (ProtobufCBinaryData){ x->value.len, (uint8_t *)x->value.data };
			y->mutation_case = GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_SET_CELL;
			y->set_cell = c;
			break;
		}
		case CS_ADD_TO_CELL: {
			Google__Bigtable__V2__Mutation__AddToCell *c = &g->add[nadd];
			Google__Bigtable__V2__Value *v = &g->val[3 * nadd++];
			google__bigtable__v2__mutation__add_to_cell__init(c);
			for (int k = 0; k < 3; k++)
				google__bigtable__v2__value__init(&v[k]);
			c->family_name = (char *)x->family;
			v[0].kind_case = GOOGLE__BIGTABLE__V2__VALUE__KIND_RAW_VALUE;
			v[0].raw_value = (ProtobufCBinaryData){ x->qualifier.len, (uint8_t *)x->qualifier.data };
			v[1].kind_case = GOOGLE__BIGTABLE__V2__VALUE__KIND_RAW_TIMESTAMP_MICROS;
			cell_ts(x->ts, &v[1].raw_timestamp_micros);
			v[2].kind_case = GOOGLE__BIGTABLE__V2__VALUE__KIND_INT_VALUE;
			v[2].int_value = x->input;
			c->column_qualifier = &v[0];
			c->timestamp = &v[1];
			c->input = &v[2];
			y->mutation_case = GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_ADD_TO_CELL;
			y->add_to_cell = c;
			g->idempotent = false;
			break;
		}
		case CS_DELETE_COLUMN: {
			Google__Bigtable__V2__Mutation__DeleteFromColumn *c = &g->dc[i];
			google__bigtable__v2__mutation__delete_from_column__init(c);
			c->family_name = (char *)x->family;
			c->column_qualifier = (ProtobufCBinaryData){ x->qualifier.len, (uint8_t *)x->qualifier.data };
			if (x->ts_start || x->ts_end) { /* cells are whole ms: [a, b) holds those of [ceil a, ceil b) */
				int64_t lo = ms_up(x->ts_start), hi = x->ts_end == CS_TS_MAX ? 0 : ms_up(x->ts_end);
				if (x->ts_end != CS_TS_MAX && hi <= lo)
					break; /* no whole millisecond in the range: nothing to delete (left out below) */
				if (lo || hi) {
					google__bigtable__v2__timestamp_range__init(&g->tr[i]);
					g->tr[i].start_timestamp_micros = lo;
					g->tr[i].end_timestamp_micros = hi; /* (0: unbounded) */
					c->time_range = &g->tr[i];
				}
			}
			y->mutation_case = GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_DELETE_FROM_COLUMN;
			y->delete_from_column = c;
			break;
		}
		case CS_DELETE_FAMILY:
			google__bigtable__v2__mutation__delete_from_family__init(&g->df[i]);
			g->df[i].family_name = (char *)x->family;
			y->mutation_case = GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_DELETE_FROM_FAMILY;
			y->delete_from_family = &g->df[i];
			break;
		case CS_DELETE_ROW:
		default:
			y->mutation_case = GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_DELETE_FROM_ROW;
			y->delete_from_row = &g->dr;
			break;
		}
	}
	/* mutations that delete nothing are left out */
	for (size_t i = 0; i < n; i++)
		if (g->mp[i]->mutation_case)
			g->mp[g->n++] = g->mp[i];
	return 0;
}

static int data_call(bt_store *st, const struct bt_target *to, const char *method, ProtobufCMessage *req,
		     const ProtobufCMessageDescriptor *desc, ProtobufCMessage **resp, bool idempotent)
{
	btr_status status;
	ProtobufCMessage *r = NULL;
	int rc = btr_unary(st->c, BTR_DATA, method, req, desc, &r, to->routing, idempotent ? BTR_IDEMPOTENT : 0,
			   &status);
	if (rc)
		return bt_fail(rc, &status, NULL);
	if (resp)
		*resp = r;
	else
		protobuf_c_message_free_unpacked(r, NULL);
	return 0;
}

/* Begin a write of TABLE: the checks every write makes first, the schema, where the call goes. Unless
 * DEFER (a mutation that may be queued), what CS_TXN_DEFER queued for TABLE is sent first. */
static int begin(bt_txn *t, const char *table, cs_bytes row, struct bt_schema **s, struct bt_target *to,
		 bool defer)
{
	int rc;
	bt_clear_error();
	if ((rc = bt_write_check(t)))
		return rc;
	if (!defer && (rc = bt_defer_flush(t->st, table)))
		return rc;
	if ((rc = bt_schema_get(t->st, table, s)))
		return rc;
	if ((rc = check_row(row)) || (rc = bt_target(t->st, table, to))) {
		bt_schema_put(*s);
		return rc;
	}
	return 0;
}

int bt_row_mutate(void *txn, const char *table, cs_bytes row, const cs_mutation *m, size_t n)
{
	bt_txn *t = txn;
	Google__Bigtable__V2__MutateRowRequest req = GOOGLE__BIGTABLE__V2__MUTATE_ROW_REQUEST__INIT;
	struct bt_schema *s;
	struct msgs g;
	struct bt_target to;
	int rc;

	if ((rc = begin(t, table, row, &s, &to, t->defer)))
		return rc;
	rc = build(t->st, s, m, n, &g);
	bt_schema_put(s);
	if (rc)
		return rc == -ENOMEM || rc == -E2BIG ? bt_wrote(t, rc) : rc;
	if (g.n == 0) {
		msgs_free(&g);
		return 0;
	}
	if (t->defer && g.idempotent) { /* (AddToCell is not: a resend would add twice) */
		rc = bt_defer_add(t->st, table, &to, row.data, row.len, g.mp, g.n);
		if (rc != -E2BIG) {
			msgs_free(&g);
			return bt_wrote(t, rc);
		}
	}
	if (t->defer && (rc = bt_defer_flush(t->st, table))) { /* (sent as without the flag) */
		msgs_free(&g);
		return rc;
	}
	req.table_name = to.name;
	req.app_profile_id = (char *)btr_app_profile(t->st->c);
	req.row_key = (ProtobufCBinaryData){ row.len, (uint8_t *)row.data };
	req.n_mutations = g.n;
	req.mutations = g.mp;
	rc = data_call(t->st, &to, DATA "MutateRow", &req.base, &google__bigtable__v2__mutate_row_response__descriptor, NULL, g.idempotent);
	if (rc)
		bt_rows_forget(t->st, table, row.data, row.len); /* (it may have been applied) */
	else
		bt_rows_apply(t->st, table, row.data, row.len, g.mp, g.n);
	msgs_free(&g);
	return bt_wrote(t, rc);
}

/* One ReadModifyWrite rule on FAMILY:QUALIFIER; the new cell's timestamp and value. */
static int rmw(bt_txn *t, const char *table, cs_bytes row, const char *family, cs_bytes qualifier,
	       Google__Bigtable__V2__ReadModifyWriteRule *rule, int64_t *ts, cs_bytes *value,
	       Google__Bigtable__V2__ReadModifyWriteRowResponse **out)
{
	Google__Bigtable__V2__ReadModifyWriteRowRequest req = GOOGLE__BIGTABLE__V2__READ_MODIFY_WRITE_ROW_REQUEST__INIT;
	Google__Bigtable__V2__ReadModifyWriteRowResponse *resp = NULL;
	struct bt_schema *s;
	struct bt_target to;
	int rc;

	if ((rc = begin(t, table, row, &s, &to, false)))
		return rc;
	rc = check_family(s, family, false);
	bt_schema_put(s);
	if (rc < 0)
		return rc;
	if (qualifier.len > CS_MAX_QUALIFIER)
		return -ENAMETOOLONG;
	rule->family_name = (char *)family;
	rule->column_qualifier = (ProtobufCBinaryData){ qualifier.len, (uint8_t *)qualifier.data };
	req.table_name = to.name;
	req.app_profile_id = (char *)btr_app_profile(t->st->c);
	req.row_key = (ProtobufCBinaryData){ row.len, (uint8_t *)row.data };
	req.n_rules = 1;
	req.rules = &rule;
	bt_rows_forget(t->st, table, row.data, row.len);
	rc = bt_wrote(t, data_call(t->st, &to, DATA "ReadModifyWriteRow", &req.base,
				   &google__bigtable__v2__read_modify_write_row_response__descriptor, (ProtobufCMessage **)&resp, false));
	if (rc)
		return rc;
	if (!resp->row || !resp->row->n_families || !resp->row->families[0]->n_columns ||
	    !resp->row->families[0]->columns[0]->n_cells) {
		protobuf_c_message_free_unpacked(&resp->base, NULL);
		return bt_fail(-EIO, NULL, "ReadModifyWriteRow returned no cell");
	}
	{
		const Google__Bigtable__V2__Cell *c = resp->row->families[0]->columns[0]->cells[0];
		if (ts)
			*ts = c->timestamp_micros;
		*value = (cs_bytes){ c->value.data, c->value.len };
	}
	*out = resp;
	return 0;
}

int bt_rmw_append(void *txn, const char *table, cs_bytes row, const char *family, cs_bytes qualifier,
		  cs_bytes suffix, int64_t *ts)
{
	Google__Bigtable__V2__ReadModifyWriteRule rule = GOOGLE__BIGTABLE__V2__READ_MODIFY_WRITE_RULE__INIT;
	Google__Bigtable__V2__ReadModifyWriteRowResponse *resp;
	cs_bytes v;
	int rc;
	if (suffix.len > ((bt_txn *)txn)->st->max_value)
		return -EFBIG;
	rule.rule_case = GOOGLE__BIGTABLE__V2__READ_MODIFY_WRITE_RULE__RULE_APPEND_VALUE;
	rule.append_value = (ProtobufCBinaryData){ suffix.len, (uint8_t *)suffix.data };
	if ((rc = rmw(txn, table, row, family, qualifier, &rule, ts, &v, &resp)))
		return rc;
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	return 0;
}

int bt_rmw_increment(void *txn, const char *table, cs_bytes row, const char *family, cs_bytes qualifier,
		     int64_t delta, int64_t *result)
{
	Google__Bigtable__V2__ReadModifyWriteRule rule = GOOGLE__BIGTABLE__V2__READ_MODIFY_WRITE_RULE__INIT;
	Google__Bigtable__V2__ReadModifyWriteRowResponse *resp;
	cs_bytes v;
	int rc;
	rule.rule_case = GOOGLE__BIGTABLE__V2__READ_MODIFY_WRITE_RULE__RULE_INCREMENT_AMOUNT;
	rule.increment_amount = delta;
	if ((rc = rmw(txn, table, row, family, qualifier, &rule, NULL, &v, &resp)))
		return rc;
	if (v.len != 8) {
		protobuf_c_message_free_unpacked(&resp->base, NULL);
		return bt_fail(-EIO, NULL, "ReadModifyWriteRow returned a value that is not 8 bytes");
	}
	if (result) {
		uint64_t u = 0;
		for (int i = 0; i < 8; i++)
			u = u << 8 | ((const uint8_t *)v.data)[i];
		*result = (int64_t)u;
	}
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	return 0;
}

int bt_check_and_mutate(void *txn, const char *table, cs_bytes row, const cs_predicate *pred,
			const cs_mutation *true_m, size_t n_true, const cs_mutation *false_m, size_t n_false,
			bool *matched)
{
	bt_txn *t = txn;
	Google__Bigtable__V2__CheckAndMutateRowRequest req = GOOGLE__BIGTABLE__V2__CHECK_AND_MUTATE_ROW_REQUEST__INIT;
	Google__Bigtable__V2__CheckAndMutateRowResponse *resp;
	Google__Bigtable__V2__RowFilter f[4], *fp[3] = { &f[1], &f[2], &f[3] };
	Google__Bigtable__V2__RowFilter__Chain chain = GOOGLE__BIGTABLE__V2__ROW_FILTER__CHAIN__INIT;
	Google__Bigtable__V2__ColumnRange cr = GOOGLE__BIGTABLE__V2__COLUMN_RANGE__INIT;
	Google__Bigtable__V2__ValueRange vr = GOOGLE__BIGTABLE__V2__VALUE_RANGE__INIT;
	struct bt_schema *s;
	struct msgs gt, gf;
	struct bt_target to;
	int rc;

	if ((rc = begin(t, table, row, &s, &to, false)))
		return rc;
	rc = bt_schema_family(s, pred->family) < 0 ? -ENOENT : 0;
	if (!rc && pred->qualifier.len > CS_MAX_QUALIFIER)
		rc = -ENAMETOOLONG;
	if (!rc && !(rc = build(t->st, s, true_m, n_true, &gt)) && (rc = build(t->st, s, false_m, n_false, &gf)))
		msgs_free(&gt);
	bt_schema_put(s);
	if (rc)
		return rc;
	for (int i = 0; i < 4; i++)
		google__bigtable__v2__row_filter__init(&f[i]);
	cr.family_name = (char *)pred->family;
	cr.start_qualifier_case = GOOGLE__BIGTABLE__V2__COLUMN_RANGE__START_QUALIFIER_START_QUALIFIER_CLOSED;
	cr.start_qualifier_closed = (ProtobufCBinaryData){ pred->qualifier.len, (uint8_t *)pred->qualifier.data };
	cr.end_qualifier_case = GOOGLE__BIGTABLE__V2__COLUMN_RANGE__END_QUALIFIER_END_QUALIFIER_CLOSED;
	cr.end_qualifier_closed = cr.start_qualifier_closed;
	f[1].filter_case = GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_COLUMN_RANGE_FILTER;
	f[1].column_range_filter = &cr;
	f[2].filter_case = GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_CELLS_PER_COLUMN_LIMIT_FILTER;
	f[2].cells_per_column_limit_filter = 1;
	chain.n_filters = 2;
	if (pred->value_equals) {
		vr.start_value_case = GOOGLE__BIGTABLE__V2__VALUE_RANGE__START_VALUE_START_VALUE_CLOSED;
		vr.start_value_closed = (ProtobufCBinaryData){ pred->value_equals->len, (uint8_t *)pred->value_equals->data };
		vr.end_value_case = GOOGLE__BIGTABLE__V2__VALUE_RANGE__END_VALUE_END_VALUE_CLOSED;
		vr.end_value_closed = vr.start_value_closed;
		f[3].filter_case = GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_VALUE_RANGE_FILTER;
		f[3].value_range_filter = &vr;
		chain.n_filters = 3;
	}
	chain.filters = fp;
	f[0].filter_case = GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_CHAIN;
	f[0].chain = &chain;
	req.table_name = to.name;
	req.app_profile_id = (char *)btr_app_profile(t->st->c);
	req.row_key = (ProtobufCBinaryData){ row.len, (uint8_t *)row.data };
	req.predicate_filter = &f[0];
	req.n_true_mutations = gt.n;
	req.true_mutations = gt.mp;
	req.n_false_mutations = gf.n;
	req.false_mutations = gf.mp;
	bt_rows_forget(t->st, table, row.data, row.len);
	rc = bt_wrote(t, data_call(t->st, &to, DATA "CheckAndMutateRow", &req.base,
				   &google__bigtable__v2__check_and_mutate_row_response__descriptor, (ProtobufCMessage **)&resp, false));
	msgs_free(&gt);
	msgs_free(&gf);
	if (rc)
		return rc;
	if (matched)
		*matched = resp->predicate_matched;
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	return 0;
}

/* ---- the bulk loader ----------------------------------------------------------------------------------- */

struct bcell {
	int fam;
	bool agg;
	size_t qoff, qlen, voff, vlen;
	int64_t ts;
};

struct bentry {
	size_t koff, klen;
	size_t first, n; /* cells [first, first + n) */
	bool ok;
};

/* One batch of cells: what one MutateRows sends. */
struct batch {
	uint8_t *buf; /* row keys, qualifiers, values */
	size_t bufn, bufcap;
	struct bcell *cells;
	size_t ncells, cellcap;
	struct bentry *ents;
	size_t nents, entcap;
	size_t nmut;
};

/* A loader fills one batch while the one before is being sent (by a thread of its own), so that the
 * client's work and the service's overlap. */
struct bt_bulk {
	bt_txn *txn;
	struct bt_schema *s;
	struct bt_target to;
	const char *table;     /* (the schema's copy of the name) */
	struct batch cur, out; /* filling; being sent (while busy) */
	pthread_t th;
	bool busy;
	btw_buf req;           /* the sent batch's request, encoded (by the sender) */
	int out_rc;            /* the sent batch's outcome, and the service's words for it */
	btr_status out_last;
	struct batch *sending; /* the batch send() sends (out) */
	cs_bulk_stats stats;
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 64;
	void *q;
	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if (!(q = mem_realloc(*p, c * size)))
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

/* Cell C of BQ as the encoder takes it. */
static btw_cell wire_cell(const struct bt_bulk *b, const struct batch *bq, const struct bcell *c)
{
	const char *fam = b->s->info->families[c->fam].name;
	btw_cell w = {
		.family = fam, .family_len = strlen(fam),
		.qualifier = bq->buf + c->qoff, .qualifier_len = c->qlen,
		.ts = c->ts, .agg = c->agg,
		.value = bq->buf + c->voff, .value_len = c->vlen,
	};
	if (c->agg) /* the 8-byte big-endian value, as AddToCell's int64 input */
		for (size_t k = 0; k < c->vlen; k++)
			w.input = (int64_t)((uint64_t)w.input << 8 | bq->buf[c->voff + k]);
	return w;
}

/* The MutateRowsRequest of BQ's entries not yet acknowledged into O (reset first); IDX[k] gets the batch
 * index of the request's entry k. Returns how many entries, or -ENOMEM. */
static ssize_t encode_batch(const struct bt_bulk *b, const struct batch *bq, btw_buf *o, size_t *idx)
{
	const char *profile = btr_app_profile(b->txn->st->c);
	size_t ne = 0;

	btw_buf_reset(o);
	btw_put_mutate_rows_head(o, b->to.name, profile);
	for (size_t i = 0; i < bq->nents; i++) {
		const struct bentry *x = &bq->ents[i];
		size_t size = 0;
		if (x->ok)
			continue;
		idx[ne++] = i;
		for (size_t j = x->first; j < x->first + x->n; j++) {
			btw_cell w = wire_cell(b, bq, &bq->cells[j]);
			size += btw_cell_size(&w);
		}
		btw_put_entry_head(o, bq->buf + x->koff, x->klen, size);
		for (size_t j = x->first; j < x->first + x->n; j++) {
			btw_cell w = wire_cell(b, bq, &bq->cells[j]);
			btw_put_cell(o, &w);
		}
	}
	return o->failed ? -ENOMEM : (ssize_t)ne;
}

/* Send the entries of M not yet acknowledged, once; *LEFT gets how many failed with a retryable status.
 * Returns 0, or the first non-retryable error. */
static int send_once(struct bt_mrows *m, size_t *left, btr_status *last)
{
	size_t *idx = NULL, ne = m->pending(m->arg), acks = 0;
	ssize_t n;
	btr_stream *s = NULL;
	int rc = -ENOMEM;

	*left = 0;
	if (!ne)
		return 0;
	if (!(idx = mem_calloc(ne, sizeof(*idx))))
		goto out;
	if ((n = m->encode(m->arg, m->req, idx)) < 0) {
		rc = (int)n;
		goto out;
	}
	if ((rc = btr_stream_open_bytes(m->st->c, BTR_DATA, DATA "MutateRows", m->req->p, m->req->n, m->routing, &s)))
		goto out;
	last->endpoint = btr_stream_status(s)->endpoint; /* (for a message of entries still failing) */
	for (;;) {
		Google__Bigtable__V2__MutateRowsResponse *r;
		rc = btr_stream_next(s, &google__bigtable__v2__mutate_rows_response__descriptor, (ProtobufCMessage **)&r);
		if (rc <= 0)
			break;
		for (size_t i = 0; i < r->n_entries && rc >= 0; i++) {
			const Google__Bigtable__V2__MutateRowsResponse__Entry *x = r->entries[i];
			int code = x->status ? x->status->code : 0;
			if (x->index < 0 || x->index >= n)
				continue;
			if (code == 0) {
				acks += m->ack(m->arg, idx[x->index]);
			} else { /* (a retryable one is the words of the last attempt, should it be the last) */
				last->code = (grpc_status_code)code;
				last->endpoint = btr_stream_status(s)->endpoint;
				snprintf(last->message, sizeof(last->message), "%s",
					 x->status->message ? x->status->message : "");
				if (!btr_retryable((grpc_status_code)code))
					rc = btr_errno((grpc_status_code)code);
			}
		}
		protobuf_c_message_free_unpacked(&r->base, NULL);
		if (rc < 0)
			break;
	}
	if (rc < 0 && rc != -ENOMEM && btr_status_retryable(btr_stream_status(s))) {
		rc = 0; /* the stream broke: what it did not acknowledge is sent again */
		*last = *btr_stream_status(s);
	} else if (rc < 0 && btr_stream_status(s)->code != GRPC_STATUS_OK)
		*last = *btr_stream_status(s);
	if (!rc)
		*left = ne - acks;
out:
	btr_stream_close(s);
	free(idx);
	return rc;
}

int bt_mutate_rows(struct bt_mrows *m, btr_status *last)
{
	size_t left = 0;
	int rc = 0;

	for (unsigned attempt = 1; attempt <= BULK_ATTEMPTS; attempt++) {
		if ((rc = send_once(m, &left, last)) || !left)
			break;
		if (btr_quiet(m->st->c)) { /* (the instance did not answer in time: no resend) */
			rc = -EIO;
			break;
		}
		if (attempt == BULK_ATTEMPTS) { /* (the code is the last failure's) */
			char was[sizeof(last->message)];
			rc = -EIO;
			snprintf(was, sizeof(was), "%s", last->message);
			snprintf(last->message, sizeof(last->message), "MutateRows: %zu rows still failing after %u "
				 "attempts%s%s", left, attempt, was[0] ? ", the last with: " : "", was);
			break;
		}
		struct timespec ts = { 0, (long)btr_backoff_ms(attempt) * 1000000L };
		nanosleep(&ts, NULL);
	}
	return rc;
}

/* The bulk loader's batch as bt_mutate_rows() sees it. */
static size_t batch_pending(void *arg)
{
	const struct batch *bq = ((struct bt_bulk *)arg)->sending;
	size_t ne = 0;
	for (size_t i = 0; i < bq->nents; i++)
		ne += !bq->ents[i].ok;
	return ne;
}

static ssize_t batch_encode(void *arg, btw_buf *o, size_t *idx)
{
	const struct bt_bulk *b = arg;
	return encode_batch(b, b->sending, o, idx);
}

static bool batch_ack(void *arg, size_t i)
{
	struct bentry *e = &((struct bt_bulk *)arg)->sending->ents[i];
	bool was = e->ok;
	e->ok = true;
	return !was;
}

/* Send batch Q, retrying what fails with a retryable status: 0, or the error (*LAST: the service's words). */
static int send(struct bt_bulk *b, struct batch *q, btr_status *last)
{
	struct bt_mrows m = { .st = b->txn->st, .routing = b->to.routing, .req = &b->req, .arg = b,
			      .pending = batch_pending, .encode = batch_encode, .ack = batch_ack };
	b->sending = q;
	return bt_mutate_rows(&m, last);
}

static void *sender(void *arg)
{
	struct bt_bulk *b = arg;
	b->out_rc = send(b, &b->out, &b->out_last);
	return NULL;
}

/* The cells of Q's entries (rows) the service acknowledged. */
static uint64_t acked(const struct batch *q)
{
	uint64_t n = 0;
	for (size_t i = 0; i < q->nents; i++)
		n += q->ents[i].ok ? q->ents[i].n : 0;
	return n;
}

/* Wait for the batch being sent, if any: its outcome (recorded in the transaction). */
static int wait_sent(struct bt_bulk *b)
{
	if (!b->busy)
		return 0;
	pthread_join(b->th, NULL);
	b->busy = false;
	b->stats.put += acked(&b->out);
	if (b->out_rc)
		return bt_wrote(b->txn, bt_fail(b->out_rc, &b->out_last, NULL));
	return bt_wrote(b->txn, 0);
}

/* Hand the batch filled to the sender, once the one before it is sent; SYNC: and wait for it too. */
static int flush(struct bt_bulk *b, bool sync)
{
	struct batch t;
	int rc = wait_sent(b);

	if (rc || !b->cur.ncells)
		return rc;
	t = b->out; /* (its buffers are reused for the next batch) */
	b->out = b->cur;
	b->cur = t;
	b->cur.bufn = b->cur.ncells = b->cur.nents = b->cur.nmut = 0;
	b->out_rc = 0;
	b->out_last = (btr_status){ .code = GRPC_STATUS_OK };
	if (!sync && !pthread_create(&b->th, NULL, sender, b)) {
		b->busy = true;
		return 0;
	}
	sender(b); /* (the last batch, or no thread to be had: sent from here) */
	b->stats.put += acked(&b->out);
	return b->out_rc ? bt_wrote(b->txn, bt_fail(b->out_rc, &b->out_last, NULL)) : bt_wrote(b->txn, 0);
}

int bt_bulk_open(void *txn, const char *table, void **out)
{
	bt_txn *t = txn;
	struct bt_bulk *b;
	int rc;

	bt_clear_error();
	if ((rc = bt_write_check(t)) || (rc = bt_defer_flush(t->st, table)))
		return rc;
	if (!(b = mem_calloc(1, sizeof(*b))))
		return -ENOMEM;
	b->txn = t;
	if ((rc = bt_schema_get(t->st, table, &b->s)) || !(b->table = b->s->info->name) ||
	    (rc = bt_target(t->st, table, &b->to))) {
		bt_schema_put(b->s);
		free(b);
		return rc;
	}
	*out = b;
	return 0;
}

int bt_bulk_put(void *p, cs_bytes row, const char *family, cs_bytes qualifier, int64_t ts, cs_bytes value)
{
	struct bt_bulk *b = p;
	struct bentry *last;
	bool same_row;
	int rc, fam;

	if ((rc = bt_write_check(b->txn)))
		return rc;
	if ((rc = check_row(row)))
		return rc;
	if (qualifier.len > CS_MAX_QUALIFIER)
		return -ENAMETOOLONG;
	if ((rc = cell_ts(ts, &ts)))
		return rc;
	if (value.len > b->txn->st->max_value)
		return -EFBIG;
	if ((fam = family ? bt_schema_family(b->s, family) : -1) < 0)
		return -ENOENT;
	if (b->s->info->families[fam].type != CS_TYPE_BYTES && value.len != 8)
		return -EINVAL;
	if (b->cur.nmut && (b->cur.bufn + row.len + qualifier.len + value.len > BATCH_BYTES || b->cur.nmut + 2 > BATCH_MUTATIONS) &&
	    (rc = flush(b, false)))
		return rc;
	last = b->cur.nents ? &b->cur.ents[b->cur.nents - 1] : NULL;
	same_row = last && last->klen == row.len && !memcmp(b->cur.buf + last->koff, row.data, row.len);
	if (grow((void **)&b->cur.buf, &b->cur.bufcap, b->cur.bufn + row.len + qualifier.len + value.len, 1) ||
	    grow((void **)&b->cur.cells, &b->cur.cellcap, b->cur.ncells + 1, sizeof(*b->cur.cells)) ||
	    grow((void **)&b->cur.ents, &b->cur.entcap, b->cur.nents + 1, sizeof(*b->cur.ents)))
		return bt_wrote(b->txn, -ENOMEM);
	if (!same_row) {
		struct bentry *e = &b->cur.ents[b->cur.nents++];
		bt_rows_forget(b->txn->st, b->table, row.data, row.len);
		e->koff = b->cur.bufn;
		e->klen = row.len;
		e->first = b->cur.ncells;
		e->n = 0;
		e->ok = false;
		memcpy(b->cur.buf + b->cur.bufn, row.data, row.len);
		b->cur.bufn += row.len;
	}
	{
		struct bcell *c = &b->cur.cells[b->cur.ncells++];
		c->fam = fam;
		c->agg = b->s->info->families[fam].type != CS_TYPE_BYTES;
		c->ts = ts;
		c->qoff = b->cur.bufn;
		c->qlen = qualifier.len;
		if (qualifier.len)
			memcpy(b->cur.buf + b->cur.bufn, qualifier.data, qualifier.len);
		b->cur.bufn += qualifier.len;
		c->voff = b->cur.bufn;
		c->vlen = value.len;
		if (value.len)
			memcpy(b->cur.buf + b->cur.bufn, value.data, value.len);
		b->cur.bufn += value.len;
		b->cur.nmut += c->agg ? 2 : 1;
		b->cur.ents[b->cur.nents - 1].n++;
	}
	return 0;
}

void bt_bulk_get_stats(const void *p, cs_bulk_stats *stats)
{
	*stats = ((const struct bt_bulk *)p)->stats;
}

int bt_bulk_flush(void *p)
{
	struct bt_bulk *b = p;
	int rc = bt_write_check(b->txn);

	if (rc) /* (the earlier failure's words stay) */
		return rc;
	bt_clear_error();
	if ((rc = bt_defer_flush(b->txn->st, b->table)))
		return rc;
	return flush(b, true);
}

void bt_bulk_close(void *p)
{
	struct bt_bulk *b = p;
	if (!b)
		return;
	if (!b->txn->err)
		flush(b, true); /* (an error is the transaction's: commit returns it) */
	wait_sent(b);
	bt_schema_put(b->s);
	free(b->cur.buf);
	free(b->cur.cells);
	free(b->cur.ents);
	free(b->out.buf);
	free(b->out.cells);
	free(b->out.ents);
	btw_buf_free(&b->req);
	free(b);
}
