/* jsonout.h — the low-level JSON writer cellctl's machine-readable output is made of: string literals,
 * base64, and the convention every byte field follows.
 *
 * Convention: a field holding arbitrary bytes (row key, qualifier, value) is written "X":"<text>" when
 * its bytes are valid UTF-8, else "X_b64":"<base64>" (RFC 4648, with padding); a reader takes whichever
 * of the two it finds. Timestamps are "ts":<µs since the epoch, integer>.
 *
 * Invariant: every function writes only to the FILE it is given and never fails loudly; the caller
 * checks ferror() once at the end (as stdio intends).
 */
#ifndef CELLFS_JSONOUT_H
#define CELLFS_JSONOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Whether P (N bytes) is valid UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above
 * U+10FFFF). The empty string is. */
bool jo_utf8(const void *p, size_t n);

/* Write P (N bytes) as a JSON string literal, quotes included: '"' and '\' escaped, control characters
 * (U+0000..U+001F) as \b \f \n \r \t or \u00XX, DEL as \u007f, everything else as it is. P should be
 * valid UTF-8 (jo_utf8); a byte that is not is written as U+FFFD, so the output is always valid JSON. */
void jo_str(FILE *f, const void *p, size_t n);

/* Write P (N bytes) as a JSON string literal holding its base64 (RFC 4648 standard alphabet, padded). */
void jo_b64(FILE *f, const void *p, size_t n);

/* Write the member "KEY":"<P as text>" if P is valid UTF-8, else "KEY_b64":"<P in base64>". KEY is
 * written as it is (a plain ASCII name). No separator before or after. */
void jo_bytes_field(FILE *f, const char *key, const void *p, size_t n);

#endif
