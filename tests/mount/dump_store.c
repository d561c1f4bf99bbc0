/* dump_store.c — every table, family and visible cell of a store, through the store API only, in a form
 * a script can parse whatever the bytes: `dump_store STORE OUTDIR` writes OUTDIR/dump.txt, one record a
 * line, byte strings in hex ("-" for empty), and OUTDIR/values.bin, the values back to back.
 *
 *   table TABLE DELIM_HEX CREATED_US
 *   family TABLE FAMILY GC_HEX          (GC: the canonical policy, as cs_table_info_get gives it)
 *   cell TABLE ROW_HEX FAMILY QUAL_HEX TS LEN OFFSET     (value: LEN bytes at OFFSET in values.bin)
 *
 * mountcheck.py builds the expected tree from this, independently of fs/.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cellstore.h"

static void hex(FILE *f, const void *p, size_t n)
{
	const unsigned char *b = p;
	if (!n)
		fputc('-', f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", b[i]);
}

static int dump_table(cs_txn *txn, const char *name, FILE *out, FILE *vals, uint64_t *off)
{
	cs_table_info *info;
	const cs_row *r;
	cs_scan *s;
	int rc;

	if ((rc = cs_table_info_get(txn, name, &info)))
		return rc;
	fprintf(out, "table %s %02x %lld\n", name, (unsigned char)info->delim, (long long)info->created);
	for (size_t i = 0; i < info->nfamilies; i++) {
		fprintf(out, "family %s %s ", name, info->families[i].name);
		hex(out, info->families[i].gc, strlen(info->families[i].gc));
		fputc('\n', out);
	}
	cs_table_info_free(info);
	if ((rc = cs_scan_open(txn, name, NULL, &s)))
		return rc;
	while ((rc = cs_scan_next(s, &r)) == 1)
		for (size_t i = 0; i < r->ncells; i++) {
			const cs_cell *c = &r->cells[i];
			fprintf(out, "cell %s ", name);
			hex(out, r->key.data, r->key.len);
			fprintf(out, " %s ", c->family);
			hex(out, c->qualifier.data, c->qualifier.len);
			fprintf(out, " %lld %zu %llu\n", (long long)c->ts, c->value.len, (unsigned long long)*off);
			if (fwrite(c->value.data, 1, c->value.len, vals) != c->value.len) {
				rc = -EIO;
				break;
			}
			*off += c->value.len;
		}
	cs_scan_close(s);
	return rc < 0 ? rc : 0;
}

int main(int argc, char **argv)
{
	cs_open_opts o = { .flags = CS_OPEN_RDONLY };
	char path[4096];
	uint64_t off = 0;
	cs_store *st;
	cs_txn *txn;
	char **names;
	size_t n;
	FILE *out, *vals;
	int rc;

	cs_store_catch_faults(); /* a damaged store: an error, not a crash (corrupt.sh) */
	if (argc != 3) {
		fprintf(stderr, "usage: dump_store STORE OUTDIR\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/dump.txt", argv[2]);
	if (!(out = fopen(path, "w")))
		goto io;
	snprintf(path, sizeof(path), "%s/values.bin", argv[2]);
	if (!(vals = fopen(path, "w")))
		goto io;
	if ((rc = cs_store_open(argv[1], &o, &st)) || (rc = cs_txn_begin(st, CS_TXN_RDONLY, &txn)) ||
	    (rc = cs_table_list(txn, &names, &n))) {
		fprintf(stderr, "dump_store: %s: %s\n", argv[1], strerror(-rc));
		return 1;
	}
	for (size_t i = 0; i < n && !rc; i++)
		rc = dump_table(txn, names[i], out, vals, &off);
	cs_strv_free(names, n);
	cs_txn_abort(txn);
	cs_store_close(st);
	if (rc) {
		fprintf(stderr, "dump_store: %s: %s\n", argv[1], strerror(-rc));
		return 1;
	}
	if (fclose(out) || fclose(vals))
		goto io;
	return 0;
io:
	fprintf(stderr, "dump_store: %s: %s\n", path, strerror(errno));
	return 1;
}
