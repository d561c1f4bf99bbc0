/* kv_grow.c — the file of a written map. A writable env in memory (kv_grow_mem_fs()) maps the file
 * MDB_WRITEMAP: a write transaction's pages are written into the map, not copied to the heap and
 * pwrite()n at commit, so the file must be there before LMDB writes a page. LMDB makes it as large as
 * the whole map: kv_env_open() cuts it back (kv_grow_cut_back()). A write past the file's end faults
 * with SIGBUS; the handler (kv_guard.c) has kv_grow_on_fault() allocate the file up to past that page
 * (fallocate: on a full disk that fails, not a later write) and returns, and the write runs again. If
 * the disk is full the fault jumps back as a damaged page's does, and the call returns -ENOSPC. */
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "kv_internal.h"

/* Only in memory does a written map pay: on a disk, every sync point cleans the pages written, which
 * write-protects them in the map, and copy-on-write moves each commit to other pages, so nearly every
 * page a commit writes faults first, where pwrite() copies it. In memory nothing cleans the pages. */
bool kv_grow_mem_fs(const char *dir)
{
	struct statfs sf;
	return !statfs(dir, &sf) && (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC);
}

/* The size the file grows to so that offset OFF lies inside it, from its size SIZE: past OFF by an
 * eighth of the file (at least KV_GROW_MIN), in whole KV_GROW_MIN. */
static uint64_t grow_to(uint64_t off, uint64_t size)
{
	uint64_t step = size / 8 > KV_GROW_MIN ? size / 8 : KV_GROW_MIN;
	return (off + step + KV_GROW_MIN - 1) / KV_GROW_MIN * KV_GROW_MIN;
}

/* The file's size is asked again, not remembered: another process's kv_env_open() may have cut it back
 * meanwhile, or (LMDB's open, before the cut) made it the map's size since the access faulted; so a
 * fault found inside the file is let run again once. */
int kv_grow_on_fault(kv_env *e, uintptr_t addr, uintptr_t *inside)
{
	uintptr_t map = atomic_load_explicit(&e->map, memory_order_relaxed);
	uint64_t off = addr - map, size, to;
	struct stat sb;

	if (!map || addr < map || off >= e->mapsize || fstat(e->dfd, &sb))
		return 0;
	size = (uint64_t)sb.st_size;
	if (off < size) {
		if (*inside == addr)
			return 0; /* again: not a race */
		*inside = addr;
		return 1;
	}
	to = grow_to(off, size);
	if (to > e->mapsize)
		to = e->mapsize;
	int rc = fallocate(e->dfd, 0, (off_t)size, (off_t)(to - size)) ? errno : 0;
	if (rc == EOPNOTSUPP) /* (no fallocate here: a sparse file, as LMDB would make) */
		rc = ftruncate(e->dfd, (off_t)to) ? errno : 0;
	if (rc)
		return -1;
	atomic_store_explicit(&e->fsize, to, memory_order_relaxed);
	return 1;
}

/* With the writer lock held, no commit of another process is writing past the end meanwhile (one that
 * starts later grows the file on its first fault). An env that is not a written map (a file left at the
 * map's size, opened on a disk) cuts to the pages in use: LMDB's writes extend it as they need. */
int kv_grow_cut_back(kv_env *e, uint64_t pre)
{
	MDB_envinfo info;
	struct stat sb;
	MDB_txn *w;
	int rc;

	if ((rc = LM(mdb_txn_begin(e->env, NULL, 0, &w))))
		return rc == -EACCES ? -EROFS : rc;
	if (!(rc = LM(mdb_env_info(e->env, &info)))) {
		uint64_t used = (uint64_t)(info.me_last_pgno + 1) * e->psize;
		uint64_t to = e->wmap ? (used + KV_GROW_MIN - 1) / KV_GROW_MIN * KV_GROW_MIN : used;
		if (pre > to && pre < e->mapsize)
			to = pre;
		if (fstat(e->dfd, &sb) || ((uint64_t)sb.st_size > to && ftruncate(e->dfd, (off_t)to)))
			rc = -errno;
	}
	mdb_txn_abort(w);
	return rc;
}
