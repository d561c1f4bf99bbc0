/* dump.c — cs_dump(): a self-describing, checksummed, deterministic copy of tables (format in
 * dumpfmt.h and store/dump-format.md). Cells are read through the public scan, so a dump holds exactly what a
 * read of all versions returns; values are dumped uncompressed and each block of cells is compressed
 * whole, so the bytes depend on the cells only, never on how the store happened to keep them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cellstore.h"
#include "codec.h"
#include "dumpfmt.h"
#include "hash.h"
#include "mem.h"

struct dw {
	cs_write_fn *write;
	void *ctx;
	uint64_t chain;     /* the last frame's hash */
	uint8_t *b;         /* the frame being built: DF_FRAME_HDR bytes, then the raw payload */
	size_t n, cap;
	void *z;            /* the compressed frame */
	size_t zcap;
	cs_dump_stats *st;
};

static int out(struct dw *w, const void *p, size_t n)
{
	w->st->bytes += n;
	return w->write(w->ctx, p, n);
}

static int room(struct dw *w, size_t more)
{
	size_t need = w->n + more, cap = w->cap ? w->cap : DF_BLOCK + 4096;
	uint8_t *nb;
	if (need <= w->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	if (!(nb = mem_realloc(w->b, cap)))
		return -ENOMEM;
	w->b = nb;
	w->cap = cap;
	return 0;
}

static int put_varint(struct dw *w, uint64_t v)
{
	int rc = room(w, 10);
	if (!rc)
		w->n += codec_put_varint(w->b + w->n, v);
	return rc;
}

static int put_bytes(struct dw *w, const void *p, size_t n)
{
	int rc = put_varint(w, n);
	if (!rc && !(rc = room(w, n)) && n) {
		memcpy(w->b + w->n, p, n);
		w->n += n;
	}
	return rc;
}

static int put_str(struct dw *w, const char *s)
{
	return put_bytes(w, s, strlen(s));
}

static void frame_begin(struct dw *w)
{
	w->n = DF_FRAME_HDR;
}

/* Finish the frame of KIND built in w->b: compress it if that pays, checksum it, write it. */
static int frame_end(struct dw *w, int kind)
{
	size_t raw = w->n - DF_FRAME_HDR;
	uint8_t *f = w->b, sum[DF_FRAME_SUM];
	size_t fn = w->n;
	long zn = 0;
	int rc;

	if (raw > UINT32_MAX)
		return -EFBIG;
	if (kind == DF_CELLS && raw >= 64 && (zn = codec_zpack(w->b + DF_FRAME_HDR, raw, &w->z, &w->zcap,
							     DF_FRAME_HDR)) < 0)
		return (int)zn;
	if (zn > 0) {
		f = w->z;
		fn = DF_FRAME_HDR + (size_t)zn;
	}
	f[0] = (uint8_t)kind;
	f[1] = zn > 0 ? DF_ZSTD : DF_RAW;
	f[2] = f[3] = 0;
	df_put32(f + 4, (uint32_t)(fn - DF_FRAME_HDR));
	df_put32(f + 8, (uint32_t)raw);
	w->chain = hash_xxh64(f, fn, w->chain);
	df_put64(sum, w->chain);
	if ((rc = out(w, f, fn)))
		return rc;
	return out(w, sum, sizeof(sum));
}

static int schema_frame(struct dw *w, const cs_table_info *ti)
{
	char created[24];
	int rc;

	snprintf(created, sizeof(created), "%lld", (long long)ti->created);
	frame_begin(w);
	if ((rc = put_str(w, ti->name)) || (rc = put_varint(w, ti->keyviz_off ? 3 : 2)) ||
	    (rc = put_str(w, "created")) || (rc = put_str(w, created)) || (rc = put_str(w, "delim")) ||
	    (rc = put_bytes(w, &ti->delim, 1)))
		return rc;
	/* ("keyviz" only when off: a dump of tables with the default is what it was before the switch) */
	if (ti->keyviz_off && ((rc = put_str(w, "keyviz")) || (rc = put_str(w, "off"))))
		return rc;
	if ((rc = put_varint(w, ti->nfamilies)))
		return rc;
	for (size_t i = 0; i < ti->nfamilies; i++) {
		/* Family attributes, key=value: "gc", and "type" for an aggregate family only (a plain
		 * family's is implied). */
		const cs_family_info *f = &ti->families[i];
		bool typed = f->type != CS_TYPE_BYTES;
		if ((rc = put_str(w, f->name)) || (rc = put_varint(w, typed ? 2 : 1)) || (rc = put_str(w, "gc")) ||
		    (rc = put_str(w, f->gc)))
			return rc;
		if (typed && ((rc = put_str(w, "type")) || (rc = put_str(w, cs_value_type_name(f->type)))))
			return rc;
	}
	return frame_end(w, DF_SCHEMA);
}

static size_t family_index(const cs_table_info *ti, const char *name)
{
	size_t lo = 0, hi = ti->nfamilies;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(ti->families[mid].name, name);
		if (!c)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SIZE_MAX;
}

static int dump_table(struct dw *w, cs_txn *txn, const cs_table_info *ti)
{
	const cs_row *r;
	cs_scan *s;
	int rc;

	if ((rc = schema_frame(w, ti)))
		return rc;
	if ((rc = cs_scan_open(txn, ti->name, NULL, &s)))
		return rc;
	frame_begin(w);
	while ((rc = cs_scan_next(s, &r)) == 1) {
		bool row_written = false;
		rc = 0;
		w->st->rows++;
		for (size_t i = 0; i < r->ncells && !rc; i++) {
			const cs_cell *c = &r->cells[i];
			size_t fi = family_index(ti, c->family);
			if (fi == SIZE_MAX) {
				rc = -EIO;
				break;
			}
			if (w->n - DF_FRAME_HDR >= DF_BLOCK) {
				if ((rc = frame_end(w, DF_CELLS)))
					break;
				frame_begin(w);
				row_written = false; /* every frame names its first cell's row */
			}
			if (row_written)
				rc = put_varint(w, 0);
			else
				rc = put_bytes(w, r->key.data, r->key.len);
			row_written = true;
			if (rc || (rc = put_varint(w, fi)) || (rc = put_bytes(w, c->qualifier.data, c->qualifier.len)) ||
			    (rc = put_varint(w, (uint64_t)c->ts)) || (rc = put_bytes(w, c->value.data, c->value.len)))
				break;
			w->st->cells++;
			w->st->value_bytes += c->value.len;
		}
		if (rc)
			break;
	}
	cs_scan_close(s);
	if (rc < 0)
		return rc;
	if (w->n > DF_FRAME_HDR)
		return frame_end(w, DF_CELLS);
	return 0;
}

int cs_dump(cs_txn *txn, const char *const *names, size_t n, cs_write_fn *write, void *ctx,
	    cs_dump_stats *stats)
{
	cs_dump_stats local;
	struct dw w = { .write = write, .ctx = ctx };
	cs_table_info **infos = NULL;
	char **all = NULL;
	size_t nall = 0;
	uint8_t hdr[DF_HDR];
	int rc;

	w.st = stats ? stats : &local;
	memset(w.st, 0, sizeof(*w.st));
	if (!n) {
		if ((rc = cs_table_list(txn, &all, &nall)))
			return rc;
		names = (const char *const *)all;
		n = nall;
	}
	if (n && !(infos = mem_calloc(n, sizeof(*infos)))) {
		rc = -ENOMEM;
		goto out;
	}
	/* Every name first: nothing is written for a dump that cannot be whole. */
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < i; j++)
			if (!strcmp(names[i], names[j])) {
				rc = -EINVAL;
				goto out;
			}
		if ((rc = cs_table_info_get(txn, names[i], &infos[i])))
			goto out;
	}
	memcpy(hdr, DF_MAGIC, 8);
	df_put32(hdr + 8, DF_VERSION);
	df_put32(hdr + 12, 0);
	w.chain = hash_xxh64(hdr, DF_HDR, 0);
	if ((rc = out(&w, hdr, DF_HDR)))
		goto out;
	for (size_t i = 0; i < n; i++) {
		if ((rc = dump_table(&w, txn, infos[i])))
			goto out;
		w.st->tables++;
	}
	frame_begin(&w);
	if ((rc = put_varint(&w, w.st->tables)) || (rc = put_varint(&w, w.st->rows)) ||
	    (rc = put_varint(&w, w.st->cells)) || (rc = put_varint(&w, w.st->value_bytes)))
		goto out;
	rc = frame_end(&w, DF_END);
out:
	for (size_t i = 0; i < n && infos; i++)
		cs_table_info_free(infos[i]);
	free(infos);
	cs_strv_free(all, nall);
	free(w.b);
	free(w.z);
	return rc;
}
