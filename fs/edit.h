/* edit.h — what writing through the mount does to the store: a handle's value written back as a cell, a
 * cell re-stamped, columns and cells deleted, files and key directories moved, tables made, renamed and
 * dropped, the schema's extended attributes set. Each call is one write transaction of its own, so a
 * failure leaves the store as it was; the daemon's write transactions are all here. Uses only the store's
 * public API; knows nothing of FUSE (like view.c). */
#ifndef CELLFS_EDIT_H
#define CELLFS_EDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cellstore.h"
#include "node.h"

#define EDIT_TS_NEW (-1) /* as a timestamp: a new version, now (see edit_put) */

/* The timestamps of the cells a write removed from its target because the file was replaced (its cells
 * newer than what was written there: edit_put, edit_move), so that the caller can have the kernel forget
 * their names. Zero it before the call; the caller frees TS (free(), after an error too). */
struct edit_gone {
	int64_t *ts;
	size_t n, cap;
};

/* Write LEN bytes at VAL as a cell of file ID (NODE_COLUMN or NODE_VERSION). The timestamp is ID's own
 * for a NODE_VERSION; else TS if >= 0; else (EDIT_TS_NEW) now in whole milliseconds, or the next
 * millisecond after the column's newest cell if that lies in the future. If DROP_TS >= 0 and differs, the
 * cell at DROP_TS is deleted in the same transaction (a version written earlier by the same handle, now
 * moved to another timestamp). The family is created (GC policy "never") if the table lacks it, unless
 * STRICT. *TS_OUT (if not NULL) gets the timestamp written; *GONE (if not NULL) the cells it removed. A bare name's version is the column's newest:
 * written at a TS (a handle given a time: cp -a, rsync, tar), the file reads what was written, so the
 * column's cells newer than TS go in the same transaction (the file was replaced) and one at TS is
 * replaced; but a whole-second TS with another cell of the column within that second is -EINVAL (-EEXIST
 * if at TS itself): the tool that set it carries times more coarsely than the cells have them (GNU tar),
 * refused rather than shown wrong.
 * Errors: -EPERM (STRICT and no such family, or making it would rename key segments: edit_family_clash),
 *         -EFBIG, -ENAMETOOLONG, -ENOENT (no table), -EINVAL,
 *         -EROFS, -ENOSPC, -EIO, -ENOMEM. */
int edit_put(cs_store *st, const struct node_id *id, int64_t ts, const void *val, size_t len, int64_t drop_ts,
	     bool strict, int64_t *ts_out, struct edit_gone *gone);

/* Give column ID's newest cell (NODE_COLUMN) timestamp TS, value unchanged: touch -d on a bare name.
 * A NODE_VERSION is named by its timestamp and is left as it is. Errors: -ENOENT (no such cell), -EEXIST
 * (another cell of the column has timestamp TS: moving onto it would lose it), -EINVAL (another cell is
 * newer than TS: the bare name would show that one), as edit_put(). */
int edit_restamp(cs_store *st, const struct node_id *id, int64_t ts);

/* Delete file ID: every cell of a column (NODE_COLUMN), or the one cell (NODE_VERSION). DEFER: the
 * transaction is CS_TXN_DEFER (an unlink: on Bigtable the delete is queued and sent in a batch, a failure
 * reported by the next call on the table; cellstore.h).
 * Errors: -ENOENT, -EROFS, -ENOSPC, -EIO, -ENOMEM; with DEFER, a failure of earlier queued mutations. */
int edit_delete(cs_store *st, const struct node_id *id, bool defer);

