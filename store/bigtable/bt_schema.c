/* bt_schema.c — tables and families through Bigtable's Table Admin API, the meta rows that keep what its
 * schema has no place for (delimiter, creation time: BT_META_TABLE), GC rules (bt_gcrule.c) and value
 * types, and the schema cache (admin calls are rate-limited: a schema is read again only when older than the store's
 * TTL, or after this process changed it). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin.pb-c.h"
#include "bigtable.pb-c.h"
#include "bt_internal.h"
#include "btm.h"
#include "mem.h"

#define ADMIN "/google.bigtable.admin.v2.BigtableTableAdmin/"

struct bt_cache {
	pthread_mutex_t lock;
	size_t n, cap;
	struct bt_schema **v; /* v[i]->info->name: the tables cached */
};

int bt_cache_new(struct bt_cache **out)
{
	struct bt_cache *c = mem_calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	*out = c;
	return 0;
}

void bt_schema_put(struct bt_schema *s)
{
	if (!s || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL))
		return;
	for (size_t i = 0; s->gc && i < s->info->nfamilies; i++)
		gcp_free(s->gc[i]);
	free(s->gc);
	cs_table_info_free(s->info);
	free(s);
}

void bt_cache_free(struct bt_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		bt_schema_put(c->v[i]);
	free(c->v);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

int bt_schema_family(const struct bt_schema *s, const char *family)
{
	size_t lo = 0, hi = s->info->nfamilies;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(s->info->families[mid].name, family);
		if (c == 0)
			return (int)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

void bt_schema_forget(bt_store *st, const char *table)
{
	struct bt_cache *c = st->cache;
	bt_rows_forget(st, table, NULL, 0); /* (what was read under the old schema) */
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i]->info->name, table)) {
			bt_schema_put(c->v[i]);
			c->v[i] = c->v[--c->n];
			break;
		}
	pthread_mutex_unlock(&c->lock);
}

/* ---- value types ------------------------------------------------------------------------------------ */

struct type_buf { /* the messages of an aggregate type over int64, owned by the caller's stack */
	Google__Bigtable__Admin__V2__Type type, input;
	Google__Bigtable__Admin__V2__Type__Aggregate agg;
	Google__Bigtable__Admin__V2__Type__Aggregate__Sum sum;
	Google__Bigtable__Admin__V2__Type__Aggregate__Min min;
	Google__Bigtable__Admin__V2__Type__Aggregate__Max max;
	Google__Bigtable__Admin__V2__Type__Int64 i64;
};

/* TYPE as Bigtable's value type, or NULL for plain bytes. */
static Google__Bigtable__Admin__V2__Type *type_of(cs_value_type type, struct type_buf *b)
{
	if (type == CS_TYPE_BYTES)
		return NULL;
	google__bigtable__admin__v2__type__init(&b->type);
	google__bigtable__admin__v2__type__init(&b->input);
	google__bigtable__admin__v2__type__aggregate__init(&b->agg);
	google__bigtable__admin__v2__type__int64__init(&b->i64);
	b->input.kind_case = GOOGLE__BIGTABLE__ADMIN__V2__TYPE__KIND_INT64_TYPE;
	b->input.int64_type = &b->i64;
	b->agg.input_type = &b->input;
	if (type == CS_TYPE_INTSUM) {
		google__bigtable__admin__v2__type__aggregate__sum__init(&b->sum);
		b->agg.aggregator_case = GOOGLE__BIGTABLE__ADMIN__V2__TYPE__AGGREGATE__AGGREGATOR_SUM;
		b->agg.sum = &b->sum;
	} else if (type == CS_TYPE_INTMIN) {
		google__bigtable__admin__v2__type__aggregate__min__init(&b->min);
		b->agg.aggregator_case = GOOGLE__BIGTABLE__ADMIN__V2__TYPE__AGGREGATE__AGGREGATOR_MIN;
		b->agg.min = &b->min;
	} else {
		google__bigtable__admin__v2__type__aggregate__max__init(&b->max);
		b->agg.aggregator_case = GOOGLE__BIGTABLE__ADMIN__V2__TYPE__AGGREGATE__AGGREGATOR_MAX;
		b->agg.max = &b->max;
	}
	b->type.kind_case = GOOGLE__BIGTABLE__ADMIN__V2__TYPE__KIND_AGGREGATE_TYPE;
	b->type.aggregate_type = &b->agg;
	return &b->type;
}

