/* mem.c — the store's allocation wrappers: the libc calls, each counted as one CS_FAULT_ALLOC call
 * (disarmed: one relaxed atomic load). */
#include "mem.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cellstore.h"
#include "fault.h"

bool mem_fault(void)
{
	return fault_hit(CS_FAULT_ALLOC);
}

void *mem_malloc(size_t n)
{
	return mem_fault() ? NULL : malloc(n);
}

void *mem_calloc(size_t n, size_t size)
{
	return mem_fault() ? NULL : calloc(n, size);
}

void *mem_realloc(void *p, size_t n)
{
	return mem_fault() ? NULL : realloc(p, n);
}

char *mem_strdup(const char *s)
{
	return mem_fault() ? NULL : strdup(s);
}

FILE *mem_open_memstream(char **buf, size_t *n)
{
	return mem_fault() ? NULL : open_memstream(buf, n);
}

char *mem_strndup(const char *s, size_t n)
{
	return mem_fault() ? NULL : strndup(s, n);
}

int mem_asprintf(char **out, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (mem_fault())
		return -1;
	va_start(ap, fmt);
	n = vasprintf(out, fmt, ap);
	va_end(ap);
	return n;
}
