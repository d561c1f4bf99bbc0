/* btr_auth.c — what a channel to the service presents (btr_auth.h): TLS roots and the call credentials
 * found in Application Default Credentials' order, with a name for each that messages can show. The
 * tokens themselves are gRPC core's: a service account's key signs a self-signed JWT for the API the
 * call goes to (audience https://HOST/SERVICE), cached and made again before it expires; a user's
 * refresh token is exchanged at Google's token endpoint; the metadata server is asked on GCE. */
#include "btr_auth.h"
#include "mem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <grpc/grpc_security.h>
#include <grpc/support/time.h>

#define FILE_MAX (1u << 20) /* a credentials or roots file larger than this is not one */
#define JWT_SECONDS 3600    /* a self-signed JWT's lifetime (Google's limit) */

/* The system's TLS roots, in the places distributions keep them. */
static const char *const system_roots[] = {
	"/etc/ssl/certs/ca-certificates.crt", /* Debian, Ubuntu, Alpine */
	"/etc/pki/tls/certs/ca-bundle.crt",   /* Fedora, RHEL */
	"/etc/ssl/cert.pem",                  /* others */
};

/* PATH's bytes, NUL-terminated, in *OUT (the caller's to free). Returns 0 or -errno (-EFBIG: larger
 * than FILE_MAX, -EISDIR). */
static int slurp(const char *path, char **out)
{
	struct stat sb;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;
	size_t n = 0;
	char *b = NULL;

	*out = NULL;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) < 0)
		rc = -errno;
	else if (S_ISDIR(sb.st_mode))
		rc = -EISDIR;
	else if (!(b = mem_malloc(FILE_MAX + 1)))
		rc = -ENOMEM;
	while (!rc) {
		ssize_t got = read(fd, b + n, FILE_MAX + 1 - n);
		if (got < 0)
			rc = -errno;
		else if (got == 0)
			break;
		else if ((n += (size_t)got) > FILE_MAX)
			rc = -EFBIG;
	}
	close(fd);
	if (rc) {
		free(b);
		return rc;
	}
	b[n] = '\0';
	*out = b;
	return 0;
}

/* The string value of top-level-looking member KEY of JSON into OUT (SIZE bytes, truncated), or false.
 * Enough for Google's credential files (flat objects of strings); gRPC parses them properly. */
static bool json_string(const char *json, const char *key, char *out, size_t size)
{
	size_t klen = strlen(key);
	for (const char *p = json; (p = strchr(p, '"')); p++) {
		if (strncmp(p + 1, key, klen) || p[1 + klen] != '"')
			continue;
		const char *q = p + 2 + klen;
		while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
			q++;
		if (*q++ != ':')
			continue;
		while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
			q++;
		if (*q++ != '"')
			return false;
		size_t n = 0;
		for (; *q && *q != '"'; q++) {
			if (*q == '\\' && q[1])
				q++;
			if (n + 1 < size)
				out[n++] = *q;
		}
		out[n] = '\0';
		return *q == '"';
	}
	return false;
}

/* Call credentials from the JSON credentials file PATH, named in WHO. */
static int from_file(const char *path, const char *via, grpc_call_credentials **out, char *who, size_t whon,
		     char *why, size_t whyn)
{
	char type[64], name[256];
	char *json;
	int rc = slurp(path, &json);

	if (rc) {
		snprintf(why, whyn, "cannot read the credentials file %s (%s): %s", path, via, strerror(-rc));
		return rc == -ENOMEM ? rc : -EINVAL;
	}
	if (!json_string(json, "type", type, sizeof(type))) {
		snprintf(why, whyn, "the credentials file %s (%s) is not a Google credentials JSON file (it has no "
			 "\"type\")", path, via);
		free(json);
		return -EINVAL;
	}
	if (!strcmp(type, "service_account")) {
		const char *env = getenv("CELLFS_BT_TOKEN_SECONDS"); /* (tests: renewal in seconds) */
		long secs = env && atol(env) > 0 ? atol(env) : JWT_SECONDS;
		if (!json_string(json, "client_email", name, sizeof(name)))
			snprintf(name, sizeof(name), "(no client_email)");
		snprintf(who, whon, "service account %s, key %s", name, path);
		*out = grpc_service_account_jwt_access_credentials_create(
			json, gpr_time_from_seconds(secs, GPR_TIMESPAN), NULL);
	} else if (!strcmp(type, "authorized_user")) {
		if (!json_string(json, "client_id", name, sizeof(name)))
			snprintf(name, sizeof(name), "(no client_id)");
		snprintf(who, whon, "user credentials of OAuth client %.60s, file %s", name, path);
		*out = grpc_google_refresh_token_credentials_create(json, NULL);
	} else {
		snprintf(why, whyn, "the credentials file %s (%s) is of type \"%s\": cellfs takes a service account's "
			 "key (service_account) or user credentials (authorized_user)", path, via, type);
		free(json);
		return -EINVAL;
	}
	free(json);
	if (!*out) {
		snprintf(why, whyn, "the credentials file %s (%s) is not a valid %s file", path, via, type);
		return -EINVAL;
	}
	return 0;
}