/* The value type T stands for. Errors: -EOPNOTSUPP (a type cellfs does not have: HyperLogLog, strings). */
static int type_from(const Google__Bigtable__Admin__V2__Type *t, cs_value_type *out)
{
	*out = CS_TYPE_BYTES;
	if (!t || t->kind_case == GOOGLE__BIGTABLE__ADMIN__V2__TYPE__KIND__NOT_SET ||
	    t->kind_case == GOOGLE__BIGTABLE__ADMIN__V2__TYPE__KIND_BYTES_TYPE)
		return 0;
	if (t->kind_case != GOOGLE__BIGTABLE__ADMIN__V2__TYPE__KIND_AGGREGATE_TYPE)
		return -EOPNOTSUPP;
	switch (t->aggregate_type->aggregator_case) {
	case GOOGLE__BIGTABLE__ADMIN__V2__TYPE__AGGREGATE__AGGREGATOR_SUM:
		*out = CS_TYPE_INTSUM;
		return 0;
	case GOOGLE__BIGTABLE__ADMIN__V2__TYPE__AGGREGATE__AGGREGATOR_MIN:
		*out = CS_TYPE_INTMIN;
		return 0;
	case GOOGLE__BIGTABLE__ADMIN__V2__TYPE__AGGREGATE__AGGREGATOR_MAX:
		*out = CS_TYPE_INTMAX;
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

/* ---- calls ------------------------------------------------------------------------------------------- */

static int admin(bt_store *st, const char *method, const char *key, const char *resource,
		 const ProtobufCMessage *req, const ProtobufCMessageDescriptor *desc, ProtobufCMessage **resp,
		 unsigned flags)
{
	char routing[BTR_NAME_MAX * 3 + 64];
	btr_status status;
	ProtobufCMessage *r = NULL;
	int rc = btr_routing(st->c, BTR_ADMIN, key, resource, routing, sizeof(routing));
	if (!rc)
		rc = btr_unary(st->c, BTR_ADMIN, method, req, desc, &r, routing, flags, &status);
	if (rc)
		return bt_fail(rc, &status, NULL);
	if (resp)
		*resp = r;
	else
		protobuf_c_message_free_unpacked(r, NULL);
	return 0;
}

static int table_name(bt_store *st, const char *table, char *buf)
{
	if (cs_check_table_name(table))
		return -EINVAL;
	return btr_table_name(st->c, table, buf, BTR_NAME_MAX);
}

/* Read the meta row of TABLE: its delimiter and creation time (defaults when there is none). */
static int meta_read(bt_store *st, const char *table, char *delim, int64_t *created)
{
	struct bt_target to;
	Google__Bigtable__V2__ReadRowsRequest req = GOOGLE__BIGTABLE__V2__READ_ROWS_REQUEST__INIT;
	Google__Bigtable__V2__RowSet rows = GOOGLE__BIGTABLE__V2__ROW_SET__INIT;
	ProtobufCBinaryData key = { strlen(table), (uint8_t *)table };
	btr_stream *s = NULL;
	btm *m = NULL;
	int rc;

	*delim = CS_DEFAULT_DELIM;
	*created = 0;
	if ((rc = bt_target(st, BT_META_TABLE, &to)))
		return rc;
	req.table_name = to.name;
	req.app_profile_id = (char *)btr_app_profile(st->c);
	rows.n_row_keys = 1;
	rows.row_keys = &key;
	req.rows = &rows;
	if ((rc = btm_new(&m, false)) ||
	    (rc = btr_stream_open(st->c, BTR_DATA, "/google.bigtable.v2.Bigtable/ReadRows", &req.base, to.routing, &s)))
		goto out;
	for (;;) {
		Google__Bigtable__V2__ReadRowsResponse *resp;
		rc = btr_stream_next(s, &google__bigtable__v2__read_rows_response__descriptor, (ProtobufCMessage **)&resp);
		if (rc <= 0)
			break;
		for (size_t i = 0; i < resp->n_chunks && rc >= 0; i++) {
			const Google__Bigtable__V2__ReadRowsResponse__CellChunk *c = resp->chunks[i];
			btm_chunk ch;
			bt_chunk(c, &ch);
			const btm_row *row;
			if ((rc = btm_feed(m, &ch, &row)) == 1) {
				btr_count_rows(st->c, 1, row->ncells);
				for (size_t j = 0; j < row->ncells; j++) {
					const btm_cell *cell = &row->cells[j];
					if (cell->qualifier_len == 5 && !memcmp(cell->qualifier, "delim", 5) && cell->value_len == 1)
						*delim = (char)cell->value[0];
					else if (cell->qualifier_len == 7 && !memcmp(cell->qualifier, "created", 7) &&
						 cell->value_len < 24) {
						char num[24];
						memcpy(num, cell->value, cell->value_len);
						num[cell->value_len] = '\0';
						*created = strtoll(num, NULL, 10);
					}
				}
			}
		}
		protobuf_c_message_free_unpacked(&resp->base, NULL);
		if (rc < 0)
			break;
	}
	if (rc == 0)
		rc = btm_end(m);
	if (rc == -ENOENT) /* no meta table: nobody gave any table a delimiter or a creation time */
		rc = 0;
out:
	btr_stream_close(s);
	btm_free(m);
	return rc < 0 ? bt_fail(rc, NULL, "reading the table's delimiter and creation time") : 0;
}

/* Write (or, with DELIM 0, delete) the meta row of TABLE, creating the meta table on first use. */
static int meta_write(bt_store *st, const char *table, char delim, int64_t created)
{
	struct bt_target to;
	char num[24];
	Google__Bigtable__V2__MutateRowRequest req = GOOGLE__BIGTABLE__V2__MUTATE_ROW_REQUEST__INIT;
	Google__Bigtable__V2__Mutation mut[2], *mp[2] = { &mut[0], &mut[1] };
	Google__Bigtable__V2__Mutation__SetCell set[2];
	Google__Bigtable__V2__Mutation__DeleteFromRow del = GOOGLE__BIGTABLE__V2__MUTATION__DELETE_FROM_ROW__INIT;
	btr_status status;
	ProtobufCMessage *resp;
	int rc;

	if ((rc = bt_target(st, BT_META_TABLE, &to)))
		return rc;
	req.table_name = to.name;
	req.app_profile_id = (char *)btr_app_profile(st->c);
	req.row_key = (ProtobufCBinaryData){ strlen(table), (uint8_t *)table };
	req.mutations = mp;
	for (int i = 0; i < 2; i++)
		google__bigtable__v2__mutation__init(&mut[i]);
	if (!delim) {
		mut[0].mutation_case = GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_DELETE_FROM_ROW;
		mut[0].delete_from_row = &del;
		req.n_mutations = 1;
	} else {
		snprintf(num, sizeof(num), "%" PRId64, created);
		for (int i = 0; i < 2; i++) {
			google__bigtable__v2__mutation__set_cell__init(&set[i]);
			set[i].family_name = BT_META_FAMILY;
			set[i].timestamp_micros = 0;
			mut[i].mutation_case = GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_SET_CELL;
			mut[i].set_cell = &set[i];
		}
		set[0].column_qualifier = (ProtobufCBinaryData){ 5, (uint8_t *)"delim" };
		set[0].value = (ProtobufCBinaryData){ 1, (uint8_t *)&delim };
		set[1].column_qualifier = (ProtobufCBinaryData){ 7, (uint8_t *)"created" };
		set[1].value = (ProtobufCBinaryData){ strlen(num), (uint8_t *)num };
		req.n_mutations = 2;
	}
	for (int attempt = 0; attempt < 2; attempt++) {
		rc = btr_unary(st->c, BTR_DATA, "/google.bigtable.v2.Bigtable/MutateRow", &req.base,
			       &google__bigtable__v2__mutate_row_response__descriptor, &resp, to.routing, BTR_IDEMPOTENT,
			       &status);
		if (rc == 0)
			protobuf_c_message_free_unpacked(resp, NULL);
		if (rc != -ENOENT || !delim || attempt)
			break;
		{ /* the meta table does not exist yet: make it (maxversions=1), then write again */
			Google__Bigtable__Admin__V2__CreateTableRequest creq =
				GOOGLE__BIGTABLE__ADMIN__V2__CREATE_TABLE_REQUEST__INIT;
			Google__Bigtable__Admin__V2__Table t = GOOGLE__BIGTABLE__ADMIN__V2__TABLE__INIT;
			Google__Bigtable__Admin__V2__ColumnFamily cf = GOOGLE__BIGTABLE__ADMIN__V2__COLUMN_FAMILY__INIT;
			Google__Bigtable__Admin__V2__GcRule one = GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__INIT;
			Google__Bigtable__Admin__V2__Table__ColumnFamiliesEntry e =
				GOOGLE__BIGTABLE__ADMIN__V2__TABLE__COLUMN_FAMILIES_ENTRY__INIT, *ep = &e;
			one.rule_case = GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__RULE_MAX_NUM_VERSIONS;
			one.max_num_versions = 1;
			cf.gc_rule = &one;
			e.key = BT_META_FAMILY;
			e.value = &cf;
			t.n_column_families = 1;
			t.column_families = &ep;
			creq.parent = (char *)btr_instance_name(st->c);
			creq.table_id = BT_META_TABLE;
			creq.table = &t;
			rc = admin(st, ADMIN "CreateTable", "parent", creq.parent, &creq.base,
				   &google__bigtable__admin__v2__table__descriptor, NULL, 0);
			if (rc && rc != -EEXIST)
				break;
		}
	}
	if (rc == -ENOENT && !delim)
		rc = 0;
	return bt_fail(rc, &status, NULL);
}

/* Read TABLE's schema from Bigtable. */
static int schema_fetch(bt_store *st, const char *table, struct bt_schema **out)
{
	char name[BTR_NAME_MAX];
	Google__Bigtable__Admin__V2__GetTableRequest req = GOOGLE__BIGTABLE__ADMIN__V2__GET_TABLE_REQUEST__INIT;
	Google__Bigtable__Admin__V2__Table *t = NULL;
	struct bt_schema *s;
	cs_table_info *info;
	int rc;

	if ((rc = table_name(st, table, name)))
		return rc == -EINVAL ? -ENOENT : rc;
	req.name = name;
	req.view = GOOGLE__BIGTABLE__ADMIN__V2__TABLE__VIEW__SCHEMA_VIEW;
	if ((rc = admin(st, ADMIN "GetTable", "name", name, &req.base, &google__bigtable__admin__v2__table__descriptor,
			(ProtobufCMessage **)&t, BTR_IDEMPOTENT)))
		return rc;
	s = mem_calloc(1, sizeof(*s));
	info = mem_calloc(1, sizeof(*info));
	if (!s || !info || !(info->name = mem_strdup(table)))
		goto nomem;
	s->info = info;
	s->refs = 1;
	if (t->n_column_families &&
	    (!(info->families = mem_calloc(t->n_column_families, sizeof(*info->families))) ||
	     !(s->gc = mem_calloc(t->n_column_families, sizeof(*s->gc)))))
		goto nomem;
	for (size_t i = 0; i < t->n_column_families; i++) {
		const Google__Bigtable__Admin__V2__Table__ColumnFamiliesEntry *e = t->column_families[i];
		cs_family_info *f;
		char *text = NULL;
		size_t textn = 0;
		FILE *mf;
		size_t j = info->nfamilies;

		/* insertion in name order (families come in any order) */
		while (j > 0 && strcmp(info->families[j - 1].name, e->key) > 0) {
			info->families[j] = info->families[j - 1];
			s->gc[j] = s->gc[j - 1];
			j--;
		}
		f = &info->families[j];
		memset(f, 0, sizeof(*f));
		s->gc[j] = NULL;
		info->nfamilies++;
		if (!(f->name = mem_strdup(e->key)))
			goto nomem;
		if ((rc = type_from(e->value ? e->value->value_type : NULL, &f->type))) {
			bt_fail(rc, NULL, "a family has a value type cellfs does not support");
			goto fail;
		}
		if (!(mf = mem_open_memstream(&text, &textn)))
			goto nomem;
		bt_gcrule_text(mf, e->value ? e->value->gc_rule : NULL);
		if (fclose(mf) || !text)
			goto nomem;
		rc = gcp_parse_stored(text, &s->gc[j], NULL);
		free(text);
		if (rc == -ENOMEM)
			goto nomem;
		if (rc) {
			bt_fail(-EIO, NULL, "a family's GC rule cannot be read as a policy");
			rc = -EIO;
			goto fail;
		}
		/* cbt shows a family with no rule at all (gc_rule absent: made by a client that sent none) as
		 * "<never>", one with an empty rule (cbt's own "never") as "" (the Go client's GCRuleToString) */
		if (!(f->gc = gcp_format(s->gc[j])) ||
		    !(f->gc_cbt = e->value && e->value->gc_rule ? gcp_format_cbt(s->gc[j]) : mem_strdup("<never>")))
			goto nomem;
	}
	protobuf_c_message_free_unpacked(&t->base, NULL);
	t = NULL;
	if ((rc = meta_read(st, table, &info->delim, &info->created)))
		goto fail;
	s->fetched_ms = bt_mono_ms();
	*out = s;
	return 0;
nomem:
	rc = -ENOMEM;
fail:
	if (t)
		protobuf_c_message_free_unpacked(&t->base, NULL);
	if (s && !s->info)
		cs_table_info_free(info);
	if (s) {
		s->refs = 1;
		bt_schema_put(s);
	} else {
		cs_table_info_free(info);
	}
	return rc;
}

int bt_schema_get(bt_store *st, const char *table, struct bt_schema **out)
{
	struct bt_cache *c = st->cache;
	struct bt_schema *s = NULL;
	int64_t now = bt_mono_ms();
	int rc;

	if (!strcmp(table, BT_META_TABLE))
		return -ENOENT;
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i]->info->name, table)) {
			if (now - c->v[i]->fetched_ms < (int64_t)st->ttl_ms) {
				s = c->v[i];
				__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
			}
			break;
		}
	pthread_mutex_unlock(&c->lock);
	if (s) {
		*out = s;
		return 0;
	}
	if ((rc = schema_fetch(st, table, &s)))
		return rc;
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i]->info->name, table)) {
			bt_schema_put(c->v[i]);
			c->v[i] = c->v[--c->n];
			break;
		}
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 8;
		struct bt_schema **v = mem_realloc(c->v, cap * sizeof(*v));
		if (v)
			c->v = v, c->cap = cap;
	}
	if (c->n < c->cap) {
		__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
		c->v[c->n++] = s;
	}
	pthread_mutex_unlock(&c->lock);
	*out = s;
	return 0;
}

