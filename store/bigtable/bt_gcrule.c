/* bt_gcrule.c — GC rules: Bigtable's GcRule messages to and from cbt's policy syntax (gcpolicy.h's
 * grammar: maxage=, maxversions=, never, and/or), for bt_schema.c. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin.pb-c.h"
#include "bt_internal.h"
#include "mem.h"

/* Append RULE in cbt's syntax to F. cellfs's chains apply left to right, as Bigtable's nested binary
 * rules do when the nesting is on the left: so the left operand needs no parentheses, the others do
 * when compound. */
void bt_gcrule_text(FILE *f, const Google__Bigtable__Admin__V2__GcRule *r)
{
	size_t n;
	Google__Bigtable__Admin__V2__GcRule **v;
	const char *op;

	switch (r ? r->rule_case : GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__RULE__NOT_SET) {
	case GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__RULE_MAX_NUM_VERSIONS:
		fprintf(f, "maxversions=%" PRId32, r->max_num_versions);
		return;
	case GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__RULE_MAX_AGE: {
		/* in ms, read back by gcp_parse_stored() (any int64 of them; cbt's syntax stops at 2^32 - 1) */
		int64_t sec = r->max_age ? r->max_age->seconds : 0, ns = r->max_age ? r->max_age->nanos : 0;
		if (sec < 0 || ns < 0 || sec > INT64_MAX / 1000000)
			fputs("maxage=?", f); /* (a Duration no policy has: refused by the parser) */
		else
			fprintf(f, "maxage=%" PRId64 "ms", sec * 1000 + ns / 1000000);
		return;
	}
	case GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__RULE_INTERSECTION:
		n = r->intersection->n_rules, v = r->intersection->rules, op = " and ";
		break;
	case GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__RULE_UNION:
		n = r->union_->n_rules, v = r->union_->rules, op = " or ";
		break;
	default:
		fputs("never", f);
		return;
	}
	if (n == 0) {
		fputs("never", f);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		bool compound = v[i]->rule_case == GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__RULE_INTERSECTION ||
				v[i]->rule_case == GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__RULE_UNION;
		if (i)
			fputs(op, f);
		if (compound && i)
			fputc('(', f);
		bt_gcrule_text(f, v[i]);
		if (compound && i)
			fputc(')', f);
	}
}

/* A GcRule tree for P (NULL for "never": no rule), built from allocations freed by bt_gcrule_free(). */
static Google__Bigtable__Admin__V2__GcRule *rule_of(const gcp *p);

void bt_gcrule_free(Google__Bigtable__Admin__V2__GcRule *r)
{
	if (!r)
		return;
	if (r->rule_case == GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__RULE_MAX_AGE) {
		free(r->max_age);
	} else if (r->rule_case == GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__RULE_INTERSECTION ||
		   r->rule_case == GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__RULE_UNION) {
		Google__Bigtable__Admin__V2__GcRule__Intersection *in = r->intersection;
		Google__Bigtable__Admin__V2__GcRule__Union *un = r->union_;
		if (r->rule_case == GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__RULE_INTERSECTION) {
			for (size_t i = 0; in && i < in->n_rules; i++)
				bt_gcrule_free(in->rules[i]);
			if (in)
				free(in->rules);
			free(in);
		} else {
			for (size_t i = 0; un && i < un->n_rules; i++)
				bt_gcrule_free(un->rules[i]);
			if (un)
				free(un->rules);
			free(un);
		}
	}
	free(r);
}

static Google__Bigtable__Admin__V2__GcRule *rule_pair(bool and, Google__Bigtable__Admin__V2__GcRule *a,
						       Google__Bigtable__Admin__V2__GcRule *b)
{
	Google__Bigtable__Admin__V2__GcRule *r = mem_malloc(sizeof(*r));
	Google__Bigtable__Admin__V2__GcRule **v = mem_malloc(2 * sizeof(*v));
	if (!r || !v || !a || !b) {
		free(r);
		free(v);
		bt_gcrule_free(a);
		bt_gcrule_free(b);
		return NULL;
	}
	google__bigtable__admin__v2__gc_rule__init(r);
	v[0] = a, v[1] = b;
	if (and) {
		Google__Bigtable__Admin__V2__GcRule__Intersection *in = mem_malloc(sizeof(*in));
		if (!in)
			goto nomem;
		google__bigtable__admin__v2__gc_rule__intersection__init(in);
		in->n_rules = 2, in->rules = v;
		r->rule_case = GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__RULE_INTERSECTION;
		r->intersection = in;
	} else {
		Google__Bigtable__Admin__V2__GcRule__Union *un = mem_malloc(sizeof(*un));
		if (!un)
			goto nomem;
		google__bigtable__admin__v2__gc_rule__union__init(un);
		un->n_rules = 2, un->rules = v;
		r->rule_case = GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__RULE_UNION;
		r->union_ = un;
	}
	return r;
nomem:
	free(r);
	free(v);
	bt_gcrule_free(a);
	bt_gcrule_free(b);
	return NULL;
}

static Google__Bigtable__Admin__V2__GcRule *rule_of(const gcp *p)
{
	Google__Bigtable__Admin__V2__GcRule *r;
	switch (gcp_kind_of(p)) {
	case GCP_MAXVERSIONS:
		if (!(r = mem_malloc(sizeof(*r))))
			return NULL;
		google__bigtable__admin__v2__gc_rule__init(r);
		r->rule_case = GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__RULE_MAX_NUM_VERSIONS;
		r->max_num_versions = (int32_t)gcp_max_versions(p);
		return r;
	case GCP_MAXAGE: {
		Google__Protobuf__Duration *d = mem_malloc(sizeof(*d));
		if (!d || !(r = mem_malloc(sizeof(*r)))) {
			free(d);
			return NULL;
		}
		google__protobuf__duration__init(d);
		d->seconds = gcp_max_age_ms(p) / 1000;
		d->nanos = (int32_t)(gcp_max_age_ms(p) % 1000 * 1000000);
		google__bigtable__admin__v2__gc_rule__init(r);
		r->rule_case = GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__RULE_MAX_AGE;
		r->max_age = d;
		return r;
	}
	case GCP_CHAIN:
		r = rule_of(gcp_term(p, 0));
		for (size_t i = 1; i < gcp_nterms(p) && r; i++)
			r = rule_pair(gcp_op_before(p, i) == GCP_AND, r, rule_of(gcp_term(p, i)));
		return r;
	case GCP_NEVER:
	default:
		return NULL;
	}
}

/* The GC rule of policy text GC (NULL = never) in *OUT (freed with bt_gcrule_free()). Errors: -EINVAL, -ENOMEM.
 * "never" is an empty rule, present with no rule set, as cbt sends it (bigtable.NoGcPolicy): Bigtable
 * gives back what it was sent, and cbt's ls shows a family without a rule as "<never>", one with an
 * empty rule as "", so a family made here then looks to cbt as one cbt made. */
int bt_gcrule_parse(const char *gc, Google__Bigtable__Admin__V2__GcRule **out)
{
	gcp *p;
	int rc = gcp_parse(gc ? gc : "never", &p, NULL);
	if (rc)
		return rc;
	if (gcp_is_never(p)) {
		if ((*out = mem_malloc(sizeof(**out))))
			google__bigtable__admin__v2__gc_rule__init(*out);
	} else {
		*out = rule_of(p);
	}
	if (!*out)
		rc = -ENOMEM;
	gcp_free(p);
	return rc;
}