/* Rename file FROM to TO in the same table (mv), in one transaction: every cell of FROM (a column's, or
 * the one of a version) becomes TO's at its own timestamp, replacing TO's cell at that timestamp, and FROM
 * goes. Onto a bare name, TO then reads what FROM read: TO's cells newer than FROM's newest go (the file
 * was replaced), its older ones stay. Onto a version's name, FROM's newest cell alone becomes that cell
 * (the rest of FROM goes with it). A version onto its own column's bare name (mv q@TS q) makes it the
 * newest: the newer cells go. Within one row it is one mutation (atomic on every store); across rows it
 * needs CS_CAP_TXN. TO's family is created if missing unless STRICT. *GONE (if not NULL) gets the
 * timestamps of TO's cells removed.
 * Returns 1 if the store changed, 0 if FROM is a version of TO already (nothing to do).
 * Errors: -ENOENT (no FROM), -EXDEV (across rows on a store without CS_CAP_TXN: mv copies), -EPERM
 * (STRICT), as edit_put(). */
int edit_move(cs_store *st, const struct node_id *from, const struct node_id *to, bool strict, struct edit_gone *gone);

/* Move the key directory FROM (FROMN bytes) of TABLE, with every row below it, to TO (TON bytes): as
 * cs_move_prefix(), which says its errors (-EXDEV: more than MAX_CELLS cells, 0 for no limit). */
int edit_move_keys(cs_store *st, const char *table, const uint8_t *from, size_t fromn, const uint8_t *to, size_t ton,
		   uint64_t max_cells);

/* Rename table FROM to TO, cells and schema kept. A table TO is replaced if REPLACE and it has no cell.
 * Errors: -EEXIST (a table TO, and not REPLACE), -ENOTEMPTY (a table TO with cells, REPLACE), -ENOENT,
 * -EINVAL, as the store. */
int edit_table_rename(cs_store *st, const char *from, const char *to, bool replace);

/* Create table NAME with row-key delimiter DELIM. Errors: -EEXIST, -EINVAL, as the store. */
int edit_table_create(cs_store *st, const char *name, char delim);

/* Delete table NAME if it has no rows (its families go with it). Errors: -ENOTEMPTY, -ENOENT, as the
 * store. */
int edit_table_drop_empty(cs_store *st, const char *name);

/* Create FAMILY in TABLE (GC policy "never") unless it exists. Errors: -EPERM (edit_family_clash),
 * -EINVAL, -ENOENT, as the store. */
int edit_family_ensure(cs_store *st, const char *table, const char *family);

/* Whether a row key of TABLE has a segment (split on the table's delimiter) equal to FAMILY, within TXN:
 * 1, 0, or an error. Making FAMILY would change those segments' names (name.h: a key segment equal to a
 * family's name is escaped), so a family is made implicitly (edit_put, edit_move, edit_family_ensure)
 * only if this is 0, else -EPERM. */
int edit_family_clash(cs_txn *txn, const char *table, const char *family);

/* Whether TABLE has a cell (in FAMILY, if not NULL), within TXN: 1, 0, or an error. */
int edit_any_cell(cs_txn *txn, const char *table, const char *family);

/* Delete FAMILY of TABLE if no cell is in it (removing its extended attribute). Errors: -ENOTEMPTY,
 * -ENOENT, as the store. */
int edit_family_drop_empty(cs_store *st, const char *table, const char *family);

/* Set attribute NAME of TABLE's directory to VALUE (SIZE bytes), FLAGS as setxattr(2)'s: XATTR_DELIM must
 * be the table's delimiter (fixed when the table is made); XATTR_FAMILY F is "POLICY" or "POLICY:TYPE"
 * (an aggregate family): F's GC policy set, or F created with that type (unless making it would escape row
 * key segments: edit_family_clash). Errors: -EPERM (another delimiter; a family whose making would escape
 * key segments, the only -EPERM for a family), -EINVAL (a bad policy or type, or F has another type),
 * -EEXIST (XATTR_CREATE and it is set), -ENODATA (XATTR_REPLACE and no family F), -EOPNOTSUPP (another
 * NAME), -ENOMEM, as the store. */
int edit_xattr_set(cs_store *st, const char *table, const char *name, const void *value, size_t size, int flags);

#endif
