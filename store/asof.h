/* asof.h — as-of stores (CS_OPEN_ASOF): a read's options narrowed to the store's time (asof.c). The time's
 * parser, cs_time_parse(), is public (cellstore.h). */
#ifndef CELLFS_ASOF_H
#define CELLFS_ASOF_H

#include "cellstore.h"

/* *OUT = O (NULL: every default) with its timestamp range narrowed to the as-of store ST's time: ts_end
 * at most asof + 1 ((0, 0), "every timestamp", becomes [0, asof + 1)). ST must be an as-of store. */
void asof_read_opts(const cs_store *st, const cs_read_opts *o, cs_read_opts *out);

#endif
