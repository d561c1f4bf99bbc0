/* fault.c — process-wide fault injection for tests: the Nth counted library call fails.
 * Disarmed (the normal state) it costs one relaxed atomic load per call. */
#include "fault.h"

#include <stdatomic.h>
#include <stdint.h>

#include "cellstore.h"

_Atomic unsigned fault_armed;
static _Atomic uint64_t countdown;
static _Atomic bool fired;

void cs_fault_arm(unsigned kinds, uint64_t n)
{
	atomic_store(&fired, false);
	atomic_store(&countdown, n);
	atomic_store(&fault_armed, n ? kinds : 0);
}

bool cs_fault_fired(void)
{
	return atomic_load(&fired);
}

bool fault_fire(void)
{
	if (atomic_fetch_sub(&countdown, 1) != 1)
		return false;
	/* Fire once, then stay disarmed so cleanup paths run normally. */
	atomic_store(&fault_armed, 0);
	atomic_store(&fired, true);
	return true;
}