int bt_table_info_get(void *txn, const char *name, cs_table_info **out)
{
	bt_txn *t = txn;
	struct bt_schema *s;
	cs_table_info *info;
	int rc;

	bt_clear_error();
	if ((rc = bt_schema_get(t->st, name, &s)))
		return rc;
	rc = -ENOMEM;
	if (!(info = mem_calloc(1, sizeof(*info))) || !(info->name = mem_strdup(s->info->name)))
		goto out;
	info->delim = s->info->delim;
	info->created = s->info->created;
	if (s->info->nfamilies && !(info->families = mem_calloc(s->info->nfamilies, sizeof(*info->families))))
		goto out;
	for (size_t i = 0; i < s->info->nfamilies; i++) {
		const cs_family_info *f = &s->info->families[i];
		cs_family_info *g = &info->families[i];
		info->nfamilies++;
		g->type = f->type;
		if (!(g->name = mem_strdup(f->name)) || !(g->gc = mem_strdup(f->gc)) || !(g->gc_cbt = mem_strdup(f->gc_cbt)))
			goto out;
	}
	*out = info;
	info = NULL;
	rc = 0;
out:
	cs_table_info_free(info);
	bt_schema_put(s);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int bt_table_list(void *txn, char ***names, size_t *n)
{
	bt_txn *t = txn;
	Google__Bigtable__Admin__V2__ListTablesRequest req = GOOGLE__BIGTABLE__ADMIN__V2__LIST_TABLES_REQUEST__INIT;
	char *token = NULL, **v = NULL;
	size_t nv = 0, cap = 0;
	const char *parent = btr_instance_name(t->st->c);
	size_t pn = strlen(parent);
	int rc = 0;

	bt_clear_error();
	req.parent = (char *)parent;
	req.view = GOOGLE__BIGTABLE__ADMIN__V2__TABLE__VIEW__NAME_ONLY;
	do {
		Google__Bigtable__Admin__V2__ListTablesResponse *resp;
		req.page_token = token ? token : "";
		rc = admin(t->st, ADMIN "ListTables", "parent", parent, &req.base,
			   &google__bigtable__admin__v2__list_tables_response__descriptor, (ProtobufCMessage **)&resp,
			   BTR_IDEMPOTENT);
		free(token);
		token = NULL;
		if (rc)
			break;
		for (size_t i = 0; i < resp->n_tables && !rc; i++) {
			const char *full = resp->tables[i]->name, *id;
			if (strncmp(full, parent, pn) || strncmp(full + pn, "/tables/", 8))
				continue;
			id = full + pn + 8;
			if (!strcmp(id, BT_META_TABLE))
				continue;
			if (nv == cap) {
				char **w = mem_realloc(v, (cap = cap ? 2 * cap : 16) * sizeof(*w));
				if (!w) {
					rc = -ENOMEM;
					break;
				}
				v = w;
			}
			if (!(v[nv] = mem_strdup(id)))
				rc = -ENOMEM;
			else
				nv++;
		}
		if (!rc && resp->next_page_token && *resp->next_page_token && !(token = mem_strdup(resp->next_page_token)))
			rc = -ENOMEM;
		protobuf_c_message_free_unpacked(&resp->base, NULL);
	} while (!rc && token);
	free(token);
	if (rc) {
		cs_strv_free(v, nv);
		return rc;
	}
	if (nv)
		qsort(v, nv, sizeof(*v), cmp_str);
	*names = v;
	*n = nv;
	return 0;
}

/* Create TABLE with the N families FAMS (name, policy text, type). */
static int create(bt_txn *t, const char *table, const cs_family_info *fams, size_t n, char delim, int64_t created)
{
	Google__Bigtable__Admin__V2__CreateTableRequest req = GOOGLE__BIGTABLE__ADMIN__V2__CREATE_TABLE_REQUEST__INIT;
	Google__Bigtable__Admin__V2__Table tab = GOOGLE__BIGTABLE__ADMIN__V2__TABLE__INIT;
	Google__Bigtable__Admin__V2__Table__ColumnFamiliesEntry *e = NULL, **ep = NULL;
	Google__Bigtable__Admin__V2__ColumnFamily *cf = NULL;
	struct type_buf *tb = NULL;
	int rc;

	bt_clear_error();
	if ((rc = bt_write_check(t)))
		return rc;
	if (cs_check_table_name(table) || !strcmp(table, BT_META_TABLE))
		return -EINVAL;
	if (n && (!(e = mem_calloc(n, sizeof(*e))) || !(ep = mem_calloc(n, sizeof(*ep))) || !(cf = mem_calloc(n, sizeof(*cf))) ||
		  !(tb = mem_calloc(n, sizeof(*tb))))) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		google__bigtable__admin__v2__table__column_families_entry__init(&e[i]);
		google__bigtable__admin__v2__column_family__init(&cf[i]);
		if (cs_check_family_name(fams[i].name)) {
			rc = -EINVAL;
			goto out;
		}
		if ((rc = bt_gcrule_parse(fams[i].gc, &cf[i].gc_rule)))
			goto out;
		cf[i].value_type = type_of(fams[i].type, &tb[i]);
		e[i].key = fams[i].name;
		e[i].value = &cf[i];
		ep[i] = &e[i];
	}
	tab.n_column_families = n;
	tab.column_families = ep;
	tab.granularity = GOOGLE__BIGTABLE__ADMIN__V2__TABLE__TIMESTAMP_GRANULARITY__MILLIS;
	req.parent = (char *)btr_instance_name(t->st->c);
	req.table_id = (char *)table;
	req.table = &tab;
	rc = bt_wrote(t, admin(t->st, ADMIN "CreateTable", "parent", req.parent, &req.base,
			       &google__bigtable__admin__v2__table__descriptor, NULL, 0));
	bt_schema_forget(t->st, table);
	bt_samples_forget(t->st, table);
	if (!rc && ((delim && delim != CS_DEFAULT_DELIM) || created))
		rc = bt_wrote(t, meta_write(t->st, table, delim ? delim : CS_DEFAULT_DELIM, created));
out:
	for (size_t i = 0; cf && i < n; i++)
		bt_gcrule_free(cf[i].gc_rule);
	free(e);
	free(ep);
	free(cf);
	free(tb);
	return rc;
}

