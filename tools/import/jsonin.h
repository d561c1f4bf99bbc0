/* jsonin.h — reading cellctl's JSON lines (the input side of jsonout.h's convention). A line is one cell
 *   {"row":"r","family":"f","qualifier":"q","ts":1000,"value":"v"}
 * or one row
 *   {"row":"r","cells":[{"family":"f","qualifier":"q","ts":1000,"value":"v"},...]}
 * where each bytes field X may be "X_b64" (base64) instead, and every field is required. Prints nothing.
 */
#ifndef CELLFS_JSONIN_H
#define CELLFS_JSONIN_H

#include <stddef.h>
#include <stdint.h>

typedef struct ji_bytes {
	const char *p; /* borrowed until the next ji_parse_line() */
	size_t n;
} ji_bytes;

typedef struct ji_cell {
	ji_bytes row, family, qualifier, value;
	int64_t ts;
} ji_cell;

typedef struct ji_parser ji_parser;

/* Errors: -ENOMEM. Free with ji_free(). */
int ji_new(ji_parser **out);
void ji_free(ji_parser *p); /* accepts NULL */

/* Parse LINE (N bytes, one JSON object, surrounding whitespace allowed). *CELLS (borrowed until the next
 * call) gets its cells, *NCELLS their number (0 for a row with "cells":[]). Errors: -EINVAL with *ERR a
 * message naming what is wrong (caller frees), -ENOMEM. */
int ji_parse_line(ji_parser *p, const char *line, size_t n, ji_cell **cells, size_t *ncells, char **err);

#endif
