/* heatspool.c — the Key Visualizer's spool: counts a handle could not, or need not, commit, appended to
 * a file beside the store (heatspool.h). A reader never takes LMDB's writer lock for them, so a reading
 * command exits without waiting for a writer, and a mount's counts of its reads cost no commit (which
 * every other mount would see as a change of the store, dropping its caches).
 *
 * The file: blobs appended whole by one write() each: "HSP1", u32 payload length, u64 XXH64 of the
 * payload (big-endian), then the payload: items, each u8 table length, the table, u64 minute, varint
 * length and the histogram as heat_hist_encode() writes it. Appenders hold flock(LOCK_SH) across their
 * write(); a taker holds LOCK_EX while it reads the file and truncates it. A blob that is short or does
 * not check (a writer killed mid-write) ends what is read: the rest is dropped with it at the next take. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heatspool.h"
#include "codec.h"
#include "hash.h"
#include "keys.h"
#include "mem.h"

#define MAGIC "HSP1"
#define HEAD 16 /* magic, length, checksum */
#define ITEM_MAX (1 + CS_MAX_TABLE + 8 + 10 + HEAT_REC_MAX)

static int spool_path(const char *dir, char **out)
{
	return mem_asprintf(out, "%s/%s", dir, HSPOOL_NAME) < 0 ? -ENOMEM : 0;
}

/* A new spool's permissions: data.mdb's (it holds the first bytes of row keys), else 0600. */
static mode_t spool_mode(const char *dir)
{
	struct stat sb;
	char *data;
	mode_t m = 0600;

	if (mem_asprintf(&data, "%s/data.mdb", dir) < 0)
		return m;
	if (!stat(data, &sb))
		m = sb.st_mode & 0666;
	free(data);
	return m;
}

int hspool_size(const char *dir, uint64_t *size)
{
	struct stat sb;
	char *path;
	int rc;

	if ((rc = spool_path(dir, &path)))
		return rc;
	rc = stat(path, &sb) ? -errno : 0;
	free(path);
	*size = rc ? 0 : (uint64_t)sb.st_size;
	return rc == -ENOENT ? 0 : rc;
}

/* The blob of ITEMS into a buffer of the caller's (freed by it), *N its length. Errors: -ENOMEM. */
static int encode_blob(const struct heat_item *items, uint8_t **out, size_t *n)
{
	size_t cap = HEAD, len = HEAD;
	uint8_t *b;

	for (const struct heat_item *it = items; it; it = it->next)
		cap += ITEM_MAX;
	if (!(b = mem_malloc(cap)))
		return -ENOMEM;
	for (const struct heat_item *it = items; it; it = it->next) {
		size_t tn = strlen(it->table);
		uint8_t rec[HEAT_REC_MAX];
		size_t rn = heat_hist_encode(rec, &it->h);
		b[len++] = (uint8_t)tn;
		memcpy(b + len, it->table, tn);
		len += tn;
		key_put_u64(b + len, (uint64_t)it->minute);
		len += 8;
		len += codec_put_varint(b + len, rn);
		memcpy(b + len, rec, rn);
		len += rn;
	}
	memcpy(b, MAGIC, 4);
	b[4] = (uint8_t)((len - HEAD) >> 24);
	b[5] = (uint8_t)((len - HEAD) >> 16);
	b[6] = (uint8_t)((len - HEAD) >> 8);
	b[7] = (uint8_t)(len - HEAD);
	key_put_u64(b + 8, hash_xxh64(b + HEAD, len - HEAD, 0));
	*out = b;
	*n = len;
	return 0;
}

int hspool_append(const char *dir, const struct heat_item *items)
{
	uint8_t *blob;
	size_t n;
	struct stat sb;
	char *path;
	ssize_t w;
	int fd, rc;

	if (!items)
		return 0;
	if ((rc = spool_path(dir, &path)))
		return rc;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, spool_mode(dir));
	free(path);
	if (fd < 0)
		return -errno;
	if ((rc = encode_blob(items, &blob, &n)))
		goto out;
	while (flock(fd, LOCK_SH) && errno == EINTR)
		;
	if (fstat(fd, &sb))
		rc = -errno;
	else if ((uint64_t)sb.st_size + n > HSPOOL_MAX)
		rc = -EFBIG;
	else if ((w = write(fd, blob, n)) != (ssize_t)n)
		rc = w < 0 ? -errno : -ENOSPC; /* (a short blob: readers stop at it) */
	free(blob);
out:
	close(fd); /* (and the lock with it) */
	return rc;
}

