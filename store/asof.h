/* asof.h — as-of stores (CS_OPEN_ASOF): a read's options narrowed to the store's time (asof.c). The time's
 * parser, cs_time_parse(), is public (cellstore.h). */
#ifndef CELLFS_ASOF_H
#define CELLFS_ASOF_H

#include "cellstore.h"

/* *OUT = O (NULL: every default) with its timestamp range narrowed to an as-of store's time ASOF_US:
 * ts_end at most ASOF_US + 1 ((0, 0), "every timestamp", becomes [0, ASOF_US + 1)). */
void asof_read_opts(int64_t asof_us, const cs_read_opts *o, cs_read_opts *out);

#endif
