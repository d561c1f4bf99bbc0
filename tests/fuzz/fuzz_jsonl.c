/* fuzz_jsonl.c — cellctl import's JSON lines parser (tools/import/jsonin.h) against export's writer
 * (tools/jsonout.h).
 *
 * Input: one line of text. Properties:
 *   - ji_parse_line() returns cells or one clean error (-EINVAL with a one-line message), never
 *     anything else; every returned byte is readable;
 *   - each cell, written as export writes it (jo_bytes_field, jo_str) and parsed again, is the same
 *     cell; so is the whole list written as one row ({"row":..,"cells":[..]}) when the cells share a row.
 */
#include <errno.h>
#include <inttypes.h>

#include "fuzz.h"
#include "jsonin.h"
#include "jsonout.h"

struct cell {
	uint8_t *row, *fam, *q, *val;
	size_t rown, famn, qn, valn;
	int64_t ts;
};

static void keep(const ji_cell *c, struct cell *k)
{
	k->row = fuzz_dup(c->row.p, c->row.n);
	k->rown = c->row.n;
	k->fam = fuzz_dup(c->family.p, c->family.n);
	k->famn = c->family.n;
	k->q = fuzz_dup(c->qualifier.p, c->qualifier.n);
	k->qn = c->qualifier.n;
	k->val = fuzz_dup(c->value.p, c->value.n);
	k->valn = c->value.n;
	k->ts = c->ts;
}

static bool same(const struct cell *k, const ji_cell *c)
{
	return k->rown == c->row.n && !memcmp(k->row, c->row.p, k->rown) && k->famn == c->family.n &&
	       !memcmp(k->fam, c->family.p, k->famn) && k->qn == c->qualifier.n &&
	       !memcmp(k->q, c->qualifier.p, k->qn) && k->valn == c->value.n &&
	       !memcmp(k->val, c->value.p, k->valn) && k->ts == c->ts;
}

/* The members after "row": family, qualifier, ts, value, as export writes them. */
static void put_members(FILE *m, const struct cell *k)
{
	fputs("\"family\":", m);
	jo_str(m, k->fam, k->famn);
	putc(',', m);
	jo_bytes_field(m, "qualifier", k->q, k->qn);
	fprintf(m, ",\"ts\":%" PRId64 ",", k->ts);
	jo_bytes_field(m, "value", k->val, k->valn);
}

static void reparse(ji_parser *jp, const char *text, size_t len, const struct cell *k, size_t n)
{
	ji_cell *c;
	size_t nc;
	char *err = NULL;

	FUZZ_CHECK(ji_parse_line(jp, text, len, &c, &nc, &err) == 0 && !err);
	FUZZ_CHECK(nc == n);
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK(same(&k[i], &c[i]));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ji_parser *jp;
	ji_cell *c;
	size_t nc;
	char *err = NULL, *text = NULL;
	size_t tlen = 0;
	struct cell *k;
	bool one_row = true;
	uint8_t *line = fuzz_dup(data, size);
	FILE *m;
	int rc;

	FUZZ_CHECK(ji_new(&jp) == 0);
	rc = ji_parse_line(jp, (const char *)line, size, &c, &nc, &err);
	FUZZ_CHECK(rc == 0 || rc == -EINVAL);
	if (rc) {
		FUZZ_CHECK(err && !strchr(err, '\n'));
		goto out;
	}
	FUZZ_CHECK(!err);
	if (!(k = calloc(nc ? nc : 1, sizeof(*k))))
		abort();
	for (size_t i = 0; i < nc; i++) {
		keep(&c[i], &k[i]);
		FUZZ_CHECK(k[i].ts >= 0);
		one_row &= k[i].rown == k[0].rown && !memcmp(k[i].row, k[0].row, k[0].rown);
	}
	for (size_t i = 0; i < nc; i++) {
		if (!(m = open_memstream(&text, &tlen)))
			abort();
		putc('{', m);
		jo_bytes_field(m, "row", k[i].row, k[i].rown);
		putc(',', m);
		put_members(m, &k[i]);
		fputs("}\n", m);
		fclose(m);
		reparse(jp, text, tlen, &k[i], 1);
		free(text);
	}
	if (nc && one_row) {
		if (!(m = open_memstream(&text, &tlen)))
			abort();
		putc('{', m);
		jo_bytes_field(m, "row", k[0].row, k[0].rown);
		fputs(",\"cells\":[", m);
		for (size_t i = 0; i < nc; i++) {
			fputs(i ? ",{" : "{", m);
			put_members(m, &k[i]);
			putc('}', m);
		}
		fputs("]}", m);
		fclose(m);
		reparse(jp, text, tlen, k, nc);
		free(text);
	}
	for (size_t i = 0; i < nc; i++) {
		free(k[i].row);
		free(k[i].fam);
		free(k[i].q);
		free(k[i].val);
	}
	free(k);
out:
	free(err);
	ji_free(jp);
	free(line);
	return 0;
}
