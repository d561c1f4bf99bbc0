/* gcpolicy.h — GC policies in cbt's syntax: parse, print, evaluate (internal to the store).
 *
 * A policy says which cells of a column are collected. Grammar (cbt's): maxversions=N, maxage=D with D an
 * integer and a unit ms|s|m|h|d, "never", combined with "and"/"&&" (intersection: collected only if every
 * part collects it) and "or"/"||" (union: collected if any part does), with parentheses.
 */
#ifndef CELLFS_GCPOLICY_H
#define CELLFS_GCPOLICY_H

#include <stdbool.h>
#include <stdint.h>

typedef struct gcp gcp;

/* Parse TEXT. Errors: -EINVAL (syntax; if ERR is not NULL it gets a one-line message naming what is
 * wrong, caller frees), -ENOMEM. On success the caller frees *OUT with gcp_free(). */
int gcp_parse(const char *text, gcp **out, char **err);
void gcp_free(gcp *p); /* accepts NULL */

/* Whether P collects the cell that is version VERSION (0 = newest) of its column with timestamp TS (µs),
 * at time NOW (µs). A NULL policy collects nothing. */
bool gcp_collects(const gcp *p, uint32_t version, int64_t ts, int64_t now);

/* True if P can never collect anything (never, or NULL). */
bool gcp_is_never(const gcp *p);

/* Canonical text in the input syntax, re-parsable to the same policy. Caller frees. NULL on ENOMEM. */
char *gcp_format(const gcp *p);

/* The policy as `cbt ls TABLE` prints it (through the Bigtable emulator). Caller frees. NULL on ENOMEM. */
char *gcp_format_cbt(const gcp *p);

#endif
