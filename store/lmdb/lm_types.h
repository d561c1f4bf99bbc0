/* lm_types.h — the LMDB backend's handles, named for its headers that only pass them on (lm.h defines
 * them). */
#ifndef CELLFS_LM_TYPES_H
#define CELLFS_LM_TYPES_H

typedef struct lm_store lm_store;
typedef struct lm_txn lm_txn;
typedef struct lm_scan lm_scan;
typedef struct lm_bulk lm_bulk;

#endif
