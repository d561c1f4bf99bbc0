/* ddbjson.h — DynamoDB JSON as a DynamoDB table export (format DYNAMODB_JSON) writes it, one item a line:
 *   {"Item":{"id":{"S":"a1"},"price":{"N":"12.50"},"tags":{"SS":["x","y"]},"m":{"M":{"k":{"BOOL":true}}}}}
 * parsed strictly into a tree of typed values (import_ddb.c turns it into cells). Prints nothing.
 *
 * Strict: the line's object holds "Item" only; every attribute value is an object with exactly one of
 * the type descriptors S N B BOOL NULL SS NS BS M L; strings are valid UTF-8; N and the members of NS
 * are numbers' text ([+-]digits[.digits][e[+-]digits], a digit on either side of the point); B and the
 * members of BS are base64 (RFC 4648, padded); sets are not empty; a name is not given twice in an item
 * or a map; nesting is at most DJ_MAX_DEPTH deep.
 */
#ifndef CELLFS_DDBJSON_H
#define CELLFS_DDBJSON_H

#include <stddef.h>
#include <stdint.h>

#define DJ_MAX_DEPTH 64   /* levels of M and L (DynamoDB allows 32) */
#define DJ_NONE UINT32_MAX

typedef enum dj_type { DJ_S, DJ_N, DJ_B, DJ_BOOL, DJ_NULL, DJ_SS, DJ_NS, DJ_BS, DJ_M, DJ_L } dj_type;

typedef struct dj_bytes {
	const char *p; /* borrowed until the next dj_parse_line() */
	size_t n;
} dj_bytes;

typedef struct dj_value {
	dj_type type;
	dj_bytes name;  /* an attribute's name, or a map member's key (decoded); empty for list and set members */
	dj_bytes bytes; /* S: the string's bytes; N: the number's text as written; B: the decoded bytes; BOOL:
	                 * "true" or "false"; NULL: empty; SS NS BS M L: the value's own DynamoDB JSON text as
	                 * the line holds it, e.g. {"SS":["x","y"]} */
	uint32_t child; /* SS NS BS M L: the index of its first member (S, N or B in a set), DJ_NONE if empty */
	uint32_t next;  /* the index of the next member of the same item, map, list or set; DJ_NONE after the last */
	size_t column;  /* 1-based byte column of the value (its '{'; a set member's '"') in the line */
} dj_value;

typedef struct dj_parser dj_parser;

/* Errors: -ENOMEM. Free with dj_free(). */
int dj_new(dj_parser **out);
void dj_free(dj_parser *p); /* accepts NULL */

/* Parse LINE (N bytes: one JSON object, whitespace around it allowed). *VALUES gets the item's values
 * (borrowed until the next call; they point into LINE, which must not change meanwhile), the item's
 * attributes being the chain from *FIRST (DJ_NONE: an empty item). Returns how many values *VALUES
 * holds (every one in the item's tree). Errors: -EINVAL with *ERR a one-line message naming the column
 * and what is wrong (caller frees), -ENOMEM. */
int dj_parse_line(dj_parser *p, const char *line, size_t n, const dj_value **values, uint32_t *first,
		  char **err);

/* The type descriptor of T: "S", "N", ... "L". A static string. */
const char *dj_type_name(dj_type t);

#endif
