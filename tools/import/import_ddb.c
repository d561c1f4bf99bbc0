/* import_ddb.c — cellctl import format=dynamodb: a DynamoDB table export (DynamoDB JSON, one item a line,
 * parsed by ddbjson.c) written as Google's guide for DynamoDB users prescribes:
 *   - the row key is the partition key's value, or it, the table's delimiter and the sort key's value;
 *   - S N B BOOL NULL: a column of the scalars' family (column-family=, default "cf") named after the
 *     attribute; an L (list): versions of such a column, element i at the timestamp + i ms;
 *   - SS NS BS (sets): a family named after the attribute, a column per member holding one zero byte;
 *   - M (map): a family named after the attribute, a column per key.
 * Values: S its UTF-8 bytes, N its text as exported, B the decoded bytes, BOOL "true" or "false", NULL
 * no bytes; a map member or list element that is itself a set, map or list holds its DynamoDB JSON text
 * as exported. Families the table lacks are created (GC policy never) with the first batch.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "ddbjson.h"
#include "import.h"

#define DEFAULT_FAMILY "cf"

static const char zero_byte[1] = { 0 };

/* "line L of INPUT: MESSAGE" on one line. Returns CC_FAIL. */
__attribute__((format(printf, 3, 4)))
static int bad(const struct imp *im, uint64_t line, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return cc_error("%s", strerror(ENOMEM));
	cc_error("line %llu of %s: %s", (unsigned long long)line, im->name, msg);
	free(msg);
	return CC_FAIL;
}

int imp_ddb_args(struct imp *im, const char *key, const char *colfam, const char *ts)
{
	char *k, *hash;
	int64_t t;

	if (!key)
		return cc_error("format=dynamodb needs key=<partition-key>[#<sort-key>]: the table's key attributes");
	hash = strchr(key, '#');
	if (!*key || hash == key || (hash && (!hash[1] || strchr(hash + 1, '#'))))
		return cc_error("key must be <partition-key> or <partition-key>#<sort-key>, attribute names "
				"(key=%s)", cc_qs(key));
	if (hash && !strncmp(key, hash + 1, (size_t)(hash - key)) && !hash[1 + (hash - key)])
		return cc_error("key names one attribute twice (key=%s)", cc_qs(key));
	k = (char *)key; /* ARGV's bytes: cut in place at the '#' */
	if (hash) {
		k[hash - key] = '\0';
		im->sk = hash + 1;
	}
	im->pk = k;
	im->ddb_family = colfam ? colfam : DEFAULT_FAMILY;
	if (cs_check_family_name(im->ddb_family) < 0)
		return cc_error("column-family %s is not a valid family name ([_a-zA-Z0-9][-_.a-zA-Z0-9]*, at most "
				"%d bytes)", cc_qs(im->ddb_family), CS_MAX_FAMILY);
	im->ddb_ts = -1;
	if (ts && strcmp(ts, "now")) {
		if (go_parse_int(ts, 10, &t) < 0 || t < 0 || t % 1000)
			return cc_error("timestamp must be now or a time in microseconds since the epoch, a whole number "
					"of milliseconds (timestamp=%s)", cc_qs(ts));
		im->ddb_ts = t;
	}
	return CC_OK;
}

/* The family FAM (a valid name) for cells of line LINE (0: of the command's arguments): the table's, or
 * one the import creates (found, or in the first pass added, in im->newfams, sorted). *OUT: the name to
 * write with, valid until the import ends. */
