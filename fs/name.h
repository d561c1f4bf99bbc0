/* name.h — the bijection between stored byte strings and path components (file and directory names).
 *
 * Pure functions: no FUSE, no store, no allocation, no printing. This comment is the reference for the
 * names cellfs shows; the daemon and the tests follow it.
 *
 * KINDS OF COMPONENT
 *   table name, family name   [_a-zA-Z0-9][-_.a-zA-Z0-9]*, shown as themselves, never escaped.
 *   key segment               a row key split on the table's delimiter byte (never contains it).
 *   qualifier                 any bytes (the store allows 0..16384).
 *   version name              `Q@TS`: an encoded qualifier, '@', a timestamp.
 *
 * ENCODING a segment or qualifier B (rules in order):
 *   1. Empty B is the reserved token `%` (a lone percent sign; never produced otherwise, as '%' is always
 *      escaped).
 *   2. Every byte is written raw except these, written `%XX` with two UPPER-case hex digits: '/', '%',
 *      0x00-0x1F, 0x7F, every byte that is not part of a valid UTF-8 sequence, and, in qualifiers only,
 *      '@' (so in `Q@TS` the one raw '@' is the separator). Valid UTF-8 is Unicode's table 3-7: overlong
 *      forms (C0 80, E0 80 80, ...), surrogates (ED A0 80 ...), code points above U+10FFFF (F4 90 80 80,
 *      F5..FF) and truncated sequences are invalid, and each of their bytes is escaped on its own; a valid
 *      multibyte sequence (any code point, C1 controls included) stays raw.
 *   3. B equal to "." is `%2E`, ".." is `%2E%2E` ("..." is not special).
 *   4. A key segment equal to a family name of its table has its first byte escaped: "MD" -> `%4DD`.
 *      So in a row directory a plain identifier is the family if there is one of that name, else the
 *      segment. Qualifiers are not subject to this rule.
 *   5. Canonical form: a name is valid only if it is exactly what the encoder produces for the bytes it
 *      decodes to. Lower-case hex, an escaped byte that needs no escape, a raw byte that needs one, '%'
 *      not followed by two hex digits: all invalid (-ENOENT). A segment name decoding to bytes that
 *      contain the table's delimiter is invalid too (it would be a second name for a deeper directory).
 *   6. Short form. If the encoded name would be longer than NAME_MAX (255) bytes, or for a version name
 *      if the whole `Q@TS` would, the segment/qualifier part is written as: the longest prefix of its
 *      encoded form of at most NAME_SHORT_PREFIX (200) bytes that splits no %XX escape and no UTF-8
 *      sequence, then `%~`, then 16 upper-case hex digits of name_hash(B) (FNV-1a-64 of all of B). '~' is
 *      not a hex digit, so a short form is never a full form. A short form does not give B back by
 *      itself: decoding yields a partial result (B's first bytes and its hash), which the caller resolves
 *      by seeking in the store to those bytes and asking name_match() of each candidate. Two byte
 *      strings with the same short form (same prefix and FNV-1a-64 collision) cannot be told apart; the
 *      caller takes the first in key order. The daemon gives each short-form entry its whole bytes as the
 *      attribute user.cellfs.name, through which a restore names what it made (fs/README.md).
 *   7. Version names are `Q@TS`: Q as above (possibly short), TS the cell timestamp in microseconds
 *      (0..INT64_MAX), decimal, zero-padded to 16 digits (a 17- to 19-digit timestamp has no padding).
 *      Parsing splits at the LAST '@'; TS must be all digits: exactly 16 if its value is below 10^16,
 *      otherwise no leading zero. Anything else is not a version name. A raw '@' never appears in a
 *      qualifier's name, so a caller may treat every name containing '@' as a version name.
 */
#ifndef CELLFS_NAME_H
#define CELLFS_NAME_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NAME_SHORT_PREFIX 200    /* encoded bytes kept before `%~` in a short form */
#define NAME_BUFSZ (NAME_MAX + 1) /* an output buffer of this size fits every encoded name and its NUL */

