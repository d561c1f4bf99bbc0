/* nameutil.h — what fs/name's unit tests share: a table context and round trips through the codec
 * that assert, through cmocka, every property of the names made (a failure fails the calling test). */
#ifndef CELLFS_NAMEUTIL_H
#define CELLFS_NAMEUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "name.h"

#define NU_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Whether the N bytes at NAME are one of the NULL-terminated family names ARG (a name_segctx callback). */
bool nu_is_family(const void *arg, const char *name, size_t n);
/* The families of nu_ctx, NULL-terminated. */
extern const char *const nu_families[];
/* A table with delimiter '#' and the families nu_families. */
extern const name_segctx nu_ctx;

/* "table", "family", "segment" or "qualifier". */
const char *nu_kind_str(enum name_kind k);
/* Encode B as KIND, check the name's shape, decode it and check it names B (and, for a partial result,
 * that its prefix and hash are B's). Leaves the name in OUT (NAME_BUFSZ bytes); returns whether it was a
 * short form. */
bool nu_round_trip(enum name_kind kind, const name_segctx *c, const void *b, size_t n, char *out);
/* The same for the version name of qualifier Q at timestamp TS. */
bool nu_round_trip_version(const void *q, size_t qn, int64_t ts, char *out);

#endif
