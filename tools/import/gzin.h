/* gzin.h — reading a gzip file (RFC 1952) as the bytes it holds, for cellctl import: the one place cellctl
 * calls zlib. Several gzip members one after another (`cat a.gz b.gz`) read as their contents joined,
 * as gzip -d reads them. Anything wrong (a damaged or truncated stream, other bytes after a member) is an
 * error with one line of text saying what. Prints nothing.
 */
#ifndef CELLFS_GZIN_H
#define CELLFS_GZIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct gzin gzin;

/* Whether the N bytes at P start as a gzip member does (the magic bytes 1f 8b). */
bool gzin_magic(const void *p, size_t n);

/* Read gzip from FD, from its current offset (the descriptor stays the caller's, not closed).
 * Errors: -ENOMEM. Free with gzin_free(). */
int gzin_new(int fd, gzin **out);
void gzin_free(gzin *g); /* accepts NULL */

/* Up to N bytes of the contents into BUF: returns how many (> 0 until the end), 0 at the end of the last
 * member, -EBADMSG when the stream is damaged or ends early (gzin_error() says how), -ENOMEM, or
 * -errno from read(). Every byte before the damage is returned first; an error sticks: later calls
 * return it again. */
ssize_t gzin_read(gzin *g, void *buf, size_t n);

/* The same, as csv_open_fn() (csv.h) takes it: CTX is the gzin. */
ssize_t gzin_read_fn(void *ctx, void *buf, size_t n);

/* After -EBADMSG: what is wrong, one line ("the gzip stream ends early", zlib's words for damage);
 * a static or G-owned string, valid until gzin_free(). NULL before any error. */
const char *gzin_error(const gzin *g);

/* Compressed bytes read from FD so far (for progress). */
uint64_t gzin_offset(const gzin *g);

#endif
