/* tjson.h — a small JSON reader for test data (RFC 8259's grammar; strings are decoded by cellctl's JSON
 * lexer, tools/import/jsonlex.h: valid UTF-8, \u escapes with surrogate pairs become UTF-8). The whole
 * document becomes a tree; numbers keep their text so 64-bit integers stay exact. For tests only: trusted
 * files of modest size, nested at most 64 deep. */
#ifndef CELLFS_TJSON_H
#define CELLFS_TJSON_H

#include <stdbool.h>
#include <stddef.h>

enum tj_type { TJ_NULL, TJ_BOOL, TJ_NUMBER, TJ_STRING, TJ_ARRAY, TJ_OBJECT };

typedef struct tj_value tj_value;
struct tj_value {
	enum tj_type type;
	bool b; /* TJ_BOOL */
	char *s; /* TJ_STRING: decoded, NUL-terminated (it may hold NULs: see len); TJ_NUMBER: its text */
	size_t len;
	size_t n; /* TJ_ARRAY, TJ_OBJECT: the number of items (members) */
	tj_value *items;
	char **keys; /* TJ_OBJECT: items[i] is the value of keys[i] (decoded, NUL-terminated) */
};

/* Parse TEXT[0..N). Returns 0 with *OUT the tree (free with tj_free()), or -EINVAL with ERR (ERRLEN
 * bytes) saying where, or -ENOMEM. */
int tj_parse(const char *text, size_t n, tj_value **out, char *err, size_t errlen);
void tj_free(tj_value *v); /* accepts NULL */

/* Read and parse the file PATH: as tj_parse(), and -errno when the file cannot be read. */
int tj_parse_file(const char *path, tj_value **out, char *err, size_t errlen);

/* The member KEY of object V, or NULL (also when V is NULL or not an object). */
const tj_value *tj_get(const tj_value *v, const char *key);

#endif
