/* args.h — cbt's argument dialect, parsed exactly as cbt parses it: key=value options, Go's integer and
 * boolean syntax, set's family:qualifier=value[@ts], `columns=` selectors and createtable's CSV list.
 *
 * Nothing here prints or touches the store. Functions that can reject user input return -EINVAL and, if
 * ERR is not NULL, a one-line message naming the bad input (caller frees); -ENOMEM otherwise.
 */
#ifndef CELLFS_ARGS_H
#define CELLFS_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* cbt's parseArgs: every one of the ARGC arguments must be "key=value" with key one of VALID (a
 * NULL-terminated list); VALS[i] gets the value of the last argument with key VALID[i], or NULL.
 * Errors: -EINVAL `bad arg "x"` (no '='), `unknown arg key "k"`. */
int args_kv(int argc, char *const argv[], const char *const valid[], const char *vals[], char **err);

/* Go's strconv.ParseInt(S, BASE, 64) for BASE 0 (sign, then 0x/0o/0b/0 prefixes and '_' between digits)
 * or 10 (strconv.Atoi). Returns 0, -EINVAL (syntax) or -ERANGE (out of int64's range). */
int go_parse_int(const char *s, int base, int64_t *out);

/* Go's strconv.ParseBool: 1 t T TRUE true True, 0 f F FALSE false False. Returns 0 or -EINVAL. */
int go_parse_bool(const char *s, bool *out);

/* The words Go's strconv puts in its errors for go_parse_int()/go_parse_bool() results. */
const char *go_num_strerror(int err);

/* One `set` argument. FAMILY is allocated; QUAL and VALUE point into the argument. */
typedef struct set_cell {
	char *family;
	const char *qual;
	size_t qual_len;
	const char *value;
	size_t value_len;
	bool has_ts;  /* an '@' followed by a Go integer ended the value */
	int64_t ts;   /* that integer, as written (see cbt_cell_ts) */
} set_cell;

/* Parse ARG as cbt's set does: the leftmost match of the Go regexp `([^:]+):([^=]*)=(.*)` (so the
 * value stops at the first newline, and leading ':' are skipped), then, if the value's last '@' is
 * followed by something strconv.ParseInt(s, 0, 64) accepts, that is the timestamp and the value ends
 * before it; otherwise "@..." stays part of the value. Errors: -EINVAL (no match; no message),
 * -ENOMEM. Release OUT with set_cell_release(). */
int args_set_cell(const char *arg, set_cell *out);
void set_cell_release(set_cell *c);

/* The timestamp cbt's set writes for C, in µs: the Go client truncates every timestamp to whole
 * milliseconds, -1 is its ServerTime (now), and no '@ts' means bigtable.Now(). NOW is the current time
 * in µs. Returns 0, or -EINVAL for a timestamp that is negative after truncation. */
int cbt_cell_ts(const set_cell *c, int64_t now, int64_t *ts);

/* One `columns=` selector: RE2 patterns for the family and qualifier that must match whole names; NULL
 * means any. */
typedef struct colspec {
	char *family;
	char *qualifier;
} colspec;

/* Parse a `columns=` value as cbt does: comma-separated, empty items skipped; "q" and ":q" select
 * qualifier q in any family, "f:" family f, "f:q" both; more than one ':' is an error.
 * Errors: -EINVAL `bad format for column "a:b:c"`, or no selector at all. Free with colspecs_free(). */
int args_columns(const char *val, colspec **out, size_t *n, char **err);
void colspecs_free(colspec *v, size_t n);

/* The first record of S read as Go's encoding/csv reads it (',' separated, RFC 4180 quoting, blank
 * lines skipped). Errors: -EINVAL (EOF: nothing there; a bare or unbalanced '"'). Free with
 * args_strv_free(). */
int args_csv_record(const char *s, char ***fields, size_t *n, char **err);
void args_strv_free(char **v, size_t n);

#endif