enum name_kind {
	NAME_TABLE,     /* a table name: never escaped */
	NAME_FAMILY,    /* a family name: never escaped */
	NAME_SEGMENT,   /* a key segment: rules 1-6, family escape (4), delimiter check */
	NAME_QUALIFIER, /* a qualifier: rules 1-3, 5, 6, '@' escaped */
};

/* What a key segment's name depends on: its table's delimiter and family names. Ignored for other
 * kinds; NULL for a segment means "no delimiter, no families". */
typedef struct name_segctx {
	int delim; /* the delimiter byte as 0..255 (cast through unsigned char), or -1 for none */
	/* Whether the N bytes at NAME (not NUL-terminated) are a family of the table. Called only with bytes
	 * that match the family-name pattern. NULL: the table has no families. */
	bool (*is_family)(const void *arg, const char *name, size_t n);
	const void *arg; /* passed to is_family */
} name_segctx;

/* A decoded name. Lives on the caller's stack; holds no pointers, needs no release. */
typedef struct name_result {
	bool partial;                  /* a short form: bytes[] is only B's first len bytes */
	size_t len;                    /* bytes in bytes[] */
	uint64_t hash;                 /* partial only: name_hash() of all of B */
	unsigned char bytes[NAME_MAX]; /* the decoded bytes, not NUL-terminated */
	/* private, for name_match(): how the name was made */
	enum name_kind kind;
	size_t limit;                  /* longest full form the context allowed */
	size_t formlen;
	char form[NAME_MAX];           /* the segment/qualifier part of the name as given */
} name_result;

/* FNV-1a-64 of the N bytes at B (offset basis 0xcbf29ce484222325, prime 0x100000001b3). */
uint64_t name_hash(const void *b, size_t n);

/* The name of the N bytes at B as a component of kind KIND. CTX matters for NAME_SEGMENT only (may be
 * NULL). Writes the name and a NUL to OUT (OUTCAP bytes; NAME_BUFSZ always suffices).
 * Returns the name's length (1..NAME_MAX). Any B has a name: long ones get the short form.
 * Errors: -EINVAL (a table/family name not matching the pattern, a segment containing the delimiter),
 *         -ENAMETOOLONG (a table/family name over NAME_MAX bytes), -ERANGE (OUTCAP too small). */
int name_encode(enum name_kind kind, const void *b, size_t n, const name_segctx *ctx, char *out,
		size_t outcap);

/* Decode NAME (NUL-terminated) as a component of kind KIND; CTX as for name_encode(). On success *RES
 * holds the bytes (res->partial false) or, for a short form, B's prefix and hash (res->partial true),
 * and 0 is returned. A table or family name comes back as its own bytes.
 * Errors: -ENOENT (not the canonical name of any byte string of that kind, in that context),
 *         -ENAMETOOLONG (NAME is over NAME_MAX bytes). *RES is undefined on error. */
int name_decode(enum name_kind kind, const char *name, const name_segctx *ctx, name_result *res);

/* The version name `Q@TS` of the cell with qualifier Q (QN bytes) and timestamp TS; OUT as for
 * name_encode(). Returns the length. Errors: -EINVAL (TS < 0), -ERANGE (OUTCAP too small). */
int name_encode_version(const void *q, size_t qn, int64_t ts, char *out, size_t outcap);

/* Parse NAME as a version name: the qualifier into *Q (as name_decode() of NAME_QUALIFIER would, possibly
 * partial), the timestamp into *TS. Returns 0.
 * Errors: -ENOENT (not a canonical version name), -ENAMETOOLONG (NAME is over NAME_MAX bytes). */
int name_decode_version(const char *name, name_result *q, int64_t *ts);

/* Whether the N bytes at B are what RES was decoded from, i.e. B's name (of RES's kind, in context CTX,
 * as a version's qualifier if RES came from name_decode_version()) is the decoded name. For a full
 * result this is a byte comparison; for a partial it checks B's prefix, hash and short form. CTX must be
 * the one given to name_decode() (for segments). */
bool name_match(const name_result *res, const name_segctx *ctx, const void *b, size_t n);

#endif
