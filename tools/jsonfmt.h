/* jsonfmt.h — cellctl's --format=json output: JSON lines, one object per line, one line per record
 * (a row for read and lookup, a table for ls, a family for ls TABLE, the total for count). Byte fields
 * follow jsonout.h's convention ("X" when valid UTF-8, else "X_b64"); timestamps are µs integers.
 *
 *   read, lookup  {"row":"r1","cells":[{"family":"cf","qualifier":"a","ts":1000,"value":"v"},...]}
 *                 cells sorted by family, qualifier, newest first; with keys-only no value member; cells
 *                 of an aggregate family also carry "int":N, the value read as a big-endian int64
 *   ls            {"table":"t"}
 *   ls TABLE      {"family":"cf","gc_policy":"maxversions=2","value_type":"intsum"}
 *                 gc_policy in setgcpolicy's syntax ("never" if none); value_type only for aggregates
 *   count         {"count":6}
 *
 * Invariant: every function writes only to the FILE it is given; the caller checks ferror() once.
 */
#ifndef CELLFS_JSONFMT_H
#define CELLFS_JSONFMT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cellstore.h"

/* One row as one line. INFO (the row's table, may be NULL) tells which families are aggregates; with
 * KEYS_ONLY the cells carry no value. Each cell is written once. */
void jsonfmt_row(FILE *f, const cs_row *row, const cs_table_info *info, bool keys_only);

/* One table name as one line. */
void jsonfmt_table(FILE *f, const char *name);

/* One family as one line: its name, GC policy (canonical input syntax) and value type name (cs_value_type
 * _name(); "" for a plain family, which leaves the member out). */
void jsonfmt_family(FILE *f, const char *name, const char *gc, const char *type);

/* count's total as one line. */
void jsonfmt_count(FILE *f, uint64_t n);

#endif
