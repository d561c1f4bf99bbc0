/* aggregate.h — aggregate families (Bigtable's AddToCell): their value types, and how an input merges
 * into the cell at one timestamp (aggregate.c). Pure functions of values. Internal to the store. */
#ifndef CELLFS_AGGREGATE_H
#define CELLFS_AGGREGATE_H

#include <stdbool.h>
#include <stdint.h>

#include "cellstore.h"

/* Whether TYPE is a value type this store knows. */
bool agg_type_valid(unsigned type);

/* INPUT merged into OLD as TYPE (an aggregate type) says: sum (wrapping), signed min or max. */
int64_t agg_merge(cs_value_type type, int64_t old, int64_t input);

#endif
