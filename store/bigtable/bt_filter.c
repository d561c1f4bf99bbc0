/* bt_filter.c — a scan's column and row selections (cs_read_opts) as Bigtable's RowFilter: families and
 * qualifiers by exact name or regular expression (RE2, whole-string), column ranges, the row-key regex;
 * what Bigtable cannot express (the timestamp range, cells per column) is left to bt_read.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bigtable.pb-c.h"
#include "bt_internal.h"
#include "mem.h"

void bt_filter_free(Google__Bigtable__V2__RowFilter *f)
{
	if (!f)
		return;
	switch (f->filter_case) {
	case GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_CHAIN:
		for (size_t i = 0; i < f->chain->n_filters; i++)
			bt_filter_free(f->chain->filters[i]);
		free(f->chain->filters);
		free(f->chain);
		break;
	case GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_INTERLEAVE:
		for (size_t i = 0; i < f->interleave->n_filters; i++)
			bt_filter_free(f->interleave->filters[i]);
		free(f->interleave->filters);
		free(f->interleave);
		break;
	case GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_FAMILY_NAME_REGEX_FILTER:
		free(f->family_name_regex_filter);
		break;
	case GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_COLUMN_QUALIFIER_REGEX_FILTER:
		free(f->column_qualifier_regex_filter.data);
		break;
	case GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_ROW_KEY_REGEX_FILTER:
		free(f->row_key_regex_filter.data);
		break;
	case GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_COLUMN_RANGE_FILTER:
		free(f->column_range_filter->family_name);
		free(f->column_range_filter->start_qualifier_closed.data);
		free(f->column_range_filter);
		break;
	default:
		break;
	}
	free(f);
}

static Google__Bigtable__V2__RowFilter *filter_new(void)
{
	Google__Bigtable__V2__RowFilter *f = mem_malloc(sizeof(*f));
	if (f)
		google__bigtable__v2__row_filter__init(f);
	return f;
}

/* A chain of A then B (both taken: freed on failure), or NULL (-ENOMEM). */
static Google__Bigtable__V2__RowFilter *chain2(Google__Bigtable__V2__RowFilter *a, Google__Bigtable__V2__RowFilter *b)
{
	Google__Bigtable__V2__RowFilter *f = filter_new();
	Google__Bigtable__V2__RowFilter__Chain *c = mem_malloc(sizeof(*c));
	Google__Bigtable__V2__RowFilter **v = mem_malloc(2 * sizeof(*v));
	if (!f || !c || !v) {
		free(f);
		free(c);
		free(v);
		bt_filter_free(a);
		bt_filter_free(b);
		return NULL;
	}
	google__bigtable__v2__row_filter__chain__init(c);
	v[0] = a, v[1] = b;
	c->n_filters = 2;
	c->filters = v;
	f->filter_case = GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_CHAIN;
	f->chain = c;
	return f;
}

/* A regex (cbt's dialect) matching exactly the N bytes at P: ASCII punctuation escaped, control bytes
 * as \xHH, bytes at or above 0x80 as themselves (they stand for themselves in the dialect). */
static char *bytes_regex(const uint8_t *p, size_t n, size_t *outn)
{
	char *r = mem_malloc(4 * n + 1), *w = r;
	if (!r)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		uint8_t c = p[i];
		if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80) {
			*w++ = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			static const char hex[] = "0123456789abcdef";
			*w++ = '\\', *w++ = 'x', *w++ = hex[c >> 4], *w++ = hex[c & 15];
		} else {
			*w++ = '\\', *w++ = (char)c;
		}
	}
	*outn = (size_t)(w - r);
	*w = '\0';
	return r;
}

/* A regex matching exactly the family name NAME ([-_.a-zA-Z0-9]: only '.' needs escaping). */
static char *family_regex(const char *name)
{
	size_t n = strlen(name);
	char *r = mem_malloc(2 * n + 1), *p = r;
	if (!r)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (name[i] == '.' || name[i] == '-')
			*p++ = '\\';
		*p++ = name[i];
	}
	*p = '\0';
	return r;
}

