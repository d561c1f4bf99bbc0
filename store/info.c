/* info.c — the pure calls of the public API about names and schemas: checking table and family names
 * and GC policies, and freeing what schema calls return. They touch no store, so every backend
 * (store/bigtable/ too) shares them. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cellstore.h"
#include "gcpolicy.h"

static int check_name(const char *s, size_t max)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > max)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
			  (i > 0 && (c == '-' || c == '.'));
		if (!ok)
			return -EINVAL;
	}
	return 0;
}

int cs_check_table_name(const char *name)
{
	return check_name(name, CS_MAX_TABLE);
}

int cs_check_family_name(const char *name)
{
	return check_name(name, CS_MAX_FAMILY);
}

int cs_check_gc_policy(const char *text, char **canon)
{
	gcp *p;
	int rc = gcp_parse(text, &p, NULL);
	if (rc)
		return rc;
	if (canon && !(*canon = gcp_format(p)))
		rc = -ENOMEM;
	gcp_free(p);
	return rc;
}

char *cs_gc_policy_error(const char *text)
{
	gcp *p = NULL;
	char *err = NULL;
	if (!gcp_parse(text, &p, &err)) {
		gcp_free(p);
		return NULL;
	}
	return err;
}

void cs_table_info_free(cs_table_info *info)
{
	if (!info)
		return;
	for (size_t i = 0; i < info->nfamilies; i++) {
		free(info->families[i].name);
		free(info->families[i].gc);
		free(info->families[i].gc_cbt);
	}
	free(info->families);
	free(info->name);
	free(info);
}

void cs_strv_free(char **v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}
