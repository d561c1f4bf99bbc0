/* fault.c — process-wide fault injection for tests: the Nth counted library call fails.
 * Disarmed (the normal state) it costs one relaxed atomic load per call. A backend module's copy is
 * bound to its host's (fault_bind()), so that both count as one. */
#include "fault.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cellstore.h"

_Atomic unsigned fault_armed;
static _Atomic uint64_t countdown, armed_n;
static _Atomic bool fired;
/* Bound (a module's copy): every armed call asks the host's state; fault_armed then stays all ones. */
static bool (*_Atomic bound)(unsigned kind);

void cs_fault_arm(unsigned kinds, uint64_t n)
{
	atomic_store(&fired, false);
	atomic_store(&countdown, n);
	atomic_store(&armed_n, n);
	atomic_store(&fault_armed, n ? kinds : 0);
}

bool cs_fault_fired(void)
{
	return atomic_load(&fired);
}

uint64_t cs_fault_calls(void)
{
	return atomic_load(&fired) ? atomic_load(&armed_n) : atomic_load(&armed_n) - atomic_load(&countdown);
}

bool fault_check(unsigned kind)
{
	return fault_hit(kind);
}

void fault_bind(bool (*hit)(unsigned kind))
{
	atomic_store(&bound, hit);
	atomic_store(&fault_armed, hit ? ~0u : 0);
}

bool fault_fire(unsigned kind)
{
	bool (*hit)(unsigned) = atomic_load(&bound);

	if (hit)
		return hit(kind);
	if (atomic_fetch_sub(&countdown, 1) != 1)
		return false;
	/* Fire once, then stay disarmed so cleanup paths run normally. */
	atomic_store(&fault_armed, 0);
	atomic_store(&fired, true);
	return true;
}

int cs_fault_arm_spec(const char *spec)
{
	static const struct {
		const char *name;
		unsigned kind;
	} names[] = { { "lmdb", CS_FAULT_LMDB }, { "zstd", CS_FAULT_ZSTD }, { "alloc", CS_FAULT_ALLOC } };
	unsigned kinds = 0;
	const char *p = spec;
	unsigned long long n;
	char *end;

	if (!*spec) {
		cs_fault_arm(0, 0);
		return 0;
	}
	for (;;) {
		size_t len = strcspn(p, "+:"), i;
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i].name) == len && !memcmp(p, names[i].name, len))
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			return -EINVAL;
		kinds |= names[i].kind;
		p += len;
		if (*p++ != '+')
			break;
	}
	if (p[-1] != ':' || *p < '0' || *p > '9')
		return -EINVAL;
	errno = 0;
	n = strtoull(p, &end, 10);
	if (errno || *end)
		return -EINVAL;
	cs_fault_arm(kinds, n);
	return 0;
}
