/* jsonlex.h — what cellctl's two JSON line parsers read alike (jsonin.c: cellctl's JSON lines; ddbjson.c:
 * DynamoDB exports): a line's cursor (jl_lexer: whitespace, punctuation, columns, the line's first
 * error), string literals decoded onto the end of a growing buffer, and base64. Prints nothing.
 */
#ifndef CELLFS_JSONLEX_H
#define CELLFS_JSONLEX_H

#include <stdbool.h>
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

/* ---- A line's cursor ------------------------------------------------------------------------------ */

/* Where a decoded string is: OFF bytes into the lexer's buffer (which moves as it grows), N long. */
typedef struct jl_span {
	size_t off, n;
} jl_span;

/* One line being read: the text [START, END) read up to S, its decoded strings in B, its first error
 * going to *ERR (jl_fail()). A parser embeds one, set up by jl_lexer_init() and jl_begin(). */
typedef struct jl_lexer {
	jl_buf b;
	const char *s, *end, *start;
	char **err;
	const char *utf8_hint; /* added to the message of a string that is not UTF-8 (static, "" for none) */
} jl_lexer;

/* Set up L (embedded) with HINT (see utf8_hint). Errors: -ENOMEM. Undo with jl_lexer_release(). */
int jl_lexer_init(jl_lexer *l, const char *hint);
void jl_lexer_release(jl_lexer *l);

/* A parser that embeds its jl_lexer as its first member: SIZE zeroed bytes, the lexer set up with HINT.
 * Returns NULL when there is no memory. Free with jl_parser_free() once its own arrays are freed. */
void *jl_parser_new(size_t size, const char *hint);
void jl_parser_free(void *parser); /* releases its lexer and frees it; accepts NULL */

/* Start reading LINE (N bytes; it must not change meanwhile): errors go to *ERR, the buffer is emptied. */
void jl_begin(jl_lexer *l, const char *line, size_t n, char **err);

/* Skip JSON whitespace. */
void jl_ws(jl_lexer *l);

/* The 1-based byte column of the cursor, for messages. */
size_t jl_col(const jl_lexer *l);

/* Skip whitespace, then C if it is there: true if it was. */
bool jl_eat(jl_lexer *l, char c);

/* A string literal (after whitespace) decoded onto the buffer, *OUT where. Errors: -EINVAL (reported
 * through jl_fail(): "column C: want a string", "column C: unterminated string", ...), -ENOMEM. */
int jl_str(jl_lexer *l, jl_span *out);

/* A string literal holding base64, decoded in place behind its text (never longer), *OUT where. WHAT
 * names it in the message ("column C: bad base64 in WHAT"). Errors: as jl_str(). */
int jl_b64str(jl_lexer *l, const char *what, jl_span *out);

#endif