int bt_table_create_as(void *txn, const cs_table_info *info)
{
	return create(txn, info->name, info->families, info->nfamilies, info->delim, info->created);
}

int bt_table_delete(void *txn, const char *table)
{
	bt_txn *t = txn;
	Google__Bigtable__Admin__V2__DeleteTableRequest req = GOOGLE__BIGTABLE__ADMIN__V2__DELETE_TABLE_REQUEST__INIT;
	char name[BTR_NAME_MAX];
	int rc;

	bt_clear_error();
	if ((rc = bt_write_check(t)) || (rc = bt_defer_flush(t->st, table)))
		return rc;
	if (!strcmp(table, BT_META_TABLE) || (rc = table_name(t->st, table, name)))
		return -ENOENT;
	req.name = name;
	rc = bt_wrote(t, admin(t->st, ADMIN "DeleteTable", "name", name, &req.base,
			       &google__protobuf__empty__descriptor, NULL, 0));
	bt_schema_forget(t->st, table);
	bt_samples_forget(t->st, table);
	if (!rc)
		rc = bt_wrote(t, meta_write(t->st, table, 0, 0));
	return rc;
}

/* One ModifyColumnFamilies of TABLE's FAMILY: create (CREATE), update its rule (!CREATE, GC), or drop
 * (GC NULL, !CREATE). */
