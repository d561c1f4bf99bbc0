/* btr_auth.h — where a channel to Cloud Bigtable goes and the credentials it presents (btr_auth.c), for
 * btr_connect_with (btr.h). */
#ifndef CELLFS_BTR_AUTH_H
#define CELLFS_BTR_AUTH_H

#include <stddef.h>
#include <grpc/grpc_security.h>

/* Where and how btr_connect_with connects, as cbt's flags and ~/.cbtrc name it; every member may be
 * NULL or "" for its default. Ignored, but for APP_PROFILE, when $BIGTABLE_EMULATOR_HOST is set. */
typedef struct btr_opts {
	const char *app_profile;    /* the instance's default profile */
	const char *data_endpoint;  /* host:port of the Data API: bigtable.googleapis.com:443 */
	const char *admin_endpoint; /* of the Admin API: bigtableadmin.googleapis.com:443 */
	const char *cert_file;      /* PEM roots the server's certificate must verify against: the system's */
	const char *creds;          /* a credentials JSON file: Application Default Credentials (btr_auth.h) */
	const char *access_token;   /* a bearer token sent as given (wins over CREDS) */
	const char *user_agent;     /* the user-agent gRPC sends: cellfs/VERSION */
} btr_opts;


/* btr_auth_channel — TLS verifying the server against O->cert_file's PEM roots (else the system's:
 * /etc/ssl/certs/ca-certificates.crt, ...), with call credentials in Application Default Credentials'
 * order: O->access_token as given; else the JSON file O->creds, else $GOOGLE_APPLICATION_CREDENTIALS,
 * else gcloud's application-default file ($CLOUDSDK_CONFIG or ~/.config/gcloud): a service account's key
 * (a self-signed JWT per API, $CELLFS_BT_TOKEN_SECONDS seconds long, default an hour, made again before
 * it expires) or a user's refresh token; else the metadata server, on Google's machines only. O may be
 * NULL (all defaults).
 * Returns 0 and *OUT (the caller releases it), WHO naming the credential for messages (an account's
 * email and the key's path, never a secret) and ROOTS the roots' file; or -EINVAL (a file unreadable or
 * not what it should be), -EACCES (none of ADC's places has credentials), -ENOMEM, with WHY saying which
 * and why. WHO, ROOTS and WHY are always NUL-terminated (truncated to their sizes). */
int btr_auth_channel(const btr_opts *o, grpc_channel_credentials **out, char *who, size_t whon, char *roots,
		     size_t rootsn, char *why, size_t whyn);

#endif
