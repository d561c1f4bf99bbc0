/* btr_conn.c — the transport's connections (btr.h): channels to the endpoints with the credentials
 * btr_auth_channel finds (or plaintext to the emulator), deadlines, names and routing headers, and gRPC's
 * global state, started by the first connection of the process and stopped by the last. */
#include "btr_internal.h"
#include "btr_auth.h"
#include "mem.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/log.h>

#ifndef BTR_VERSION
#define BTR_VERSION "0"
#endif

#define DATA_ENDPOINT "bigtable.googleapis.com:443"
#define ADMIN_ENDPOINT "bigtableadmin.googleapis.com:443"
#define GRPC_STOP_WAIT_MS 2000u

/* Open conns of the process: the last btr_close waits for gRPC to stop (btr_close). */
static pthread_mutex_t conns_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned conns;
static void quiet(gpr_log_func_args *args)
{
	(void)args;
}

/* ---- connections */

static grpc_channel *channel_new(const char *target, grpc_channel_credentials *creds, const char *agent)
{
	grpc_arg args[] = {
		{ .type = GRPC_ARG_INTEGER, .key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,
		  .value.integer = (int)BTR_MAX_MESSAGE },
		{ .type = GRPC_ARG_INTEGER, .key = GRPC_ARG_MAX_SEND_MESSAGE_LENGTH,
		  .value.integer = (int)BTR_MAX_MESSAGE },
		/* a connection that stopped answering is found between calls too */
		{ .type = GRPC_ARG_INTEGER, .key = GRPC_ARG_KEEPALIVE_TIME_MS, .value.integer = 30000 },
		{ .type = GRPC_ARG_INTEGER, .key = GRPC_ARG_KEEPALIVE_TIMEOUT_MS, .value.integer = 10000 },
		/* after an outage, reconnect within seconds rather than gRPC's default two minutes */
		{ .type = GRPC_ARG_INTEGER, .key = GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, .value.integer = 10000 },
		{ .type = GRPC_ARG_STRING, .key = GRPC_ARG_PRIMARY_USER_AGENT_STRING,
		  .value.string = (char *)(agent && *agent ? agent : "cellfs/" BTR_VERSION) },
	};
	grpc_channel_args ca = { .num_args = sizeof args / sizeof args[0], .args = args };
	return grpc_channel_create(target, creds, &ca);
}

static int parse_ms(const char *s, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v == 0 || v > 86400000ul)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

static bool name_ok(const char *s)
{
	return s && *s && !strchr(s, '/');
}

int btr_connect(const char *project, const char *instance, const char *app_profile, btr_conn **out)
{
	btr_opts o = { .app_profile = app_profile };
	return btr_connect_with(project, instance, &o, out, NULL, 0);
}

static const char *or_default(const char *s, const char *dflt)
{
	return s && *s ? s : dflt;
}

int btr_connect_with(const char *project, const char *instance, const btr_opts *o, btr_conn **out, char *why,
		     size_t whyn)
{
	static const btr_opts none;
	char scratch[8];

	*out = NULL;
	if (!why || !whyn) {
		why = scratch;
		whyn = sizeof(scratch);
	}
	why[0] = '\0';
	o = o ? o : &none;
	if (!name_ok(project) || !name_ok(instance))
		return -EINVAL;
	unsigned env_ms = 0;
	const char *e = getenv("CELLFS_BT_DEADLINE_MS");
	if (e && parse_ms(e, &env_ms) < 0)
		return -EINVAL;

	size_t n = strlen("projects//instances/") + strlen(project) + strlen(instance) + 1;
	btr_conn *c = mem_calloc(1, sizeof *c + n);
	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->count_lock, NULL);
	snprintf(c->instance_name, n, "projects/%s/instances/%s", project, instance);
	c->app_profile = mem_strdup(o->app_profile ? o->app_profile : "");
	if (!c->app_profile) {
		free(c);
		return -ENOMEM;
	}
	c->deadline_ms[BTR_DATA] = BTR_DATA_DEADLINE_MS;
	c->deadline_ms[BTR_ADMIN] = BTR_ADMIN_DEADLINE_MS;
	c->idle_ms = BTR_DATA_DEADLINE_MS;
	if (env_ms)
		btr_set_deadline_ms(c, env_ms);

	if (!getenv("GRPC_VERBOSITY")) /* library code never prints: gRPC's log only when asked for */
		gpr_set_log_function(quiet);
	pthread_mutex_lock(&conns_lock);
	conns++;
	pthread_mutex_unlock(&conns_lock);
	grpc_init();
	int err = 0;
	const char *emu = getenv("BIGTABLE_EMULATOR_HOST");
	if (emu && *emu) {
		c->emulator = true;
		snprintf(c->who, sizeof(c->who), "no credentials (the emulator)");
		if (!(c->endpoint[BTR_DATA] = mem_strdup(emu)) || !(c->endpoint[BTR_ADMIN] = mem_strdup(emu))) {
			err = -ENOMEM;
			goto fail;
		}
		grpc_channel_credentials *cr = grpc_insecure_credentials_create();
		c->ch[BTR_DATA] = channel_new(emu, cr, o->user_agent);
		grpc_channel_credentials_release(cr);
		c->ch[BTR_ADMIN] = c->ch[BTR_DATA];
	} else {
		grpc_channel_credentials *cr;
		if (!(c->endpoint[BTR_DATA] = mem_strdup(or_default(o->data_endpoint, DATA_ENDPOINT))) ||
		    !(c->endpoint[BTR_ADMIN] = mem_strdup(or_default(o->admin_endpoint, ADMIN_ENDPOINT)))) {
			err = -ENOMEM;
			goto fail;
		}
		if ((err = btr_auth_channel(o, &cr, c->who, sizeof(c->who), c->roots, sizeof(c->roots), why, whyn)))
			goto fail;
		c->ch[BTR_DATA] = channel_new(c->endpoint[BTR_DATA], cr, o->user_agent);
		c->ch[BTR_ADMIN] = channel_new(c->endpoint[BTR_ADMIN], cr, o->user_agent);
		grpc_channel_credentials_release(cr);
	}
	if (!c->ch[BTR_DATA] || !c->ch[BTR_ADMIN]) {
		err = -EIO;
		goto fail;
	}
	*out = c;
	return 0;