static int modify(bt_txn *t, const char *table, const char *family, bool create_it, bool drop, const char *gc,
		  cs_value_type type)
{
	Google__Bigtable__Admin__V2__ModifyColumnFamiliesRequest req =
		GOOGLE__BIGTABLE__ADMIN__V2__MODIFY_COLUMN_FAMILIES_REQUEST__INIT;
	Google__Bigtable__Admin__V2__ModifyColumnFamiliesRequest__Modification mod =
		GOOGLE__BIGTABLE__ADMIN__V2__MODIFY_COLUMN_FAMILIES_REQUEST__MODIFICATION__INIT, *mp = &mod;
	Google__Bigtable__Admin__V2__ColumnFamily cf = GOOGLE__BIGTABLE__ADMIN__V2__COLUMN_FAMILY__INIT;
	struct type_buf tb;
	struct bt_schema *s;
	char name[BTR_NAME_MAX];
	int rc, idx;

	bt_clear_error();
	if ((rc = bt_write_check(t)) || (rc = bt_defer_flush(t->st, table)))
		return rc;
	if ((rc = bt_schema_get(t->st, table, &s)))
		return rc;
	idx = bt_schema_family(s, family);
	bt_schema_put(s);
	if (cs_check_family_name(family))
		return create_it ? -EINVAL : -ENOENT;
	if (create_it && idx >= 0)
		return -EEXIST;
	if (!create_it && idx < 0)
		return -ENOENT;
	if ((rc = table_name(t->st, table, name)))
		return rc;
	mod.id = (char *)family;
	if (drop) {
		mod.mod_case = GOOGLE__BIGTABLE__ADMIN__V2__MODIFY_COLUMN_FAMILIES_REQUEST__MODIFICATION__MOD_DROP;
		mod.drop = 1;
	} else {
		if ((rc = bt_gcrule_parse(gc, &cf.gc_rule)))
			return rc;
		if (create_it) {
			cf.value_type = type_of(type, &tb);
			mod.mod_case = GOOGLE__BIGTABLE__ADMIN__V2__MODIFY_COLUMN_FAMILIES_REQUEST__MODIFICATION__MOD_CREATE;
			mod.create = &cf;
		} else {
			mod.mod_case = GOOGLE__BIGTABLE__ADMIN__V2__MODIFY_COLUMN_FAMILIES_REQUEST__MODIFICATION__MOD_UPDATE;
			mod.update = &cf;
		}
	}
	req.name = name;
	req.n_modifications = 1;
	req.modifications = &mp;
	rc = bt_wrote(t, admin(t->st, ADMIN "ModifyColumnFamilies", "name", name, &req.base,
			       &google__bigtable__admin__v2__table__descriptor, NULL, 0));
	bt_gcrule_free(cf.gc_rule);
	bt_schema_forget(t->st, table);
	return rc;
}

