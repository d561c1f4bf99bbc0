/* read.h — what the store's modules read through scans beyond cellstore.h's cs_scan_* (read.c). */
#ifndef CELLFS_READ_H
#define CELLFS_READ_H

#include <stddef.h>
#include <stdint.h>

#include "cellstore.h"
#include "lm_types.h"

struct sch_table;

/* The newest visible cell of column (ROW, FAMILY:Q) of table T (loaded in TXN): *TS its timestamp, *VAL
 * (VLEN bytes) a copy of its value, which the caller frees (free()). Errors: -ENOENT (no visible cell),
 * -ENOMEM, a read's errors. */
int read_newest(lm_txn *txn, struct sch_table *t, cs_bytes row, const char *family, cs_bytes q,
		int64_t *ts, void **val, size_t *vlen);

#endif
