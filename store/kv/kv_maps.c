/* kv_maps.c — where LMDB mapped the data file. LMDB does not say (MDB_envinfo's me_mapaddr is set only
 * for MDB_FIXEDMAP), and the guard (kv_guard.c) and the file's growth (kv_grow.c) need it: the mapping
 * of DIR/data.mdb that LMDB's open added to /proc/self/maps (other envs of this process may map the
 * file too). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "kv_internal.h"
#include "mem.h"

/* DIR/data.mdb's device and inode. Returns 0 or -errno. */
static int data_id(const char *dir, dev_t *dev, ino_t *ino)
{
	struct stat sb;
	char *data;
	int rc;
	if (mem_asprintf(&data, "%s/data.mdb", dir) < 0)
		return -ENOMEM;
	rc = stat(data, &sb) ? -errno : 0;
	free(data);
	if (rc)
		return rc;
	*dev = sb.st_dev;
	*ino = sb.st_ino;
	return 0;
}

/* The mappings of the file (device DEV, inode INO) at offset 0 in this process: their start addresses,
 * up to MAX; returns how many. Linux's /proc/self/maps; 0 where it cannot be read. */
static size_t file_maps(dev_t dev, ino_t ino, uintptr_t *out, size_t max)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	size_t n = 0;
	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		unsigned long start, end, off, maj, min, i;
		if (sscanf(line, "%lx-%lx %*s %lx %lx:%lx %lu", &start, &end, &off, &maj, &min, &i) == 6 && !off &&
		    i == ino && makedev(maj, min) == dev)
			out[n++] = start;
	}
	fclose(f);
	return n;
}

size_t kv_maps_list(const char *dir, uintptr_t *out, size_t max)
{
	dev_t dev = 0;
	ino_t ino = 0;
	return data_id(dir, &dev, &ino) ? 0 : file_maps(dev, ino, out, max);
}

uintptr_t kv_maps_new(const char *dir, const uintptr_t *before, size_t nbefore)
{
	uintptr_t after[KV_MAPS_MAX], found = 0;
	size_t nafter = kv_maps_list(dir, after, KV_MAPS_MAX), nnew = 0;

	for (size_t i = 0; i < nafter; i++) {
		size_t j = 0;
		while (j < nbefore && before[j] != after[i])
			j++;
		if (j == nbefore) {
			found = after[i];
			nnew++;
		}
	}
	return nnew == 1 ? found : 0;
}
