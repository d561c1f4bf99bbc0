/* lmutil.h — for the unit tests of the LMDB backend's internals (store/lmdb/): the backend's transaction
 * behind a public one. */
#ifndef CELLFS_LMUTIL_H
#define CELLFS_LMUTIL_H

#include "lm.h"
#include "store.h"

/* TXN must be a transaction of an LMDB store. */
static inline lm_txn *lm_txn_of(cs_txn *txn)
{
	return store_txn_impl(txn);
}

#endif
