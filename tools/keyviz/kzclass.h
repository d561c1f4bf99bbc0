/* kzclass.h — what one row-key segment looks like, for cellctl keyviz (keyviz.h): a timestamp, a
 * reversed timestamp, a number (zero-padded or not), hex or base64 (hash candidates), a domain name
 * (reversed or not), text or binary. Each test is a named function of the segment's bytes alone; what
 * holds for a whole depth of a table (a hash has fixed length and high entropy, a sequence is dense, a
 * salt is a small set) is keyviz.c's to decide.
 *
 * Pure functions: nothing here allocates, prints or touches the store.
 */
#ifndef CELLFS_KZCLASS_H
#define CELLFS_KZCLASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum kzc_kind {
	KZC_EMPTY,     /* the empty segment (two delimiters in a row) */
	KZC_TIMESTAMP, /* kzc_timestamp() */
	KZC_REVTS,     /* kzc_reversed_ts() */
	KZC_NUMBER,    /* decimal digits without a leading zero ("0" itself too) */
	KZC_PADDED,    /* decimal digits with a leading zero: "0042" */
	KZC_HEX,       /* kzc_hex(): hex digits, some of them letters */
	KZC_BASE64,    /* kzc_base64() */
	KZC_DOMAIN,    /* kzc_domain(), last label the top-level domain: maps.google.com */
	KZC_RDOMAIN,   /* kzc_domain(), reversed: com.google.maps */
	KZC_TEXT,      /* other valid UTF-8 without control characters */
	KZC_BINARY,    /* control bytes or not valid UTF-8 */
	KZC_NKINDS
};

/* The kind's name in reports and JSON ("timestamp", "reversed-timestamp", "number", "padded-number",
 * "hex", "base64", "domain", "reversed-domain", "text", "binary", "empty"). Static. */
const char *kzc_kind_name(enum kzc_kind k);

/* The one kind of segment P (N bytes), testing in the order of the enum (a reversed timestamp is not
 * also a number). For KZC_TIMESTAMP and KZC_REVTS, *UNIT (if not NULL) gets kzc_timestamp()'s unit
 * name; otherwise "". */
enum kzc_kind kzc_classify(const void *p, size_t n, const char **unit);

/* P (N bytes) as an unsigned decimal of 1..19 digits (no sign, no other byte) into *V. Returns whether it
 * is one. */
bool kzc_digits(const void *p, size_t n, uint64_t *v);

/* Whether P (N bytes) is a point in time from 2000-01-01 to 2100-01-01 (UTC): seconds, milliseconds,
 * microseconds or nanoseconds since the epoch (decimal, no leading zero), a compact date or date-time
 * (20150301, 2015030112, 201503011245, 20150301124501, 20150301124501001: valid fields, years from
 * 1970), or an ISO 8601 date, optionally followed by a time ("2015-03-01", "2015-03-01T12:45:01Z").
 * *US (if not NULL) gets it in µs since the epoch (dates as UTC), *UNIT (if not NULL) a static name:
 * "epoch s", "epoch ms", "epoch us", "epoch ns", "yyyymmdd", "yyyymmddhh..." or "iso-8601". */
bool kzc_timestamp(const void *p, size_t n, int64_t *us, const char **unit);

/* Whether P (N bytes) is a reversed timestamp as Bigtable's guides make them, Long.MAX_VALUE - ts: 19
 * digits whose distance below 9223372036854775807 is a time from 2000 to 2100 in seconds, milliseconds
 * or microseconds (so it is near 9.22e18 and decreases as time increases). *US and *UNIT as
 * kzc_timestamp() says, of ts. */
bool kzc_reversed_ts(const void *p, size_t n, int64_t *us, const char **unit);

/* Whether P (N bytes) is hex of at least 6 digits, one case, holding a letter (a-f) and a digit: what a
 * hash, a UUID without dashes or a random id looks like. (Digits alone are a number.) */
bool kzc_hex(const void *p, size_t n);

/* Whether P (N bytes) looks like base64 (standard or URL alphabet, '=' padding) of at least 12
 * characters with upper-case, lower-case letters and digits mixed (at least two of each). */
bool kzc_base64(const void *p, size_t n);

/* Whether P (N bytes) is a domain name: three or more dot-separated labels of letters, digits and '-',
 * with a top-level domain (a generic one such as com, org, net, io, or any two letters) at one end.
 * *REVERSED gets whether it is written from the top-level domain on (com.google.maps). */
bool kzc_domain(const void *p, size_t n, bool *reversed);

#endif
