/* aggregate.c — aggregate families, as Bigtable has them: a family's value type (intsum, intmin,
 * intmax), its names, and the merge AddToCell does at write time (mutate.c reads the cell and writes the
 * result). Merged cells are ordinary cells (8 bytes, big-endian int64), so reads, GC policies, drops and
 * moves need nothing special; only writing them is different (mutate.c refuses plain writes into them). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"

static const struct {
	const char *name;
	const char *cbt; /* `cbt ls` "Value Type": protojson of the type, spaced as cbt 1.23.2 spaces it */
} types[] = {
	[CS_TYPE_BYTES] = { "", "{}" },
	[CS_TYPE_INTSUM] = { "intsum",
			     "{\"aggregateType\":{\"inputType\":{\"int64Type\":{\"encoding\":{\"bigEndianBytes\":{}}}}, "
			     "\"sum\":{}}}" },
	[CS_TYPE_INTMIN] = { "intmin",
			     "{\"aggregateType\":{\"inputType\":{\"int64Type\":{\"encoding\":{\"bigEndianBytes\":{}}}}, "
			     "\"min\":{}}}" },
	[CS_TYPE_INTMAX] = { "intmax",
			     "{\"aggregateType\":{\"inputType\":{\"int64Type\":{\"encoding\":{\"bigEndianBytes\":{}}}}, "
			     "\"max\":{}}}" },
};
#define NTYPES (sizeof types / sizeof types[0])

bool agg_type_valid(unsigned type)
{
	return type < NTYPES;
}

const char *cs_value_type_name(cs_value_type type)
{
	return agg_type_valid(type) ? types[type].name : "";
}

const char *cs_value_type_cbt(cs_value_type type)
{
	return agg_type_valid(type) ? types[type].cbt : "{}";
}

/* Whether NAME lowers to LOWER (lower-case ASCII) as Go's strings.ToLower lowers it, which is how cbt
 * reads a type: ASCII letters, and the two runes that lower to ASCII, U+0130 (to 'i') and U+212A (to
 * 'k'). Any other byte must equal LOWER's. */
static bool lowers_to(const char *name, const char *lower)
{
	const unsigned char *p = (const unsigned char *)name;

	for (; *lower; lower++) {
		if (*lower == 'i' && p[0] == 0xc4 && p[1] == 0xb0)
			p += 2;
		else if (*lower == 'k' && p[0] == 0xe2 && p[1] == 0x84 && p[2] == 0xaa)
			p += 3;
		else if (*p == (unsigned char)*lower || (*p >= 'A' && *p <= 'Z' && *p + ('a' - 'A') == *lower))
			p++;
		else
			return false;
	}
	return !*p;
}

int cs_value_type_parse(const char *name, cs_value_type *out)
{
	for (unsigned i = 0; i < NTYPES; i++)
		if (lowers_to(name, types[i].name)) {
			*out = (cs_value_type)i;
			return 0;
		}
	/* Bigtable's HyperLogLog unique count: its sketch format is Bigtable's own, not reproduced here; and
	 * its UTF-8 string type, which only names what a family holds. */
	return lowers_to(name, "inthll") || lowers_to(name, "stringutf8bytes") ? -EOPNOTSUPP : -EINVAL;
}

int64_t agg_merge(cs_value_type type, int64_t old, int64_t input)
{
	switch (type) {
	case CS_TYPE_INTSUM:
		return (int64_t)((uint64_t)old + (uint64_t)input); /* wraps, as Bigtable's sum does */
	case CS_TYPE_INTMIN:
		return input < old ? input : old;
	case CS_TYPE_INTMAX:
		return input > old ? input : old;
	default:
		return input;
	}
}