/* gcloud's application-default file, if there is one: into PATH. */
static bool gcloud_file(char *path, size_t n)
{
	const char *dir = getenv("CLOUDSDK_CONFIG"), *home = getenv("HOME");
	if (dir && *dir)
		snprintf(path, n, "%s/application_default_credentials.json", dir);
	else if (home && *home)
		snprintf(path, n, "%s/.config/gcloud/application_default_credentials.json", home);
	else
		return false;
	return access(path, F_OK) == 0;
}

/* TLS with the roots of O (cert_file, else the system's), named in ROOTS. */
static int tls(const btr_opts *o, grpc_channel_credentials **out, char *roots, size_t rootsn, char *why,
	       size_t whyn)
{
	const char *path = o && o->cert_file && *o->cert_file ? o->cert_file : NULL;
	char *pem = NULL;
	int rc;

	for (size_t i = 0; !path && i < sizeof(system_roots) / sizeof(system_roots[0]); i++)
		if (!access(system_roots[i], R_OK))
			path = system_roots[i];
	if (path && (rc = slurp(path, &pem))) {
		snprintf(why, whyn, "cannot read the TLS roots %s: %s", path, strerror(-rc));
		return rc == -ENOMEM ? rc : -EINVAL;
	}
	if (pem && !strstr(pem, "-----BEGIN CERTIFICATE-----")) {
		snprintf(why, whyn, "the TLS roots file %s holds no PEM certificate", path);
		free(pem);
		return -EINVAL;
	}
	snprintf(roots, rootsn, "%s", path ? path : "gRPC's default roots");
	*out = grpc_ssl_credentials_create(pem, NULL, NULL, NULL);
	free(pem);
	return *out ? 0 : -ENOMEM;
}

int btr_auth_channel(const btr_opts *o, grpc_channel_credentials **out, char *who, size_t whon, char *roots,
		     size_t rootsn, char *why, size_t whyn)
{
	grpc_channel_credentials *ssl = NULL;
	grpc_call_credentials *call = NULL;
	const char *env = getenv("GOOGLE_APPLICATION_CREDENTIALS");
	char path[4096];
	int rc;

	*out = NULL;
	who[0] = roots[0] = why[0] = '\0';
	if ((rc = tls(o, &ssl, roots, rootsn, why, whyn)))
		return rc;
	if (o && o->access_token && *o->access_token) {
		snprintf(who, whon, "the access token given");
		call = grpc_access_token_credentials_create(o->access_token, NULL);
	} else if (o && o->creds && *o->creds) {
		rc = from_file(o->creds, "creds", &call, who, whon, why, whyn);
	} else if (env && *env) {
		rc = from_file(env, "$GOOGLE_APPLICATION_CREDENTIALS", &call, who, whon, why, whyn);
	} else if (gcloud_file(path, sizeof(path))) {
		rc = from_file(path, "gcloud's application-default credentials", &call, who, whon, why, whyn);
	} else {
		/* the last of ADC's places: the metadata server, which gRPC's default credentials find on
		 * Google's machines (and only there: elsewhere they are NULL) */
		grpc_channel_credentials_release(ssl);
		if (!(*out = grpc_google_default_credentials_create(NULL))) {
			snprintf(why, whyn, "no credentials: give -creds KEY.json or -access-token, set "
				 "GOOGLE_APPLICATION_CREDENTIALS, run `gcloud auth application-default login`, or run "
				 "on Google Cloud (or set BIGTABLE_EMULATOR_HOST for the emulator)");
			return -EACCES;
		}
		snprintf(who, whon, "the metadata server's service account");
		snprintf(roots, rootsn, "gRPC's default roots");
		return 0;
	}
	if (rc || !call) {
		grpc_channel_credentials_release(ssl);
		return rc ? rc : -ENOMEM;
	}
	*out = grpc_composite_channel_credentials_create(ssl, call, NULL);
	grpc_channel_credentials_release(ssl);
	grpc_call_credentials_release(call);
	return *out ? 0 : -ENOMEM;
}
