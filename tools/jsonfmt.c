/* jsonfmt.c — cellctl's --format=json records (see jsonfmt.h for their shapes), built on jsonout. */
#include "jsonfmt.h"

#include <string.h>

#include "jsonout.h"

static bool is_aggregate(const cs_table_info *info, const char *family)
{
	for (size_t i = 0; info && i < info->nfamilies; i++)
		if (!strcmp(info->families[i].name, family))
			return info->families[i].type != CS_TYPE_BYTES;
	return false;
}

void jsonfmt_row(FILE *f, const cs_row *row, const cs_table_info *info, bool keys_only)
{
	const char *agg_family = NULL; /* the last family found to be an aggregate, and whether it was */
	bool agg = false;

	putc('{', f);
	jo_bytes_field(f, "row", row->key.data, row->key.len);
	fputs(",\"cells\":[", f);
	for (size_t i = 0; i < row->ncells; i++) {
		const cs_cell *c = &row->cells[i];

		if (!agg_family || strcmp(agg_family, c->family)) {
			agg_family = c->family;
			agg = is_aggregate(info, c->family);
		}
		fputs(i ? ",{\"family\":" : "{\"family\":", f);
		jo_str(f, c->family, strlen(c->family));
		putc(',', f);
		jo_bytes_field(f, "qualifier", c->qualifier.data, c->qualifier.len);
		fprintf(f, ",\"ts\":%lld", (long long)c->ts);
		if (!keys_only) {
			putc(',', f);
			jo_bytes_field(f, "value", c->value.data, c->value.len);
			if (agg && c->value.len == 8) {
				const unsigned char *v = c->value.data;
				uint64_t u = 0;
				for (int k = 0; k < 8; k++)
					u = u << 8 | v[k];
				fprintf(f, ",\"int\":%lld", (long long)(int64_t)u);
			}
		}
		putc('}', f);
	}
	fputs("]}\n", f);
}

void jsonfmt_table(FILE *f, const char *name)
{
	fputs("{\"table\":", f);
	jo_str(f, name, strlen(name));
	fputs("}\n", f);
}

void jsonfmt_family(FILE *f, const char *name, const char *gc, const char *type)
{
	fputs("{\"family\":", f);
	jo_str(f, name, strlen(name));
	fputs(",\"gc_policy\":", f);
	jo_str(f, gc, strlen(gc));
	if (type && *type) {
		fputs(",\"value_type\":", f);
		jo_str(f, type, strlen(type));
	}
	fputs("}\n", f);
}

void jsonfmt_count(FILE *f, uint64_t n)
{
	fprintf(f, "{\"count\":%llu}\n", (unsigned long long)n);
}
