/* fault.h — the store's fault-injection counter (SQLite's method): make the Nth call into LMDB or zstd
 * fail so tests can drive every error path. Internal; the public switch is cs_fault_arm(). */
#ifndef CELLFS_FAULT_H
#define CELLFS_FAULT_H

#include <stdatomic.h>
#include <stdbool.h>

extern _Atomic unsigned fault_armed; /* the kinds armed (CS_FAULT_*); 0 except in fault tests */
bool fault_fire(unsigned kind);      /* fault_hit() for an armed kind: counts down */

/* Count one call of KIND (CS_FAULT_*); true if this call must fail. Inline, as it guards every LMDB
 * call: disarmed, it is one relaxed load. */
static inline bool fault_hit(unsigned kind)
{
	return (atomic_load_explicit(&fault_armed, memory_order_relaxed) & kind) && fault_fire(kind);
}

/* fault_hit() as a function: what a host hands a backend module it loads (backend.h's cs_host). */
bool fault_check(unsigned kind);

/* Make this copy of the fault state count in another's: from now on every fault_hit() here is HIT(KIND)
 * (NULL: back to this copy's own state, disarmed). A backend module links its own copy of this file;
 * its cs_backend_bind() binds it to the host's fault_check(), so CELLFS_FAULT in cellctl or cellfs
 * reaches the module's allocations. While bound, this copy's cs_fault_arm(), cs_fault_fired() and
 * cs_fault_calls() are not the ones that count: the host's are. Call it before any thread counts. */
void fault_bind(bool (*hit)(unsigned kind));

#endif