int bt_family_create_typed(void *txn, const char *table, const char *family, const char *gc, cs_value_type type)
{
	if (type > CS_TYPE_INTMAX)
		return -EINVAL;
	return modify(txn, table, family, true, false, gc, type);
}

int bt_family_delete(void *txn, const char *table, const char *family)
{
	return modify(txn, table, family, false, true, NULL, CS_TYPE_BYTES);
}

int bt_family_set_gc(void *txn, const char *table, const char *family, const char *gc)
{
	return modify(txn, table, family, false, false, gc, CS_TYPE_BYTES);
}

int bt_drop_prefix(void *txn, const char *table, cs_bytes prefix)
{
	bt_txn *t = txn;
	Google__Bigtable__Admin__V2__DropRowRangeRequest req = GOOGLE__BIGTABLE__ADMIN__V2__DROP_ROW_RANGE_REQUEST__INIT;
	struct bt_schema *s;
	char name[BTR_NAME_MAX];
	int rc;

	bt_clear_error();
	if ((rc = bt_write_check(t)) || (rc = bt_defer_flush(t->st, table)))
		return rc;
	if ((rc = bt_schema_get(t->st, table, &s)))
		return rc;
	bt_schema_put(s);
	if (prefix.len > CS_MAX_ROW_KEY)
		return -ENAMETOOLONG;
	if ((rc = table_name(t->st, table, name)))
		return rc;
	req.name = name;
	if (prefix.len) {
		req.target_case = GOOGLE__BIGTABLE__ADMIN__V2__DROP_ROW_RANGE_REQUEST__TARGET_ROW_KEY_PREFIX;
		req.row_key_prefix = (ProtobufCBinaryData){ prefix.len, (uint8_t *)prefix.data };
	} else {
		req.target_case = GOOGLE__BIGTABLE__ADMIN__V2__DROP_ROW_RANGE_REQUEST__TARGET_DELETE_ALL_DATA_FROM_TABLE;
		req.delete_all_data_from_table = 1;
	}
	bt_rows_forget(t->st, table, NULL, 0);
	return bt_wrote(t, admin(t->st, ADMIN "DropRowRange", "name", name, &req.base,
				 &google__protobuf__empty__descriptor, NULL, BTR_IDEMPOTENT));
}
