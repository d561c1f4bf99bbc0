/* jsonlex.h — what cellctl's two JSON line parsers read alike (jsonin.c: cellctl's JSON lines; ddbjson.c:
 * DynamoDB exports): string literals, decoded onto the end of a growing buffer, and base64. Each
 * parser words its own messages from the faults reported here. Prints nothing.
 */
#ifndef CELLFS_JSONLEX_H
#define CELLFS_JSONLEX_H

#include <stddef.h>

/* A growing buffer: P is NULL or malloc'd (the owner frees it), N bytes used of CAP. */
typedef struct jl_buf {
	char *p;
	size_t n, cap;
} jl_buf;

/* Start B with room for a line's strings: B->p is never NULL afterwards, so that spans can be offsets
 * from it. Errors: -ENOMEM (B unchanged). */
int jl_buf_init(jl_buf *b);

/* Append N bytes at P to B. Errors: -ENOMEM (B unchanged). */
int jl_put(jl_buf *b, const void *p, size_t n);

/* A parser's error: the first one of a line wins. When *ERR is not NULL, the message (FMT) goes to
 * **ERR (malloc'd, the caller frees; NULL if there is no memory for it) and *ERR becomes NULL, so later
 * errors of the line say nothing. Returns -EINVAL. */
__attribute__((format(printf, 2, 3)))
int jl_fail(char ***err, const char *fmt, ...);

typedef enum jl_fault_kind {
	JL_NOT_UTF8 = 1,   /* raw bytes that are not UTF-8 */
	JL_UNTERMINATED,   /* no closing '"' */
	JL_CONTROL,        /* a raw control character */
	JL_BAD_U_ESCAPE,   /* \u without four hex digits */
	JL_LONE_SURROGATE, /* \uD800-\uDFFF not in a high-low pair */
	JL_BAD_ESCAPE,     /* '\' then another byte (F->escape) */
} jl_fault_kind;

typedef struct jl_fault {
	jl_fault_kind kind;
	const char *at; /* where in the text a message should point: the run of bytes, the quote, the escape */
	char escape;    /* JL_BAD_ESCAPE: the byte after the backslash */
} jl_fault;

/* Decode the string literal at *S (its opening '"'; the text ends at END) onto the end of B, and move
 * *S past its closing quote. Errors: -EINVAL with *F saying what is wrong and where; -ENOMEM. On error
 * B may hold part of the string (the caller drops it by resetting B->n). */
int jl_string(jl_buf *b, const char **s, const char *end, jl_fault *f);

/* F in words, for a message: "unterminated string", "bad escape \x", ... (JL_NOT_UTF8: "a string that is
 * not valid UTF-8"). Returns BUF (N bytes, 48 are enough) or a static string. */
const char *jl_fault_text(const jl_fault *f, char *buf, size_t n);

/* Decode base64 (RFC 4648, standard alphabet, padded) P (N bytes) in place: the bytes take the first
 * *OUT bytes of P. Errors: -EINVAL (not such base64; P may be changed). */
int jl_b64_decode(char *p, size_t n, size_t *out);

#endif
