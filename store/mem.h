/* mem.h — the store's allocations. Every allocation in store/ goes through these (tests/unit/
 * alloc_sites.sh checks), so a fault test can make the Nth one fail (CS_FAULT_ALLOC), as SQLite's
 * sqlite3_malloc does. They behave as the libc calls they wrap; memory is freed with free(). */
#ifndef CELLFS_MEM_H
#define CELLFS_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* As malloc(3), calloc(3), realloc(3) (on failure *P of realloc is untouched), strdup(3), strndup(3):
 * NULL when out of memory. */
void *mem_malloc(size_t n);
void *mem_calloc(size_t n, size_t size);
void *mem_realloc(void *p, size_t n);
char *mem_strdup(const char *s);
char *mem_strndup(const char *s, size_t n);
/* As open_memstream(3): NULL when out of memory. */
FILE *mem_open_memstream(char **buf, size_t *n);

/* As asprintf(3): the length printed, or -1 when out of memory (*OUT is then unspecified). Caller
 * frees *OUT. */
int mem_asprintf(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* For an allocation a library makes on the store's behalf (a zstd context, a compiled regex): count it
 * as one; true if it must fail as out of memory. */
bool mem_fault(void);

#endif