/* The items of payload P (N bytes) onto *LIST, those of TABLE only when it is not NULL. Returns 0, or
 * -EIO (malformed: what was added stays) or -ENOMEM. */
static int decode_payload(const uint8_t *p, size_t n, const char *table, struct heat_item **list)
{
	const uint8_t *end = p + n;

	while (p < end) {
		struct heat_item *it;
		uint64_t rn;
		size_t tn = *p++;
		int a;

		if (!tn || tn > CS_MAX_TABLE || (size_t)(end - p) < tn + 8)
			return -EIO;
		if ((a = codec_get_varint(p + tn + 8, (size_t)(end - p) - tn - 8, &rn)) < 0 ||
		    rn > (uint64_t)(end - p) - tn - 8 - (size_t)a)
			return -EIO;
		if (!table || (strlen(table) == tn && !memcmp(table, p, tn))) {
			if (!(it = mem_calloc(1, sizeof(*it))))
				return -ENOMEM;
			memcpy(it->table, p, tn);
			it->minute = (int64_t)key_get_u64(p + tn);
			if (heat_hist_decode(p + tn + 8 + a, rn, &it->h)) {
				free(it);
				return -EIO;
			}
			it->next = *list;
			*list = it;
		}
		p += tn + 8 + (size_t)a + rn;
	}
	return 0;
}

/* Read the whole of FD and decode its blobs, up to the first that does not check. */
static int read_items(int fd, const char *table, struct heat_item **list)
{
	struct stat sb;
	uint8_t *buf;
	size_t len = 0, off = 0;
	int rc = 0;

	*list = NULL;
	if (fstat(fd, &sb))
		return -errno;
	if (!sb.st_size)
		return 0;
	if ((uint64_t)sb.st_size > HSPOOL_MAX + HEAD)
		sb.st_size = HSPOOL_MAX + HEAD; /* (no appender writes past the cap: the rest is damage) */
	if (!(buf = mem_malloc((size_t)sb.st_size)))
		return -ENOMEM;
	while (len < (size_t)sb.st_size) {
		ssize_t r = pread(fd, buf + len, (size_t)sb.st_size - len, (off_t)len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	while (!rc && len - off >= HEAD && !memcmp(buf + off, MAGIC, 4)) {
		size_t pn = (size_t)buf[off + 4] << 24 | (size_t)buf[off + 5] << 16 | (size_t)buf[off + 6] << 8 |
			    buf[off + 7];
		if (pn > len - off - HEAD || hash_xxh64(buf + off + HEAD, pn, 0) != key_get_u64(buf + off + 8))
			break;
		rc = decode_payload(buf + off + HEAD, pn, table, list);
		if (rc == -EIO) /* (checked, yet malformed: another version's, or a bug; skip it) */
			rc = 0;
		off += HEAD + pn;
	}
	free(buf);
	return rc;
}

/* Open the spool for reading and writing under lock OP; -ENOENT when there is none. */
static int open_locked(const char *dir, int op, int *fd)
{
	char *path;
	int rc;

	if ((rc = spool_path(dir, &path)))
		return rc;
	*fd = open(path, O_RDWR | O_CLOEXEC);
	free(path);
	if (*fd < 0)
		return -errno;
	while ((rc = flock(*fd, op) ? -errno : 0) == -EINTR)
		;
	if (rc)
		close(*fd);
	return rc;
}

int hspool_take(const char *dir, struct heat_item **out)
{
	int fd, rc;

	*out = NULL;
	rc = open_locked(dir, LOCK_EX | LOCK_NB, &fd);
	if (rc == -ENOENT || rc == -EWOULDBLOCK) /* (none, or in use: the next take gets it) */
		return 0;
	if (rc)
		return rc;
	if (!(rc = read_items(fd, NULL, out)) && ftruncate(fd, 0))
		rc = -errno;
	if (rc) {
		hspool_free(*out);
		*out = NULL;
	}
	close(fd);
	return rc;
}

int hspool_peek(const char *dir, const char *table, struct heat_item **out)
{
	int fd, rc;

	*out = NULL;
	rc = open_locked(dir, LOCK_SH, &fd);
	if (rc == -ENOENT)
		return 0;
	if (rc)
		return rc;
	if ((rc = read_items(fd, table, out))) {
		hspool_free(*out);
		*out = NULL;
	}
	close(fd);
	return rc;
}

void hspool_free(struct heat_item *items)
{
	while (items) {
		struct heat_item *n = items->next;
		free(items);
		items = n;
	}
}
