/* rx.h — regular expressions in the dialect of cbt and Bigtable: RE2's syntax (Go's regexp/syntax with
 * the Perl flags, \C included), matched against raw bytes, one byte one character, and only against the
 * whole subject (as Bigtable's row, family and qualifier filters match). The pattern is checked and
 * refused with Go's words where RE2 refuses it, then translated into a PCRE2 pattern that spells every
 * character class out as bytes, and matched with PCRE2's backtracking matcher for a bounded number of
 * steps, then, past them, its DFA matcher (time polynomial in the subject). The store's read filters and
 * cellctl use this module and nothing else.
 *
 * A byte of the pattern at or above 0x80 stands for itself (as if written \xHH), as Bigtable reads
 * patterns and the emulator escapes them. Classes and case folding are Go's Unicode ones, restricted to
 * the runes 0-255 a byte can be: \pL matches the byte 0xE9, [\p{Han}] matches nothing, (?i)k matches K,
 * (?i)\x{212A} (the Kelvin sign) matches k and K.
 */
#ifndef CELLFS_RX_H
#define CELLFS_RX_H

#include <stddef.h>

typedef struct rx rx;

/* Why a pattern was refused: Go's regexp words for it ("missing closing )", "invalid escape sequence")
 * and the part of the pattern they are about, as Go's error names it. */
typedef struct rx_error {
	const char *what;  /* static string */
	size_t off, len;   /* the offending bytes: PATTERN[off .. off + len) */
} rx_error;

/* Compile PATTERN (NUL-terminated). On success *OUT is the compiled expression; free it with rx_free().
 * Errors: -EINVAL (the pattern is refused; *ERR, if ERR is not NULL, says why), -ENOMEM. Refused as RE2
 * refuses them: bad syntax, backreferences, lookaround, possessive quantifiers, repetition counts over
 * 1000 (also in product, as (a{100}){11}); and groups nested over 1000 deep or a translation PCRE2 finds
 * too large ("expression too large"). */
int rx_compile(const char *pattern, rx **out, rx_error *err);

/* Whether RE matches all of the N bytes at P (P may be NULL when N is 0). Returns 1 (it does), 0 (it
 * does not) or -ENOMEM. An rx is used by one thread at a time (it holds the matcher's workspace). */
int rx_match(rx *re, const void *p, size_t n);

/* Free RE. Accepts NULL. */
void rx_free(rx *re);

#endif
