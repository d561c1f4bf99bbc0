/* store.h — what the seam (store.c) shows of its handles to the unit tests of one backend's internals;
 * nothing else in the store reaches through a public handle. */
#ifndef CELLFS_STORE_H
#define CELLFS_STORE_H

#include "cellstore.h"

/* The backend's own transaction behind TXN (backend.h's impl). */
void *store_txn_impl(cs_txn *txn);

#endif
