/* gzin.c — a gzip file's contents through zlib's inflate, member after member, each checked (header,
 * CRC-32 and length, which inflate checks with windowBits 16 + 15). Only this file includes zlib.h.
 */
#include "gzin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define IN_SIZE (128 * 1024)

struct gzin {
	int fd;
	z_stream z;
	bool z_ready;       /* inflateInit2 succeeded: inflateEnd to do */
	unsigned char *in;
	bool eof;           /* read() gave 0 */
	bool member_ended;  /* inflate gave Z_STREAM_END: another member or the end may follow */
	bool done;
	int err;            /* the sticky error, or 0 */
	const char *what;   /* its words */
	char msg[160];
	uint64_t offset;
};

bool gzin_magic(const void *p, size_t n)
{
	const unsigned char *b = p;

	return n >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

int gzin_new(int fd, gzin **out)
{
	gzin *g = calloc(1, sizeof(*g));

	if (!g || !(g->in = malloc(IN_SIZE)))
		goto nomem;
	g->fd = fd;
	if (inflateInit2(&g->z, 16 + MAX_WBITS) != Z_OK) /* 16: a gzip wrapper, and only that */
		goto nomem;
	g->z_ready = true;
	*out = g;
	return 0;
nomem:
	if (g)
		free(g->in);
	free(g);
	return -ENOMEM;
}

void gzin_free(gzin *g)
{
	if (!g)
		return;
	if (g->z_ready)
		inflateEnd(&g->z);
	free(g->in);
	free(g);
}

const char *gzin_error(const gzin *g)
{
	return g->err ? g->what : NULL;
}

uint64_t gzin_offset(const gzin *g)
{
	return g->offset;
}

static ssize_t fail(gzin *g, int err, const char *what)
{
	g->err = err;
	g->what = what;
	return err;
}

/* zlib's words for a damaged stream; they live in the stream, so keep a copy. */
static ssize_t damaged(gzin *g)
{
	snprintf(g->msg, sizeof g->msg, "the gzip stream is damaged (%s)", g->z.msg ? g->z.msg : "bad data");
	return fail(g, -EBADMSG, g->msg);
}

static int fill(gzin *g)
{
	ssize_t n;

	do
		n = read(g->fd, g->in, IN_SIZE);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		g->eof = true;
	g->z.next_in = g->in;
	g->z.avail_in = (uInt)n;
	g->offset += (uint64_t)n;
	return 0;
}

ssize_t gzin_read(gzin *g, void *buf, size_t n)
{
	int rc;

	if (g->err)
		return g->err;
	if (g->done || !n)
		return 0;
	if (n > UINT32_MAX)
		n = UINT32_MAX;
	g->z.next_out = buf;
	g->z.avail_out = (uInt)n;
	/* An error after some output is kept (sticky) and returned by the next call, so that every byte
	 * before the damage is read, and a reader can say where it stopped. */
	while (g->z.avail_out == n && !g->err) {
		if (!g->z.avail_in && !g->eof && (rc = fill(g)) < 0) {
			fail(g, rc, strerror(-rc));
			break;
		}
		if (g->member_ended) {
			if (!g->z.avail_in && g->eof) {
				g->done = true;
				break;
			}
			if (!g->z.avail_in)
				continue;
			if (g->z.next_in[0] != 0x1f) { /* another member starts with its magic, or nothing is there */
				fail(g, -EBADMSG, "other bytes follow the end of the gzip stream");
				break;
			}
			if (inflateReset(&g->z) != Z_OK) {
				damaged(g);
				break;
			}
			g->member_ended = false;
		}
		if (!g->z.avail_in && g->eof) {
			fail(g, -EBADMSG, "the gzip stream ends early (truncated)");
			break;
		}
		switch (inflate(&g->z, Z_NO_FLUSH)) {
		case Z_OK:
			break;
		case Z_STREAM_END:
			g->member_ended = true;
			break;
		case Z_BUF_ERROR: /* no progress: it needs more input */
			if (g->z.avail_in)
				damaged(g);
			break;
		case Z_MEM_ERROR:
			fail(g, -ENOMEM, strerror(ENOMEM));
			break;
		default: /* Z_DATA_ERROR, Z_NEED_DICT, Z_STREAM_ERROR */
			damaged(g);
			break;
		}
	}
	if (g->z.avail_out < n)
		return (ssize_t)(n - g->z.avail_out);
	return g->err;
}

ssize_t gzin_read_fn(void *ctx, void *buf, size_t n)
{
	return gzin_read(ctx, buf, n);
}
