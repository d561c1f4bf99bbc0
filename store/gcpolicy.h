/* gcpolicy.h — GC policies in cbt's syntax: parse, print, evaluate (internal to the store).
 *
 * A policy says which cells of a column are collected. Grammar (cbt's): maxversions=N, maxage=D with D an
 * integer and a unit ms|s|m|h|d, "never", combined with "and"/"&&" (intersection: collected only if every
 * part collects it) and "or"/"||" (union: collected if any part does), with parentheses.
 */
#ifndef CELLFS_GCPOLICY_H
#define CELLFS_GCPOLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gcp gcp;

/* A policy's structure, for translating it into another form (Bigtable's GcRule): a leaf, or a chain of
 * n >= 2 terms joined by n - 1 operators applied strictly left to right ("a or b and c" is
 * "(a or b) and c", as cbt reads it). */
enum gcp_kind { GCP_NEVER, GCP_MAXVERSIONS, GCP_MAXAGE, GCP_CHAIN };
enum gcp_op { GCP_AND, GCP_OR };

/* Parse TEXT. Errors: -EINVAL (syntax; if ERR is not NULL it gets a one-line message naming what is
 * wrong, caller frees), -ENOMEM. On success the caller frees *OUT with gcp_free(). */
int gcp_parse(const char *text, gcp **out, char **err);
void gcp_free(gcp *p); /* accepts NULL */

/* As gcp_parse(), for a policy read back from where it is kept rather than typed by a user: a duration's
 * number may be anything whose age in µs fits an int64 (cbt's syntax takes at most 2^32 - 1 of a unit,
 * and 106751d), since another client of a Bigtable instance may have set, say, 4320000001ms. gcp_format()
 * of such a policy gives text only this reads back. */
int gcp_parse_stored(const char *text, gcp **out, char **err);

/* Whether P collects the cell that is version VERSION (0 = newest) of its column with timestamp TS (µs),
 * at time NOW (µs). A NULL policy collects nothing. */
bool gcp_collects(const gcp *p, uint32_t version, int64_t ts, int64_t now);

/* True if P can never collect anything (never, or NULL). */
bool gcp_is_never(const gcp *p);

/* P's kind (GCP_NEVER for NULL); a GCP_MAXVERSIONS leaf's N; a GCP_MAXAGE leaf's age in ms; a
 * GCP_CHAIN's number of terms, its term I (borrowed), and the operator joining term I (I >= 1) to the
 * result of the terms before it. */
enum gcp_kind gcp_kind_of(const gcp *p);
uint32_t gcp_max_versions(const gcp *p);
int64_t gcp_max_age_ms(const gcp *p);
size_t gcp_nterms(const gcp *p);
const gcp *gcp_term(const gcp *p, size_t i);
enum gcp_op gcp_op_before(const gcp *p, size_t i);

/* Canonical text in the input syntax, re-parsable to the same policy. Caller frees. NULL on ENOMEM. */
char *gcp_format(const gcp *p);

/* The policy as `cbt ls TABLE` prints it (through the Bigtable emulator). Caller frees. NULL on ENOMEM. */
char *gcp_format_cbt(const gcp *p);

#endif