static int family_use(struct imp *im, uint64_t line, const char *fam, const char **out)
{
	const char *f = imp_family_name(im, fam, strlen(fam));
	size_t lo = 0, hi = im->nnew;
	char **nv, *copy;

	if (f && imp_family_aggregate(im, f)) {
		if (!line)
			return cc_error("family %s of table %s is an aggregate family (%s): import writes plain cells "
					"(use addtocell)", cc_qs(f), cc_qs(im->table), imp_family_aggregate(im, f));
		return bad(im, line, "family %s of table %s is an aggregate family (%s): import writes plain cells "
			   "(use addtocell)", cc_qs(f), cc_qs(im->table), imp_family_aggregate(im, f));
	}
	if (f) {
		*out = f;
		return CC_OK;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(im->newfams[mid], fam);

		if (!c) {
			*out = im->newfams[mid];
			return CC_OK;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (im->writing) /* the first pass saw every family of the input */
		return bad(im, line, "family %s was not in the input when it was checked (it changed meanwhile)",
			   cc_qs(fam));
	if (!(nv = realloc(im->newfams, (im->nnew + 1) * sizeof *nv)) || !(copy = strdup(fam))) {
		if (nv)
			im->newfams = nv;
		return cc_error("%s", strerror(ENOMEM));
	}
	im->newfams = nv;
	memmove(nv + lo + 1, nv + lo, (im->nnew - lo) * sizeof *nv);
	nv[lo] = copy;
	im->nnew++;
	*out = copy;
	return CC_OK;
}

int imp_ddb_setup(struct imp *im)
{
	if (im->ddb_ts < 0)
		im->ddb_ts = im->now;
	return family_use(im, 0, im->ddb_family, &im->ddb_family);
}

static bool named(const dj_value *v, const char *name)
{
	return v->name.n == strlen(name) && !memcmp(v->name.p, name, v->name.n);
}

/* Key attribute A (NULL: the item has none) named NAME: S, N or B, not empty. */
static int key_ok(const struct imp *im, uint64_t line, const dj_value *a, const char *name)
{
	if (!a)
		return bad(im, line, "the item has no key attribute %s", cc_qs(name));
	if (a->type != DJ_S && a->type != DJ_N && a->type != DJ_B)
		return bad(im, line, "key attribute %s is of type %s: key attributes are S, N or B", cc_qs(name),
			   dj_type_name(a->type));
	if (!a->bytes.n)
		return bad(im, line, "key attribute %s is empty", cc_qs(name));
	return CC_OK;
}

/* Attribute A (a set or a map) becomes a family of its name: *FAM. */
static int attribute_family(struct imp *im, uint64_t line, const dj_value *a, const char **fam)
{
	char name[CS_MAX_FAMILY + 1];
	const char *kind = a->type == DJ_M ? "map" : "set";

	if (a->name.n > CS_MAX_FAMILY || memchr(a->name.p, 0, a->name.n) ||
	    (memcpy(name, a->name.p, a->name.n), name[a->name.n] = '\0', cs_check_family_name(name) < 0))
		return bad(im, line, "attribute %s is a %s (%s), which becomes a family of its name, but family "
			   "names match [_a-zA-Z0-9][-_.a-zA-Z0-9]* (at most %d bytes)", cc_q(a->name.p, a->name.n),
			   kind, dj_type_name(a->type), CS_MAX_FAMILY);
	if (!strcmp(name, im->ddb_family))
		return bad(im, line, "attribute %s is a %s (%s), which becomes a family of its name, but %s is the "
			   "family of the scalar attributes (choose another with column-family=)", cc_qs(name), kind,
			   dj_type_name(a->type), cc_qs(name));
	return family_use(im, line, name, fam);
}

/* One cell of attribute A; WHAT names the qualifier in a message. */
static int put(struct imp *im, uint64_t line, cs_bytes row, const char *fam, const dj_value *a, const char *what,
	       dj_bytes q, int64_t ts, dj_bytes value)
{
	if (q.n > CS_MAX_QUALIFIER)
		return bad(im, line, "attribute %s: %s of %zu bytes is longer than a qualifier may be (%d bytes)",
			   cc_q(a->name.p, a->name.n), what, q.n, CS_MAX_QUALIFIER);
	return imp_cell(im, line, 0, row, fam, CS_BYTES(q.p, q.n), ts, CS_BYTES(value.p, value.n));
}

/* The cells of attribute A in row ROW. */
static int attribute(struct imp *im, uint64_t line, cs_bytes row, const dj_value *v, const dj_value *a)
{
	const char *fam;
	int64_t ts = im->ddb_ts;
	int rc;

	switch (a->type) {
	case DJ_S: case DJ_N: case DJ_B: case DJ_BOOL: case DJ_NULL:
		return put(im, line, row, im->ddb_family, a, "its name", a->name, ts, a->bytes);
	case DJ_L:
		for (uint32_t i = a->child; i != DJ_NONE; i = v[i].next, ts += 1000) {
			if (ts < 0 || ts > INT64_MAX - 1000) /* the next element's */
				return bad(im, line, "attribute %s: the list is too long for its timestamps",
					   cc_q(a->name.p, a->name.n));
			if ((rc = put(im, line, row, im->ddb_family, a, "its name", a->name, ts, v[i].bytes)) != CC_OK)
				return rc;
		}
		return CC_OK;
	default: /* a set or a map */
		if ((rc = attribute_family(im, line, a, &fam)) != CC_OK)
			return rc;
		for (uint32_t i = a->child; i != DJ_NONE; i = v[i].next) {
			if (a->type == DJ_M)
				rc = put(im, line, row, fam, a, "a map key", v[i].name, ts, v[i].bytes);
			else
				rc = put(im, line, row, fam, a, "a set member", v[i].bytes, ts,
					 (dj_bytes){ zero_byte, 1 });
			if (rc != CC_OK)
				return rc;
		}
		return CC_OK;
	}
}

/* One item: its row key, then the cells of each attribute. */
static int item(struct imp *im, uint64_t line, const dj_value *v, uint32_t first)
{
	const dj_value *pk = NULL, *sk = NULL;
	char row[CS_MAX_ROW_KEY];
	char delim = im->info->delim ? im->info->delim : CS_DEFAULT_DELIM;
	size_t rn;
	int rc;

	for (uint32_t i = first; i != DJ_NONE; i = v[i].next) {
		if (named(&v[i], im->pk))
			pk = &v[i];
		else if (im->sk && named(&v[i], im->sk))
			sk = &v[i];
	}
	if ((rc = key_ok(im, line, pk, im->pk)) != CC_OK || (im->sk && (rc = key_ok(im, line, sk, im->sk)) != CC_OK))
		return rc;
	if (sk && memchr(pk->bytes.p, delim, pk->bytes.n))
		return bad(im, line, "the partition key %s holds the table's delimiter %s, so the row key would not "
			   "say where it ends", cc_q(pk->bytes.p, pk->bytes.n), cc_q(&delim, 1));
	rn = pk->bytes.n + (sk ? 1 + sk->bytes.n : 0);
	if (rn > CS_MAX_ROW_KEY)
		return bad(im, line, "the row key would be %zu bytes, longer than %d", rn, CS_MAX_ROW_KEY);
	memcpy(row, pk->bytes.p, pk->bytes.n);
	if (sk) {
		row[pk->bytes.n] = delim;
		memcpy(row + pk->bytes.n + 1, sk->bytes.p, sk->bytes.n);
	}
	for (uint32_t i = first; i != DJ_NONE; i = v[i].next)
		if ((rc = attribute(im, line, CS_BYTES(row, rn), v, &v[i])) != CC_OK)
			return rc;
	return CC_OK;
}

int imp_ddb_pass(struct imp *im, csv_reader *r)
{
	dj_parser *dp;
	const char *l;
	size_t n;
	uint64_t line;
	int rc = 0, status = CC_OK;

	if (dj_new(&dp) < 0)
		return cc_error("%s", strerror(ENOMEM));
	while (status == CC_OK && (rc = csv_read_line(r, &l, &n, &line)) > 0) {
		const dj_value *v;
		uint32_t first;
		char *err = NULL;

		if (imp_blank(l, n)) /* blank lines are skipped (an empty partition's file has none at all) */
			continue;
		if ((rc = dj_parse_line(dp, l, n, &v, &first, &err)) < 0) {
			status = rc == -EINVAL ? bad(im, line, "%s", err ? err : "bad DynamoDB JSON")
					       : cc_error("%s", strerror(-rc));
			free(err);
			break;
		}
		status = item(im, line, v, first);
		if (status == CC_OK)
			status = imp_line_done(im, line, r);
	}
	dj_free(dp);
	if (status == CC_OK && rc < 0)
		status = imp_read_failed(im, r, rc);
	return status;
}
