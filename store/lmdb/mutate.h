/* mutate.h — what the bulk loader shares with row mutations (mutate.c). */
#ifndef CELLFS_MUTATE_H
#define CELLFS_MUTATE_H

#include "cellstore.h"
#include "lm_types.h"

struct sch_table;

/* Before a write into ROW of table T: mark every clean drop of T covering ROW dirty (rewriting its
 * record), as reads may then no longer skip its range whole. Errors: -ENOMEM (fails TXN), a read's or
 * write's errors. */
int mut_mark_drops(lm_txn *txn, struct sch_table *t, cs_bytes row);

#endif
