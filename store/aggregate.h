/* aggregate.h — aggregate families (Bigtable's AddToCell): value type names, and merging an input into
 * the cell at one timestamp. Internal to the store. */
#ifndef CELLFS_AGGREGATE_H
#define CELLFS_AGGREGATE_H

#include "store_internal.h"

/* Whether TYPE is a value type this store knows. */
bool agg_type_valid(unsigned type);

/* INPUT merged into OLD as TYPE (an aggregate type) says: sum (wrapping), signed min or max. */
int64_t agg_merge(cs_value_type type, int64_t old, int64_t input);

/* The value CS_ADD_TO_CELL writes at (ROW, F:Q, TS) of table T: INPUT merged into the visible cell there,
 * or INPUT if a read returns no cell there. OUT gets it, 8 bytes big-endian.
 * Errors: -EIO (the cell there is not 8 bytes long: a corrupt store), -ENOMEM, a read's errors. */
int agg_value_at(cs_txn *txn, struct sch_table *t, cs_bytes row, const struct sch_family *f, cs_bytes q,
		 int64_t ts, int64_t input, uint8_t out[8]);

#endif
