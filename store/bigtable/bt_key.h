/* bt_key.h — row keys' order, as Bigtable sorts them: bytewise, a prefix first. Pure, for every file of
 * the backend and its unit tests. */
#ifndef CELLFS_BT_KEY_H
#define CELLFS_BT_KEY_H

#include <stddef.h>
#include <string.h>

/* <0, 0 or >0 as key A (AN bytes) sorts before, with or after key B (an empty key's bytes may be NULL). */
static inline int bt_key_cmp(const void *a, size_t an, const void *b, size_t bn)
{
	size_t n = an < bn ? an : bn;
	int c = n ? memcmp(a, b, n) : 0;
	return c ? c : (an > bn) - (an < bn);
}

#endif
