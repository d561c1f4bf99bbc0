/* fault.c — process-wide fault injection for tests: the Nth counted library call fails.
 * Disarmed (the normal state) it costs one relaxed atomic load per call. */
#include "fault.h"

#include <stdatomic.h>
#include <stdint.h>

#include "cellstore.h"

static _Atomic unsigned armed_kinds;
static _Atomic uint64_t countdown;
static _Atomic bool fired;

void cs_fault_arm(unsigned kinds, uint64_t n)
{
	atomic_store(&fired, false);
	atomic_store(&countdown, n);
	atomic_store(&armed_kinds, n ? kinds : 0);
}

bool cs_fault_fired(void)
{
	return atomic_load(&fired);
}

bool fault_hit(unsigned kind)
{
	if (!(atomic_load_explicit(&armed_kinds, memory_order_relaxed) & kind))
		return false;
	if (atomic_fetch_sub(&countdown, 1) != 1)
		return false;
	/* Fire once, then stay disarmed so cleanup paths run normally. */
	atomic_store(&armed_kinds, 0);
	atomic_store(&fired, true);
	return true;
}
