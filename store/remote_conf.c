/* remote_conf.c — a remote store's connection settings (cs_remote, cellstore.h): set one by one from
 * flags or mount options, or filled in from cbt's ~/.cbtrc. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cellstore.h"
#include "mem.h"

static const struct {
	const char *key;
	size_t off;
} keys[] = {
	{ "project", offsetof(cs_remote, project) },
	{ "instance", offsetof(cs_remote, instance) },
	{ "creds", offsetof(cs_remote, creds) },
	{ "access-token", offsetof(cs_remote, access_token) },
	{ "data-endpoint", offsetof(cs_remote, data_endpoint) },
	{ "admin-endpoint", offsetof(cs_remote, admin_endpoint) },
	{ "cert-file", offsetof(cs_remote, cert_file) },
	{ "user-agent", offsetof(cs_remote, user_agent) },
	{ "app-profile", offsetof(cs_remote, app_profile) },
	{ "timeout", offsetof(cs_remote, timeout) },
};

const char *cs_remote_key(size_t i)
{
	return i < sizeof(keys) / sizeof(keys[0]) ? keys[i].key : NULL;
}

/* The member of R KEY names ('_' for '-' allowed), or NULL. */
static char **member(cs_remote *r, const char *key)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *a = keys[i].key, *b = key;
		while (*a && (*a == *b || (*a == '-' && *b == '_'))) {
			a++;
			b++;
		}
		if (!*a && !*b)
			return (char **)((char *)r + keys[i].off);
	}
	return NULL;
}

int cs_remote_set(cs_remote *r, const char *key, const char *value, const char **why)
{
	static const char *scratch;
	char **m = member(r, key);
	unsigned ms;
	char *copy;

	why = why ? why : &scratch;
	if (!m) {
		*why = "not a setting of a remote store (project, instance, creds, access-token, data-endpoint, "
		       "admin-endpoint, cert-file, user-agent, app-profile, timeout)";
		return -EINVAL;
	}
	if (!value || !*value) {
		*why = "an empty value";
		return -EINVAL;
	}
	if (m == &r->timeout && cs_duration_parse(value, &ms, why))
		return -EINVAL;
	if (!(copy = mem_strdup(value)))
		return -ENOMEM;
	free(*m);
	*m = copy;
	return 0;
}

static char *trim(char *s)
{
	char *e = s + strlen(s);
	while (*s == ' ' || *s == '\t')
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		*--e = '\0';
	return s;
}

int cs_remote_cbtrc(cs_remote *r, const char *path, char *why, size_t whyn)
{
	char name[4096], line[8192];
	cs_remote got = { 0 };
	unsigned lineno = 0;
	int rc = 0;
	FILE *f;

	if (!path) {
		const char *env = getenv("CBTRC"), *home = getenv("HOME");
		if (env && *env)
			snprintf(name, sizeof(name), "%s", env);
		else
			snprintf(name, sizeof(name), "%s/.cbtrc", home ? home : "");
		path = name;
	}
	if (!(f = fopen(path, "re"))) {
		rc = -errno;
		snprintf(why, whyn, "cannot read %s: %s", path, strerror(errno));
		return rc;
	}
	while (!rc && fgets(line, sizeof(line), f)) {
		const char *bad;
		char *k = trim(line), *eq;
		lineno++;
		if (!*k || *k == '#')
			continue;
		if (!(eq = strchr(k, '='))) {
			snprintf(why, whyn, "%s:%u: not \"key = value\"", path, lineno);
			rc = -EINVAL;
			break;
		}
		*eq = '\0';
		k = trim(k);
		if ((rc = cs_remote_set(&got, k, trim(eq + 1), &bad)) == -EINVAL)
			snprintf(why, whyn, "%s:%u: %s: %s", path, lineno, k, bad);
	}
	if (!rc && ferror(f)) {
		rc = -EIO;
		snprintf(why, whyn, "cannot read %s: %s", path, strerror(EIO));
	}
	fclose(f);
	if (rc) {
		cs_remote_clear(&got);
		return rc;
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char **dst = (char **)((char *)r + keys[i].off), **src = (char **)((char *)&got + keys[i].off);
		if (!*dst) {
			*dst = *src;
			*src = NULL;
		}
	}
	cs_remote_clear(&got);
	return 0;
}

void cs_remote_clear(cs_remote *r)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char **m = (char **)((char *)r + keys[i].off);
		free(*m);
		*m = NULL;
	}
}
