/* jsonout.h — writing JSON for cellctl's machine-readable formats. Byte strings follow one convention
 * everywhere: a field X holding bytes is "X":"<string>" when the bytes are valid UTF-8 (controls, '"'
 * and '\' escaped), else "X_b64":"<base64>" (RFC 4648, padded). Prints only to the FILE it is given.
 */
#ifndef CELLFS_JSONOUT_H
#define CELLFS_JSONOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Whether P[0..N) is valid UTF-8 (no surrogates, no overlong forms, at most U+10FFFF). */
bool jo_utf8(const void *p, size_t n);

/* A JSON string literal of P[0..N), which should be valid UTF-8: '"' '\' and bytes below 0x20 (and
 * 0x7F) escaped, the rest copied. */
void jo_str(FILE *f, const void *p, size_t n);

/* "KEY":"..." if P[0..N) is valid UTF-8, else "KEY_b64":"...". */
void jo_bytes_field(FILE *f, const char *key, const void *p, size_t n);

/* P[0..N) in base64 (standard alphabet, padded), without quotes. */
void jo_b64(FILE *f, const void *p, size_t n);

#endif