fail:
	btr_close(c);
	return err;
}

void btr_close(btr_conn *c)
{
	if (!c)
		return;
	if (c->ch[BTR_ADMIN] && c->ch[BTR_ADMIN] != c->ch[BTR_DATA])
		grpc_channel_destroy(c->ch[BTR_ADMIN]);
	if (c->ch[BTR_DATA])
		grpc_channel_destroy(c->ch[BTR_DATA]);
	free(c->app_profile);
	free(c->endpoint[BTR_DATA]);
	free(c->endpoint[BTR_ADMIN]);
	pthread_mutex_destroy(&c->count_lock);
	free(c);
	grpc_shutdown();

	/* gRPC's objects hold references of their own to its global state and may drop the last of them
	 * later, on a gRPC thread, which then stops gRPC in the background. A process that forks after
	 * closing its last conn (cellfs checks its store, then daemonises) would give the child a gRPC that
	 * counts itself started and has no threads: its calls never end. So the last close waits for the
	 * stop, unless a new conn appears meanwhile. A healthy connection lets go within a millisecond or
	 * so; one still connecting to a peer that does not answer holds on until its connect timeout, so
	 * the wait is bounded (such a process had a failed call and is not about to daemonise). */
	pthread_mutex_lock(&conns_lock);
	bool last = --conns == 0;
	pthread_mutex_unlock(&conns_lock);
	for (unsigned ms = 0; last && ms < GRPC_STOP_WAIT_MS && grpc_is_initialized(); ms++) {
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
		pthread_mutex_lock(&conns_lock);
		last = conns == 0;
		pthread_mutex_unlock(&conns_lock);
	}
}

void btr_set_deadline_ms(btr_conn *c, unsigned ms)
{
	if (!ms)
		return;
	c->deadline_ms[BTR_DATA] = ms;
	c->deadline_ms[BTR_ADMIN] = ms;
	c->idle_ms = ms;
}

const char *btr_instance_name(const btr_conn *c)
{
	return c->instance_name;
}

const char *btr_app_profile(const btr_conn *c)
{
	return c->app_profile;
}

int btr_is_emulator(const btr_conn *c)
{
	return c->emulator;
}

const char *btr_endpoint(const btr_conn *c, int api)
{
	return c->endpoint[api == BTR_ADMIN ? BTR_ADMIN : BTR_DATA];
}

const char *btr_who(const btr_conn *c)
{
	return c->who;
}

int btr_table_name(const btr_conn *c, const char *table, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s/tables/%s", c->instance_name, table);
	if (n < 0 || (size_t)n >= size) {
		if (size)
			buf[0] = '\0';
		return -ENAMETOOLONG;
	}
	return 0;
}

/* Appends S url-encoded at *AT; false when it does not fit (with the NUL) in END. */
static bool put_encoded(char **at, char *end, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		unsigned char ch = *p;
		bool plain = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
			     ch == '-' || ch == '_' || ch == '.' || ch == '~';
		size_t need = plain ? 1 : 3;
		if ((size_t)(end - *at) <= need)
			return false;
		if (plain) {
			*(*at)++ = (char)ch;
		} else {
			*(*at)++ = '%';
			*(*at)++ = hex[ch >> 4];
			*(*at)++ = hex[ch & 15];
		}
	}
	return true;
}

static bool put_plain(char **at, char *end, const char *s)
{
	size_t n = strlen(s);
	if ((size_t)(end - *at) <= n)
		return false;
	memcpy(*at, s, n);
	*at += n;
	return true;
}

int btr_routing(const btr_conn *c, int api, const char *key, const char *value, char *buf, size_t size)
{
	if (!size)
		return -ENAMETOOLONG;
	char *at = buf, *end = buf + size;
	bool ok = put_plain(&at, end, key) && put_plain(&at, end, "=") && put_encoded(&at, end, value);
	if (ok && api == BTR_DATA && c->app_profile[0])
		ok = put_plain(&at, end, "&app_profile_id=") && put_encoded(&at, end, c->app_profile);
	if (!ok) {
		buf[0] = '\0';
		return -ENAMETOOLONG;
	}
	*at = '\0';
	return 0;
}
