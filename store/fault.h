/* fault.h — the store's fault-injection counter (SQLite's method): make the Nth call into LMDB or zstd
 * fail so tests can drive every error path. Internal; the public switch is cs_fault_arm(). */
#ifndef CELLFS_FAULT_H
#define CELLFS_FAULT_H

#include <stdbool.h>

/* Count one call of KIND (CS_FAULT_*); true if this call must fail. Cheap when disarmed. */
bool fault_hit(unsigned kind);

#endif
