/* lm_internal.h — what lm.c and lm_heat.c share inside the LMDB store's module (lm.h is the backend's
 * header for its other files). */
#ifndef CELLFS_LM_INTERNAL_H
#define CELLFS_LM_INTERNAL_H

#include "lm.h"

/* T's commit (T a write transaction that has not failed), carrying the Key Visualizer's counts when they
 * are due: lm_txn_commit()'s one hook (lm_heat.c). Returns kv_txn_commit()'s result, or the error
 * writing the counts met (then T is aborted). */
int lm_heat_commit(lm_txn *t);

#endif
