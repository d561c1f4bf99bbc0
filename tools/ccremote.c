/* ccremote.c — cbt's global flags and ~/.cbtrc (ccremote.h): how cellctl reaches a Bigtable instance. */
#include "ccremote.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The settings given so far; .cbtrc's are added by cc_remote_store(). */
static cs_remote remote;
static bool use_cbtrc, cbtrc_read, registered;
static char *store_name; /* bigtable://P/I made of -project and -instance */

static void remote_free(void)
{
	cs_remote_clear(&remote);
	free(store_name);
}

/* The flag of cbt's that takes a value NAME (N bytes) names, or NULL: a remote store's settings
 * (cs_remote_key(); -timeout aside, which cellctl.c takes) and -o (stdout). */
static const char *value_flag(const char *name, size_t n)
{
	const char *k;

	for (size_t i = 0; (k = cs_remote_key(i)); i++)
		if (strcmp(k, "timeout") && strlen(k) == n && !strncmp(name, k, n))
			return k;
	return n == 1 && *name == 'o' ? "o" : NULL;
}

int cc_remote_flag(int argc, char **argv, int *i)
{
	const char *a = argv[*i], *name = a + 1, *eq, *val, *why, *flag;
	size_t n;
	int rc;

	if (*name == '-')
		name++;
	if (!strcmp(name, "cbtrc")) {
		use_cbtrc = true;
		return 1;
	}
	n = (eq = strchr(name, '=')) ? (size_t)(eq - name) : strlen(name);
	if (!(flag = value_flag(name, n)))
		return 0;
	if (!(val = eq ? eq + 1 : (*i + 1 < argc ? argv[++*i] : NULL)))
		return -cc_error("option -%s needs a value", flag);
	if (!strcmp(flag, "o")) {
		if (!freopen(val, "w", stdout))
			return -cc_error("option -o %s: %s", cc_qs(val), strerror(errno));
		return 1;
	}
	if (!registered)
		registered = !atexit(remote_free);
	rc = cs_remote_set(&remote, flag, val, &why);
	if (rc == -ENOMEM)
		return -cc_error("%s", strerror(ENOMEM));
	if (rc)
		return -cc_error("option -%s=%s: %s", flag, cc_qs(val), why);
	return 1;
}

/* Adds ~/.cbtrc's settings to what the flags gave; MUST: its absence is an error. */
static int read_cbtrc(bool must)
{
	char why[512];
	int rc;

	if (cbtrc_read)
		return CC_OK;
	cbtrc_read = true;
	rc = cs_remote_cbtrc(&remote, NULL, why, sizeof(why));
	if (rc == -ENOENT && !must)
		return CC_OK;
	if (rc == -ENOMEM)
		return cc_error("%s", strerror(ENOMEM));
	if (rc)
		return cc_error("--cbtrc: %s", why);
	return CC_OK;
}

/* .cbtrc's timeout into *DEADLINE_MS, unless -timeout gave one. */
static int cbtrc_timeout(unsigned *deadline_ms)
{
	const char *why;
	if (!*deadline_ms && remote.timeout && cs_duration_parse(remote.timeout, deadline_ms, &why))
		return cc_error("~/.cbtrc's timeout %s: %s", cc_qs(remote.timeout), why);
	return CC_OK;
}

int cc_remote_store(const char **db, unsigned *deadline_ms)
{
	bool named = remote.project || remote.instance || use_cbtrc;
	int n;

	if (!named && (!*db || cs_store_name_kind(*db) != 1))
		return CC_OK; /* (a local store: no .cbtrc, whatever it says) */
	if (!named) /* (a bigtable:// store: connected as cbt would, .cbtrc filling in what flags leave out) */
		return read_cbtrc(false) == CC_OK ? cbtrc_timeout(deadline_ms) : CC_FAIL;
	if (*db)
		return cc_error("--db %s and %s both name a store: give one", cc_qs(*db),
				use_cbtrc ? "--cbtrc" : "-project/-instance");
	if (read_cbtrc(use_cbtrc) != CC_OK)
		return CC_FAIL;
	if (!remote.project || !remote.instance)
		return cc_error("no %s: give -%s, or set it in ~/.cbtrc (\"%s = ...\")",
				remote.project ? "instance" : "project", remote.project ? "instance" : "project",
				remote.project ? "instance" : "project");
	n = snprintf(NULL, 0, "bigtable://%s/%s", remote.project, remote.instance);
	if (!(store_name = malloc((size_t)n + 1)))
		return cc_error("%s", strerror(ENOMEM));
	snprintf(store_name, (size_t)n + 1, "bigtable://%s/%s", remote.project, remote.instance);
	*db = store_name;
	return cbtrc_timeout(deadline_ms);
}

const cs_remote *cc_remote(void)
{
	return &remote;
}
