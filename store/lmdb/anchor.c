/* anchor.c — DIR/anchor: two checksummed slots, each the meta pages of a synced snapshot. See anchor.h. */
#include "anchor.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "hash.h"
#include "mem.h"

#define MAGIC "cellanc1"
#define HDR 4096 /* a slot: this header block, then the meta bytes */
#define STRIDE ANCHOR_STRIDE
#define SEED 0x616e63686f72ull

/* A slot's header as stored (little-endian hosts only, like LMDB's own file). */
struct hdr {
	char magic[8];
	uint64_t seq;
	uint64_t txnid;
	uint32_t nmeta;
	uint32_t pad;
	char boot[ANCHOR_BOOT_MAX];
	uint64_t sum; /* XXH64 of the header up to here, then of the meta bytes */
};

static char test_boot[ANCHOR_BOOT_MAX];
static int test_boot_set;

void anchor_test_boot_id(const char *id)
{
	test_boot_set = id != NULL;
	if (id)
		snprintf(test_boot, sizeof(test_boot), "%s", id);
}

const char *anchor_boot_id(void)
{
	static char boot[ANCHOR_BOOT_MAX];
	static int done;
	if (test_boot_set)
		return test_boot;
	if (!done) { /* (racing first calls read the same bytes) */
		FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
		char buf[ANCHOR_BOOT_MAX] = "";
		if (f) {
			if (!fgets(buf, sizeof(buf), f))
				buf[0] = 0;
			fclose(f);
		}
		buf[strcspn(buf, "\n")] = 0;
		memcpy(boot, buf, sizeof(boot));
		done = 1;
	}
	return boot;
}

int anchor_open(const char *dir, int create)
{
	char *path;
	int fd, rc = 0;

	if (mem_asprintf(&path, "%s/anchor", dir) < 0)
		return -ENOMEM;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && create) {
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 && errno == EEXIST) /* another process made it first */
			fd = open(path, O_RDWR | O_CLOEXEC);
		else if (fd >= 0) {
			/* both slots' space now, so that a sync on a full disk finds it; and the new name must
			 * outlast a power loss as the slots will */
			int dfd = -1, e = posix_fallocate(fd, 0, 2 * STRIDE);
			if (!e && ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || fsync(dfd)))
				e = errno;
			if (dfd >= 0)
				close(dfd);
			if (e) {
				unlink(path);
				rc = e == EDQUOT ? -ENOSPC : -e;
			}
		}
	}
	if (fd < 0)
		rc = -errno;
	free(path);
	if (rc && fd >= 0)
		close(fd);
	return rc ? rc : fd;
}

int anchor_lock(int fd)
{
	while (flock(fd, LOCK_EX))
		if (errno != EINTR)
			return -errno;
	return 0;
}

void anchor_unlock(int fd)
{
	flock(fd, LOCK_UN);
}

static uint64_t slot_sum(const struct hdr *h, const uint8_t *meta)
{
	return hash_xxh64(h, offsetof(struct hdr, sum), SEED) ^ hash_xxh64(meta, h->nmeta, SEED + 1);
}

/* Slot I into *REC if whole: 0, -ENOENT (empty, cut short or not ours), -EIO. */
static int read_slot(int fd, int i, anchor_rec *rec)
{
	struct hdr h;
	ssize_t n = pread(fd, &h, sizeof(h), (off_t)i * STRIDE);
	if (n < 0)
		return -EIO;
	if ((size_t)n < sizeof(h) || memcmp(h.magic, MAGIC, 8) || h.nmeta > ANCHOR_META_MAX ||
	    memchr(h.boot, 0, sizeof(h.boot)) == NULL)
		return -ENOENT;
	n = pread(fd, rec->meta, h.nmeta, (off_t)i * STRIDE + HDR);
	if (n < 0)
		return -EIO;
	if ((size_t)n < h.nmeta || slot_sum(&h, rec->meta) != h.sum)
		return -ENOENT;
	rec->seq = h.seq;
	rec->txnid = h.txnid;
	rec->nmeta = h.nmeta;
	memcpy(rec->boot, h.boot, sizeof(rec->boot));
	return 0;
}

/* The newer whole slot's index into *REC, or -ENOENT/-EIO. */
static int newest(int fd, anchor_rec *rec, anchor_rec *tmp)
{
	int r0 = read_slot(fd, 0, rec), r1;
	if (r0 && r0 != -ENOENT)
		return r0;
	r1 = read_slot(fd, 1, tmp);
	if (r1 && r1 != -ENOENT)
		return r1;
	if (!r1 && (r0 || tmp->seq > rec->seq)) {
		memcpy(rec, tmp, offsetof(anchor_rec, meta) + tmp->nmeta);
		return 1;
	}
	return r0 ? -ENOENT : 0;
}

int anchor_read(int fd, anchor_rec *rec)
{
	anchor_rec *tmp = mem_malloc(sizeof(*tmp));
	int rc;
	if (!tmp)
		return -ENOMEM;
	rc = newest(fd, rec, tmp);
	free(tmp);
	return rc < 0 ? rc : 0;
}

int anchor_write(int fd, anchor_rec *rec)
{
	anchor_rec *cur, *tmp;
	struct hdr *h;
	uint8_t *buf;
	int slot, rc;

	if (rec->nmeta > ANCHOR_META_MAX)
		return -EINVAL;
	cur = mem_malloc(2 * sizeof(*cur));
	buf = mem_calloc(1, HDR + rec->nmeta);
	if (!cur || !buf) {
		free(cur);
		free(buf);
		return -ENOMEM;
	}
	tmp = cur + 1;
	slot = newest(fd, cur, tmp);
	if (slot < 0 && slot != -ENOENT) {
		rc = slot;
		goto out;
	}
	rec->seq = slot < 0 ? 1 : cur->seq + 1;
	slot = slot < 0 ? 0 : !slot;
	h = (struct hdr *)buf;
	memcpy(h->magic, MAGIC, 8);
	h->seq = rec->seq;
	h->txnid = rec->txnid;
	h->nmeta = rec->nmeta;
	snprintf(h->boot, sizeof(h->boot), "%s", rec->boot); /* (the bytes after the id stay zero) */
	memcpy(buf + HDR, rec->meta, rec->nmeta);
	h->sum = slot_sum(h, buf + HDR);
	ssize_t n = pwrite(fd, buf, HDR + rec->nmeta, (off_t)slot * STRIDE);
	if (n < 0)
		rc = errno == ENOSPC || errno == EDQUOT ? -ENOSPC : -EIO;
	else if ((size_t)n < HDR + rec->nmeta)
		rc = -ENOSPC;
	else
		rc = fdatasync(fd) ? -EIO : 0;
out:
	free(cur);
	free(buf);
	return rc;
}