/* A filter for one column selector, or NULL with *RC set (-ENOMEM) or 0 (nothing to filter: pass all). */
static Google__Bigtable__V2__RowFilter *sel_filter(const cs_column_sel *c, int *rc)
{
	Google__Bigtable__V2__RowFilter *parts[2] = { NULL, NULL }, *f;
	size_t n = 0;

	*rc = -ENOMEM;
	if (c->family && c->qualifier) { /* one column: a closed range [q, q] */
		Google__Bigtable__V2__ColumnRange *cr = mem_malloc(sizeof(*cr));
		if (!cr || !(parts[0] = filter_new())) {
			free(cr);
			return NULL;
		}
		google__bigtable__v2__column_range__init(cr);
		parts[0]->filter_case = GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_COLUMN_RANGE_FILTER;
		parts[0]->column_range_filter = cr;
		cr->family_name = mem_strdup(c->family);
		cr->start_qualifier_case = GOOGLE__BIGTABLE__V2__COLUMN_RANGE__START_QUALIFIER_START_QUALIFIER_CLOSED;
		cr->start_qualifier_closed = (ProtobufCBinaryData){ c->qualifier->len,
								    bt_dup(c->qualifier->data, c->qualifier->len) };
		cr->end_qualifier_case = GOOGLE__BIGTABLE__V2__COLUMN_RANGE__END_QUALIFIER_END_QUALIFIER_CLOSED;
		cr->end_qualifier_closed = cr->start_qualifier_closed; /* (freed once, as start) */
		if (!cr->family_name || !cr->start_qualifier_closed.data) {
			bt_filter_free(parts[0]);
			return NULL;
		}
		n = 1;
	} else {
		if (c->family || c->family_regex) {
			if (!(parts[n] = filter_new()))
				goto fail;
			parts[n]->filter_case = GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_FAMILY_NAME_REGEX_FILTER;
			parts[n]->family_name_regex_filter = c->family ? family_regex(c->family) : mem_strdup(c->family_regex);
			if (!parts[n++]->family_name_regex_filter)
				goto fail;
		}
		if (c->qualifier_regex || c->qualifier) {
			size_t qn = 0;
			void *q = c->qualifier ? bytes_regex(c->qualifier->data, c->qualifier->len, &qn)
					       : bt_dup(c->qualifier_regex, qn = strlen(c->qualifier_regex));
			if (!q || !(parts[n] = filter_new())) {
				free(q);
				goto fail;
			}
			parts[n]->filter_case = GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_COLUMN_QUALIFIER_REGEX_FILTER;
			parts[n++]->column_qualifier_regex_filter = (ProtobufCBinaryData){ qn, q };
		}
	}
	if (n == 0) {
		*rc = 0;
		return NULL;
	}
	if (n == 1) {
		*rc = 0;
		return parts[0];
	}
	if (!(f = chain2(parts[0], parts[1])))
		return NULL; /* (chain2 freed them) */
	*rc = 0;
	return f;
fail:
	bt_filter_free(parts[0]);
	bt_filter_free(parts[1]);
	return NULL;
}

/* The filter of OPTS: the row regex and the union of the column selectors. NULL with 0: every cell. */
int bt_filter_build(const cs_read_opts *o, Google__Bigtable__V2__RowFilter **out)
{
	Google__Bigtable__V2__RowFilter *cols = NULL, *re = NULL, *f;
	int rc = 0;

	*out = NULL;
	if (o->ncolumns) {
		Google__Bigtable__V2__RowFilter **v = mem_calloc(o->ncolumns, sizeof(*v));
		size_t n = 0;
		bool all = false;
		if (!v)
			return -ENOMEM;
		for (size_t i = 0; i < o->ncolumns && !rc; i++) {
			Google__Bigtable__V2__RowFilter *one = sel_filter(&o->columns[i], &rc);
			if (one)
				v[n++] = one;
			else if (!rc)
				all = true;
		}
		if (rc || all || n == 0) {
			for (size_t i = 0; i < n; i++)
				bt_filter_free(v[i]);
			free(v);
			if (rc)
				return rc;
		} else if (n == 1) {
			cols = v[0];
			free(v);
		} else {
			Google__Bigtable__V2__RowFilter__Interleave *il = mem_malloc(sizeof(*il));
			if (!il || !(cols = filter_new())) {
				free(il);
				for (size_t i = 0; i < n; i++)
					bt_filter_free(v[i]);
				free(v);
				return -ENOMEM;
			}
			google__bigtable__v2__row_filter__interleave__init(il);
			il->n_filters = n;
			il->filters = v;
			cols->filter_case = GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_INTERLEAVE;
			cols->interleave = il;
		}
	}
	if (o->row_regex) {
		size_t n = strlen(o->row_regex);
		if (!(re = filter_new())) {
			bt_filter_free(cols);
			return -ENOMEM;
		}
		re->filter_case = GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_ROW_KEY_REGEX_FILTER;
		re->row_key_regex_filter = (ProtobufCBinaryData){ n, bt_dup(o->row_regex, n) };
		if (!re->row_key_regex_filter.data) {
			bt_filter_free(re);
			bt_filter_free(cols);
			return -ENOMEM;
		}
	}
	if (!re || !cols) {
		*out = re ? re : cols;
		return 0;
	}
	if (!(f = chain2(re, cols)))
		return -ENOMEM;
	*out = f;
	return 0;
}
