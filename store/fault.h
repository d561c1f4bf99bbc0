/* fault.h — the store's fault-injection counter (SQLite's method): make the Nth call into LMDB or zstd
 * fail so tests can drive every error path. Internal; the public switch is cs_fault_arm(). */
#ifndef CELLFS_FAULT_H
#define CELLFS_FAULT_H

#include <stdatomic.h>
#include <stdbool.h>

extern _Atomic unsigned fault_armed; /* the kinds armed (CS_FAULT_*); 0 except in fault tests */
bool fault_fire(void);               /* fault_hit() for an armed kind: counts down */

/* Count one call of KIND (CS_FAULT_*); true if this call must fail. Inline, as it guards every LMDB
 * call: disarmed, it is one relaxed load. */
static inline bool fault_hit(unsigned kind)
{
	return (atomic_load_explicit(&fault_armed, memory_order_relaxed) & kind) && fault_fire();
}

#endif
