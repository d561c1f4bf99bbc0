/* restore.h — what lm_gc() needs of restores in progress (restore.c): a restore writes each table under a
 * fresh id with no table record until its last transaction, and records that id as staged. */
#ifndef CELLFS_RESTORE_H
#define CELLFS_RESTORE_H

#include <stddef.h>
#include <stdint.h>

#include "cellstore.h"
#include "lm_types.h"

/* The table ids of restores in progress (their staging tables), which lm_gc() must not collect as a
 * deleted table's: *IDS (N of them), which the caller frees. In a write TXN, records of restores whose
 * process is gone are deleted (and left out). Errors: -ENOMEM, a read's or write's errors. */
int restore_live_ids(lm_txn *txn, uint32_t **ids, size_t *n);

#endif
