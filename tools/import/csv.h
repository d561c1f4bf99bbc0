/* csv.h — CSV as Go's encoding/csv reads and writes it (cbt import's dialect): ',' separated, RFC 4180
 * quoting (a quoted field may hold ',', '"' doubled, and newlines), "\r\n" read as "\n", blank lines
 * skipped, no comments, no trimming. The reader streams from a file descriptor in constant memory (one
 * record at a time) and can copy every byte it reads to a second descriptor (spooling a pipe so it can
 * be read again). Prints nothing.
 */
#ifndef CELLFS_CSV_H
#define CELLFS_CSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

typedef struct csv_reader csv_reader;

typedef struct csv_field {
	const char *p; /* borrowed until the next csv_read(); followed by a NUL not counted in n */
	size_t n;
} csv_field;

/* Read from FD (not closed by the reader). If TEE >= 0, every byte read is also written there.
 * Errors: -ENOMEM. Free with csv_free(). */
int csv_open(int fd, int tee, csv_reader **out);

/* Read what FN gives instead of a descriptor (a decompressor, gzin.h): FN(CTX, BUF, N) returns the bytes
 * it put in BUF (up to N), 0 at the end, or -errno, which the reading calls below return as they are.
 * Errors: -ENOMEM. Free with csv_free(). */
typedef ssize_t csv_read_fn(void *ctx, void *buf, size_t n);
int csv_open_fn(csv_read_fn *fn, void *ctx, csv_reader **out);
void csv_free(csv_reader *r); /* accepts NULL */

/* The next record: *FIELDS (borrowed until the next call) and *N, and *LINE, the line it starts on
 * (1-based, counting every physical line). Returns 1, 0 at the end of the input, -EINVAL for malformed
 * CSV with *ERR set to a message naming the line and column (caller frees), or -errno from read/write
 * (-EIO, ...). */
int csv_read(csv_reader *r, csv_field **fields, size_t *n, uint64_t *line, char **err);

/* The next physical line, for line-oriented formats sharing the reader: *LINE (borrowed until the next
 * call) holds it with its '\n' (none at the end of the input; "\r\n" given as "\n"), *LINENO its
 * number. Returns 1, 0 at the end, or -errno. Do not mix with csv_read() on one reader. */
int csv_read_line(csv_reader *r, const char **line, size_t *n, uint64_t *lineno);

/* Bytes consumed from FD so far. */
uint64_t csv_offset(const csv_reader *r);

/* Physical lines read so far (a failed read stopped in the next one). */
uint64_t csv_lineno(const csv_reader *r);

/* Write one field to F: quoted (with '"' doubled) when it holds ',', '"', '\r' or '\n' or starts with a
 * space or tab, as Go's csv.Writer does; bare otherwise. */
void csv_put_field(FILE *f, const void *p, size_t n);

/* Whether the CSV reader gives back exactly these bytes when csv_put_field() wrote them: false when
 * they hold "\r\n" (read back as "\n"). */
bool csv_carries(const void *p, size_t n);

#endif
