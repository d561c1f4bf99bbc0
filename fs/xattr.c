/* xattr.c — the extended attributes the tree shows (see xattr.h). */
#include "xattr.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ident.h"
#include "view.h"

/* A copy of the N bytes at P into *OUT (caller frees) and *OUTN. Errors: -ENOMEM. */
static int bytes_dup(const void *p, size_t n, char **out, size_t *outn)
{
	if (!(*out = node_dup_bytes(p, n)))
		return -ENOMEM;
	*outn = n;
	return 0;
}

int xattr_list(cs_txn *txn, const struct node_id *id, char **buf, size_t *len)
{
	cs_table_info *info;
	size_t n = 0, cap;
	char *b;
	int rc;

	*buf = NULL;
	*len = 0;
	if (id->kind != NODE_DIR || view_below_table(id)) {
		/* an entry whose name is a short form carries its whole name, for tools to restore it */
		if ((rc = ident_part_is_short(txn, id)) <= 0)
			return rc;
		return bytes_dup(XATTR_NAME, sizeof(XATTR_NAME), buf, len);
	}
	if ((rc = cs_table_info_get(txn, id->table, &info)))
		return rc;
	cap = sizeof(XATTR_DELIM);
	for (size_t i = 0; i < info->nfamilies; i++)
		cap += sizeof(XATTR_FAMILY) + strlen(info->families[i].name);
	if (!(b = malloc(cap))) {
		cs_table_info_free(info);
		return -ENOMEM;
	}
	n += (size_t)sprintf(b, "%s", XATTR_DELIM) + 1;
	for (size_t i = 0; i < info->nfamilies; i++)
		n += (size_t)sprintf(b + n, "%s%s", XATTR_FAMILY, info->families[i].name) + 1;
	cs_table_info_free(info);
	*buf = b;
	*len = n;
	return 0;
}

int xattr_get(cs_txn *txn, const struct node_id *id, const char *name, char **val, size_t *len)
{
	cs_table_info *info;
	const uint8_t *b;
	size_t bn;
	int rc = -ENODATA;

	if (id->kind != NODE_DIR || view_below_table(id)) {
		if (strcmp(name, XATTR_NAME) || (rc = ident_part_is_short(txn, id)) == 0)
			return -ENODATA;
		if (rc < 0 || (rc = ident_part(txn, id, &b, &bn)))
			return rc;
		return bytes_dup(b, bn, val, len);
	}
	if ((rc = cs_table_info_get(txn, id->table, &info)))
		return rc;
	rc = -ENODATA;
	if (!strcmp(name, XATTR_DELIM)) {
		rc = bytes_dup(&info->delim, 1, val, len);
	} else if (!strncmp(name, XATTR_FAMILY, sizeof(XATTR_FAMILY) - 1)) {
		for (size_t i = 0; i < info->nfamilies; i++)
			if (!strcmp(info->families[i].name, name + sizeof(XATTR_FAMILY) - 1)) {
				/* the GC policy, then ":TYPE" for an aggregate family (cbt's families= syntax) */
				const char *type = cs_value_type_name(info->families[i].type);
				*val = NULL;
				if (asprintf(val, "%s%s%s", info->families[i].gc, *type ? ":" : "", type) < 0)
					*val = NULL;
				*len = *val ? strlen(*val) : 0;
				rc = *val ? 0 : -ENOMEM;
				break;
			}
	}
	cs_table_info_free(info);
	return rc;
}

