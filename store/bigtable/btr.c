/* btr.c — the gRPC transport (btr.h): channels, unary calls with deadline and retries, server streams.
 * Every call owns a completion queue of its own (pluck), so threads share the channel and nothing else.
 * Messages are packed once into one gRPC slice; replies are unpacked by protobuf-c, which copies what it
 * keeps, so gRPC's buffers are released as soon as a message is decoded; or, for a caller that decodes
 * them itself (btr_stream_next_bytes), held as one slice until the next message.
 */
#include "btr_internal.h"
#include "mem.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/log.h>
#include <grpc/support/time.h>

#define ROUTING_KEY "x-goog-request-params"
#define BACKOFF_FIRST_MS 50u
#define BACKOFF_MAX_MS 2000u
#define QUIET_MS 3000u /* how long after a call found the instance silent new calls fail at once */

/* ---- small helpers */

#define COUNT(field, n) __atomic_add_fetch(&(field), (n), __ATOMIC_RELAXED)

/* One call of METHOD sent with SENT bytes, counted. */
static void count_call(btr_conn *c, const char *method, size_t sent)
{
	const char *name = strrchr(method, '/') ? strrchr(method, '/') + 1 : method;
	size_t i;

	pthread_mutex_lock(&c->count_lock);
	for (i = 0; i < BTR_COUNTED_METHODS - 1 && c->calls[i].name && strcmp(c->calls[i].name, name); i++)
		;
	if (!c->calls[i].name)
		__atomic_store_n(&c->calls[i].name, i < BTR_COUNTED_METHODS - 1 ? name : "other", __ATOMIC_RELEASE);
	pthread_mutex_unlock(&c->count_lock);
	COUNT(c->calls[i].n, 1);
	COUNT(c->bytes_out, sent);
}

/* A message of LEN bytes received, counted. */
static void count_received(btr_conn *c, size_t len)
{
	COUNT(c->msgs_in, 1);
	COUNT(c->bytes_in, len);
}

void btr_count_retry(btr_conn *c)
{
	COUNT(c->retries, 1);
}

void btr_count_rows(btr_conn *c, uint64_t rows, uint64_t cells)
{
	COUNT(c->rows_in, rows);
	COUNT(c->cells_in, cells);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int btr_counters_text(btr_conn *c, char **out, size_t *len)
{
	struct { const char *name; uint64_t n; } calls[BTR_COUNTED_METHODS];
	uint64_t v[6];
	static const char *const names[6] = { "retries", "messages_received", "bytes_received", "bytes_sent",
					      "rows_received", "cells_received" };
	size_t ncalls = 0, cap = 64 * (BTR_COUNTED_METHODS + 6), n = 0;
	char *b;

	for (; ncalls < BTR_COUNTED_METHODS; ncalls++) {
		if (!(calls[ncalls].name = __atomic_load_n(&c->calls[ncalls].name, __ATOMIC_ACQUIRE)))
			break;
		calls[ncalls].n = __atomic_load_n(&c->calls[ncalls].n, __ATOMIC_RELAXED);
	}
	v[0] = __atomic_load_n(&c->retries, __ATOMIC_RELAXED);
	v[1] = __atomic_load_n(&c->msgs_in, __ATOMIC_RELAXED);
	v[2] = __atomic_load_n(&c->bytes_in, __ATOMIC_RELAXED);
	v[3] = __atomic_load_n(&c->bytes_out, __ATOMIC_RELAXED);
	v[4] = __atomic_load_n(&c->rows_in, __ATOMIC_RELAXED);
	v[5] = __atomic_load_n(&c->cells_in, __ATOMIC_RELAXED);
	qsort(calls, ncalls, sizeof calls[0], by_name); /* (the name is the struct's first member) */
	if (!(b = mem_malloc(cap)))
		return -ENOMEM;
	for (size_t i = 0; i < ncalls; i++)
		n += (size_t)snprintf(b + n, cap - n, "bigtable.calls.%.40s %llu\n", calls[i].name,
				      (unsigned long long)calls[i].n);
	for (size_t i = 0; i < 6; i++)
		n += (size_t)snprintf(b + n, cap - n, "bigtable.%s %llu\n", names[i], (unsigned long long)v[i]);
	*out = b;
	*len = n;
	return 0;
}

static gpr_timespec after_ms(unsigned ms)
{
	return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(ms, GPR_TIMESPAN));
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A call waited its whole deadline (or idle limit) for the instance and had no answer: calls that start
 * within the next QUIET_MS (at most the deadline) fail at once. The kernel sends a FUSE daemon one
 * lookup of a name at a time, so three programs opening one file would otherwise wait a deadline each,
 * one after the other. */
static void went_quiet(btr_conn *c)
{
	unsigned hold = c->idle_ms < QUIET_MS ? c->idle_ms : QUIET_MS;
	__atomic_store_n(&c->quiet_until, mono_ms() + hold, __ATOMIC_RELAXED);
}

static void answered(btr_conn *c)
{
	if (__atomic_load_n(&c->quiet_until, __ATOMIC_RELAXED))
		__atomic_store_n(&c->quiet_until, 0, __ATOMIC_RELAXED);
}

int btr_quiet(btr_conn *c)
{
	int64_t until = __atomic_load_n(&c->quiet_until, __ATOMIC_RELAXED);
	return until && mono_ms() < until;
}

static void status_setn(btr_status *st, grpc_status_code code, const char *msg, size_t len)
{
	if (!st)
		return;
	st->code = code;
	if (len >= sizeof st->message)
		len = sizeof st->message - 1;
	memcpy(st->message, msg, len);
	st->message[len] = '\0';
}

static void status_set(btr_status *st, grpc_status_code code, const char *msg)
{
	status_setn(st, code, msg, strlen(msg));
}

static void status_from_slice(btr_status *st, grpc_status_code code, grpc_slice details)
{
	status_setn(st, code, (const char *)GRPC_SLICE_START_PTR(details), GRPC_SLICE_LENGTH(details));
}

/* The call's metadata in MD[0..2), their count returned: the features this client supports (Bigtable's
 * FeatureFlags, base64url: reverse_scans = 1 and last_scanned_row_responses = 4, both true; the service
 * refuses a reversed read from a client that does not say it), and the routing header, unless ROUTING is
 * NULL or "" (its value slice, MD[1], the caller unrefs: md_release()). */
#define FEATURES_KEY "bigtable-features"
#define FEATURES "CAEgAQ=="
static size_t routing_md(const char *routing, grpc_metadata md[2])
{
	memset(md, 0, 2 * sizeof *md);
	md[0].key = grpc_slice_from_static_string(FEATURES_KEY);
	md[0].value = grpc_slice_from_static_string(FEATURES);
	if (!routing || !*routing)
		return 1;
	md[1].key = grpc_slice_from_static_string(ROUTING_KEY);
	md[1].value = grpc_slice_from_copied_string(routing);
	return 2;
}

static void md_release(grpc_metadata md[2], size_t n)
{
	if (n == 2)
		grpc_slice_unref(md[1].value);
}

/* REQ packed into a byte buffer of one slice; NULL (and -EMSGSIZE in *ERR) when it is too large. */
static grpc_byte_buffer *pack(const ProtobufCMessage *req, int *err)
{
	size_t n = protobuf_c_message_get_packed_size(req);
	if (n > BTR_MAX_MESSAGE) {
		*err = -EMSGSIZE;
		return NULL;
	}
	grpc_slice s = grpc_slice_malloc(n);
	protobuf_c_message_pack(req, GRPC_SLICE_START_PTR(s));
	grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);
	grpc_slice_unref(s);
	if (!bb)
		*err = -ENOMEM;
	return bb;
}

/* The message in BB as one slice (*OUT, a reference the caller drops): a reply of one uncompressed slice
 * as it is, any other joined into one. Returns false when BB cannot be read. */
static bool flatten(grpc_byte_buffer *bb, grpc_slice *out)
{
	grpc_byte_buffer_reader r;
	if (bb->type == GRPC_BB_RAW && bb->data.raw.compression == GRPC_COMPRESS_NONE &&
	    bb->data.raw.slice_buffer.count == 1) {
		*out = grpc_slice_ref(bb->data.raw.slice_buffer.slices[0]);
		return true;
	}
	if (!grpc_byte_buffer_reader_init(&r, bb))
		return false;
	*out = grpc_byte_buffer_reader_readall(&r);
	grpc_byte_buffer_reader_destroy(&r);
	return true;
}

/* The message in BB decoded as DESC, or NULL. */
static ProtobufCMessage *unpack(grpc_byte_buffer *bb, const ProtobufCMessageDescriptor *desc)
{
	grpc_slice all;
	ProtobufCMessage *m;
	if (!flatten(bb, &all))
		return NULL;
	m = protobuf_c_message_unpack(desc, NULL, GRPC_SLICE_LENGTH(all), GRPC_SLICE_START_PTR(all));
	grpc_slice_unref(all);
	return m;
}

static grpc_call *call_create(grpc_channel *ch, grpc_completion_queue *cq, const char *method,
			      gpr_timespec deadline)
{
	grpc_slice m = grpc_slice_from_copied_string(method);
	grpc_call *call = grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, cq, m, NULL, deadline,
						   NULL);
	grpc_slice_unref(m);
	return call;
}

static void cq_destroy(grpc_completion_queue *cq)
{
	grpc_completion_queue_shutdown(cq);
	grpc_completion_queue_destroy(cq);
}

/* Waits for TAG until DEADLINE; past it, cancels the call with CODE/WHY (a cancelled call completes every
 * pending operation at once, and reports that status) and waits for TAG without limit. */
static bool pluck_or_cancel(grpc_completion_queue *cq, grpc_call *call, void *tag, gpr_timespec deadline,
			    grpc_status_code code, const char *why)
{
	grpc_event ev = grpc_completion_queue_pluck(cq, tag, deadline, NULL);
	if (ev.type != GRPC_QUEUE_TIMEOUT)
		return false;
	grpc_call_cancel_with_status(call, code, why, NULL);
	grpc_completion_queue_pluck(cq, tag, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
	return true;
}

/* ---- status codes */

int btr_errno(grpc_status_code code)
{
	switch (code) {
	case GRPC_STATUS_OK:
		return 0;
	case GRPC_STATUS_NOT_FOUND:
		return -ENOENT;
	case GRPC_STATUS_ALREADY_EXISTS:
		return -EEXIST;
	case GRPC_STATUS_INVALID_ARGUMENT:
	case GRPC_STATUS_OUT_OF_RANGE:
	case GRPC_STATUS_FAILED_PRECONDITION:
		return -EINVAL;
	case GRPC_STATUS_PERMISSION_DENIED:
	case GRPC_STATUS_UNAUTHENTICATED:
		return -EACCES;
	case GRPC_STATUS_RESOURCE_EXHAUSTED:
		return -EAGAIN;
	case GRPC_STATUS_UNIMPLEMENTED:
		return -EOPNOTSUPP;
	default:
		return -EIO;
	}
}

int btr_retryable(grpc_status_code code)
{
	return code == GRPC_STATUS_UNAVAILABLE || code == GRPC_STATUS_ABORTED ||
	       code == GRPC_STATUS_DEADLINE_EXCEEDED;
}

#define TLS_FAILED "TLS handshake failed: "

static bool tls_failed(const btr_status *st)
{
	return st->code == GRPC_STATUS_UNAVAILABLE && !strncmp(st->message, TLS_FAILED, strlen(TLS_FAILED));
}

int btr_status_retryable(const btr_status *st)
{
	return btr_retryable(st->code) && !tls_failed(st);
}

/* gRPC's words for a refused TLS handshake ("failed to connect to all addresses; last error: UNKNOWN:
 * ipv4:127.0.0.1:8443: Ssl handshake failed: SSL_ERROR_SSL: error:0A000086:SSL routines::certificate
 * verify failed") made into a sentence that says what to check: TLS_FAILED, OpenSSL's reason, and the
 * roots the certificate was checked against. */
static void explain_tls(const btr_conn *c, btr_status *st)
{
	const char *p, *reason;
	char msg[sizeof(st->message)];

	if (!st || st->code != GRPC_STATUS_UNAVAILABLE || !(p = strstr(st->message, "andshake failed")))
		return;
	reason = strstr(p, "::") ? strstr(p, "::") + 2 : p + strlen("andshake failed");
	while (*reason == ':' || *reason == ' ')
		reason++;
	if (strstr(reason, "verify failed"))
		snprintf(msg, sizeof(msg), TLS_FAILED "%s: the server's certificate does not verify against %s "
			 "(-cert-file names other roots)", reason, c->roots[0] ? c->roots : "the roots given");
	else
		snprintf(msg, sizeof(msg), TLS_FAILED "%s", reason);
	status_set(st, st->code, msg);
}

const char *btr_code_name(grpc_status_code code)
{
	static const char *const names[] = {
		"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
		"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
		"OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
	};
	if ((unsigned)code < sizeof names / sizeof names[0])
		return names[code];
	return "UNKNOWN";
}

unsigned btr_backoff_ms(unsigned attempt)
{
	/* xorshift64*, one state per thread, seeded from the clock and the state's own address */
	static _Thread_local uint64_t x;
	if (!x) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		x = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ (uint64_t)(uintptr_t)&x;
		x |= 1;
	}
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	uint64_t r = (x * 0x2545F4914F6CDD1DULL) >> 33;

	unsigned ms = BACKOFF_FIRST_MS;
	for (unsigned i = 1; i < attempt && ms < BACKOFF_MAX_MS; i++)
		ms *= 2;
	if (ms > BACKOFF_MAX_MS)
		ms = BACKOFF_MAX_MS;
	return ms / 2 + (unsigned)(r % (ms / 2 + 1));
}

/* ---- unary calls */

/* The deadline of a unary call to METHOD over API: the Admin API's only for what changes the schema
 * (CreateTable, DeleteTable, ModifyColumnFamilies, DropRowRange: slow on the service); its reads
 * (GetTable, ListTables) answer a mount's lookups and listings, which are bound by the data deadline. */
static unsigned call_deadline_ms(const btr_conn *c, int api, const char *method)
{
	const char *op = strrchr(method, '/');
	if (api == BTR_ADMIN && op && (!strcmp(op, "/GetTable") || !strcmp(op, "/ListTables")))
		return c->deadline_ms[BTR_DATA];
	return c->deadline_ms[api];
}

/* ST is about a call of METHOD on API's channel of C. */
static void note_call(const btr_conn *c, int api, const char *method, btr_status *st)
{
	if (!st)
		return;
	st->endpoint = btr_endpoint(c, api);
	st->method = strrchr(method, '/') ? strrchr(method, '/') + 1 : method;
	st->who = c->who;
}

/* The status of a call not made because the instance just failed to answer another (btr_quiet). */
static void quiet_status(const btr_conn *c, btr_status *st)
{
	char msg[200];
	snprintf(msg, sizeof(msg), "the instance did not answer a call within its deadline (%u ms) a moment ago; "
		 "not tried again yet", c->idle_ms);
	status_set(st, GRPC_STATUS_DEADLINE_EXCEEDED, msg);
}

/* One attempt of a unary call, ending by DEADLINE. Returns its status code (in ST too) and, on OK, the
 * reply in *REPLY (the caller destroys it). REQ is left as it was (gRPC sends a copy). */
static grpc_status_code unary_once(grpc_channel *ch, const char *method, grpc_byte_buffer *req,
				   const char *routing, gpr_timespec deadline, grpc_byte_buffer **reply,
				   btr_status *st)
{
	*reply = NULL;
	grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(NULL);
	grpc_call *call = call_create(ch, cq, method, deadline);
	if (!call) {
		cq_destroy(cq);
		status_set(st, GRPC_STATUS_INTERNAL, "gRPC refused to create the call");
		return GRPC_STATUS_INTERNAL;
	}
	grpc_metadata md[2];
	size_t nmd = routing_md(routing, md);
	grpc_byte_buffer *send = grpc_byte_buffer_copy(req);
	grpc_metadata_array initial, trailing;
	grpc_metadata_array_init(&initial);
	grpc_metadata_array_init(&trailing);
	grpc_status_code code = GRPC_STATUS_UNKNOWN;
	grpc_slice details = grpc_empty_slice();

	grpc_op ops[6];
	memset(ops, 0, sizeof ops);
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[0].data.send_initial_metadata.count = nmd;
	ops[0].data.send_initial_metadata.metadata = md;
	ops[1].op = GRPC_OP_SEND_MESSAGE;
	ops[1].data.send_message.send_message = send;
	ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
	ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
	ops[3].data.recv_initial_metadata.recv_initial_metadata = &initial;
	ops[4].op = GRPC_OP_RECV_MESSAGE;
	ops[4].data.recv_message.recv_message = reply;
	ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
	ops[5].data.recv_status_on_client.trailing_metadata = &trailing;
	ops[5].data.recv_status_on_client.status = &code;
	ops[5].data.recv_status_on_client.status_details = &details;

	void *tag = &ops;
	grpc_call_error ce = grpc_call_start_batch(call, ops, 6, tag, NULL);
	if (ce == GRPC_CALL_OK) {
		/* the call's deadline ends it; the margin only guards against gRPC missing its own timer */
		gpr_timespec guard = gpr_time_add(deadline, gpr_time_from_seconds(5, GPR_TIMESPAN));
		pluck_or_cancel(cq, call, tag, guard, GRPC_STATUS_DEADLINE_EXCEEDED, "deadline exceeded");
		status_from_slice(st, code, details);
	} else {
		code = GRPC_STATUS_INTERNAL;
		status_set(st, code, grpc_call_error_to_string(ce));
	}
	if (code != GRPC_STATUS_OK && *reply) {
		grpc_byte_buffer_destroy(*reply);
		*reply = NULL;
	}
	grpc_slice_unref(details);
	grpc_metadata_array_destroy(&initial);
	grpc_metadata_array_destroy(&trailing);
	grpc_byte_buffer_destroy(send);
	md_release(md, nmd);
	grpc_call_unref(call);
	cq_destroy(cq);
	return code;
}

/* Sleeps MS, or returns false without sleeping when that would end after DEADLINE. */
static bool sleep_before(unsigned ms, gpr_timespec deadline)
{
	gpr_timespec wake = after_ms(ms);
	if (gpr_time_cmp(wake, deadline) >= 0)
		return false;
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return true;
}

int btr_unary(btr_conn *c, int api, const char *method, const ProtobufCMessage *req,
	      const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **resp,
	      const char *routing, unsigned flags, btr_status *st)
{
	*resp = NULL;
	status_set(st, GRPC_STATUS_OK, "");
	if (api != BTR_DATA && api != BTR_ADMIN)
		return -EINVAL;
	note_call(c, api, method, st);
	int err = 0;
	grpc_byte_buffer *bb = pack(req, &err);
	if (!bb) {
		status_set(st, GRPC_STATUS_RESOURCE_EXHAUSTED, "request too large");
		return err;
	}
	if (btr_quiet(c)) {
		grpc_byte_buffer_destroy(bb);
		quiet_status(c, st);
		return -EIO;
	}
	grpc_channel *ch = c->ch[api];
	gpr_timespec deadline = after_ms(call_deadline_ms(c, api, method));
	grpc_byte_buffer *reply = NULL;
	grpc_status_code code;
	bool spent = false; /* the deadline left no time for another attempt */
	for (unsigned attempt = 1;; attempt++) {
		if (attempt > 1)
			btr_count_retry(c);
		count_call(c, method, grpc_byte_buffer_length(bb));
		code = unary_once(ch, method, bb, routing, deadline, &reply, st);
		explain_tls(c, st);
		if (code == GRPC_STATUS_OK || !(flags & BTR_IDEMPOTENT) || !btr_retryable(code) ||
		    (st && tls_failed(st)))
			break;
		if (!sleep_before(btr_backoff_ms(attempt), deadline)) {
			spent = true;
			break;
		}
		/* without this, gRPC's own reconnect backoff would fail the attempt unsent */
		if (code == GRPC_STATUS_UNAVAILABLE)
			grpc_channel_reset_connect_backoff(ch);
	}
	grpc_byte_buffer_destroy(bb);
	if (code == GRPC_STATUS_DEADLINE_EXCEEDED || (code == GRPC_STATUS_UNAVAILABLE && spent))
		went_quiet(c);
	else if (code != GRPC_STATUS_UNAVAILABLE)
		answered(c); /* (the service said something) */
	if (code == GRPC_STATUS_DEADLINE_EXCEEDED && st && gpr_time_cmp(gpr_now(GPR_CLOCK_MONOTONIC), deadline) >= 0) {
		char msg[sizeof(st->message)];
		snprintf(msg, sizeof(msg), "%s: no answer within the deadline (%u ms)", st->message,
			 call_deadline_ms(c, api, method));
		status_set(st, code, msg);
	}
	if (code != GRPC_STATUS_OK)
		return btr_errno(code);
	if (!reply) {
		status_set(st, GRPC_STATUS_INTERNAL, "no reply message");
		return -EIO;
	}
	count_received(c, grpc_byte_buffer_length(reply));
	*resp = unpack(reply, resp_desc);
	grpc_byte_buffer_destroy(reply);
	if (!*resp) {
		status_set(st, GRPC_STATUS_INTERNAL, "the reply does not decode");
		return -EIO;
	}
	return 0;
}

/* ---- server streams */

struct btr_stream {
	btr_conn *conn;
	grpc_channel *ch;
	grpc_completion_queue *cq;
	grpc_call *call;
	grpc_metadata md[2];
	size_t nmd;
	grpc_byte_buffer *req;
	grpc_metadata_array initial, trailing;
	grpc_byte_buffer *reply;
	grpc_status_code code;
	grpc_slice details;
	bool send_pending, recv_pending, status_pending, started_recv;
	int end;                /* 1 while running, else what btr_stream_next returns from now on */
	btr_status st;
	char tag_send, tag_recv, tag_status; /* their addresses are the batches' tags */
	grpc_slice flat;           /* the message btr_stream_next_bytes gave, while FLAT_HELD */
	bool flat_held;
};

/* Start a stream sending REQ (taken over, freed with the stream; NULL: ERR, from pack). */
static int stream_open(btr_conn *c, int api, const char *method, grpc_byte_buffer *req, int err,
		       const char *routing, btr_stream **out)
{
	*out = NULL;
	if (!req)
		return err;
	btr_stream *s = mem_calloc(1, sizeof *s);
	if (!s) {
		grpc_byte_buffer_destroy(req);
		return -ENOMEM;
	}
	s->req = req;
	s->conn = c;
	s->ch = c->ch[api];
	note_call(c, api, method, &s->st);
	s->end = 1;
	s->code = GRPC_STATUS_OK;
	s->details = grpc_empty_slice();
	grpc_metadata_array_init(&s->initial);
	grpc_metadata_array_init(&s->trailing);
	if (btr_quiet(c)) { /* a stream that ended before it began, with the status saying why */
		quiet_status(c, &s->st);
		s->code = s->st.code;
		s->end = -EIO;
		*out = s;
		return 0;
	}
	count_call(c, method, grpc_byte_buffer_length(req));
	s->cq = grpc_completion_queue_create_for_pluck(NULL);
	s->call = call_create(s->ch, s->cq, method, gpr_inf_future(GPR_CLOCK_MONOTONIC));
	if (!s->call) {
		btr_stream_close(s);
		return -EIO;
	}
	s->nmd = routing_md(routing, s->md);

	grpc_op ops[3];
	memset(ops, 0, sizeof ops);
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[0].data.send_initial_metadata.count = s->nmd;
	ops[0].data.send_initial_metadata.metadata = s->md;
	ops[1].op = GRPC_OP_SEND_MESSAGE;
	ops[1].data.send_message.send_message = s->req;
	ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
	if (grpc_call_start_batch(s->call, ops, 3, &s->tag_send, NULL) != GRPC_CALL_OK) {
		btr_stream_close(s);
		return -EIO;
	}
	s->send_pending = true;

	memset(ops, 0, sizeof ops);
	ops[0].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
	ops[0].data.recv_status_on_client.trailing_metadata = &s->trailing;
	ops[0].data.recv_status_on_client.status = &s->code;
	ops[0].data.recv_status_on_client.status_details = &s->details;
	if (grpc_call_start_batch(s->call, ops, 1, &s->tag_status, NULL) != GRPC_CALL_OK) {
		btr_stream_close(s);
		return -EIO;
	}
	s->status_pending = true;
	*out = s;
	return 0;
}

int btr_stream_open(btr_conn *c, int api, const char *method, const ProtobufCMessage *req,
		    const char *routing, btr_stream **out)
{
	int err = 0;
	*out = NULL;
	if (api != BTR_DATA && api != BTR_ADMIN)
		return -EINVAL;
	grpc_byte_buffer *bb = pack(req, &err);
	return stream_open(c, api, method, bb, err, routing, out);
}

int btr_stream_open_bytes(btr_conn *c, int api, const char *method, const void *req, size_t len,
			  const char *routing, btr_stream **out)
{
	int err = -ENOMEM;
	*out = NULL;
	if (api != BTR_DATA && api != BTR_ADMIN)
		return -EINVAL;
	if (len > BTR_MAX_MESSAGE)
		return -EMSGSIZE;
	grpc_slice sl = grpc_slice_from_copied_buffer(req, len);
	grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&sl, 1);
	grpc_slice_unref(sl);
	return stream_open(c, api, method, bb, err, routing, out);
}

/* The stream has ended (no more messages, or given up on): waits for its status and records it. */
static int stream_finish(btr_stream *s, gpr_timespec deadline)
{
	if (s->status_pending) {
		pluck_or_cancel(s->cq, s->call, &s->tag_status, deadline, GRPC_STATUS_DEADLINE_EXCEEDED,
				"no status within the idle limit");
		s->status_pending = false;
	}
	status_from_slice(&s->st, s->code, s->details);
	explain_tls(s->conn, &s->st);
	if (s->code == GRPC_STATUS_UNAVAILABLE)
		grpc_channel_reset_connect_backoff(s->ch);
	s->end = btr_errno(s->code);
	return s->end;
}

/* Receive the stream's next message into s->reply: 1, or what the stream ended with. */
static int recv_next(btr_stream *s)
{
	if (s->end != 1)
		return s->end;
	gpr_timespec deadline = after_ms(s->conn->idle_ms);
	static const char idle_why[] = "no message within the idle limit";

	if (s->send_pending) {
		if (pluck_or_cancel(s->cq, s->call, &s->tag_send, deadline, GRPC_STATUS_DEADLINE_EXCEEDED, idle_why))
			went_quiet(s->conn);
		s->send_pending = false;
	}
	if (!s->recv_pending) {
		grpc_op ops[2];
		memset(ops, 0, sizeof ops);
		size_t n = 0;
		if (!s->started_recv) {
			ops[n].op = GRPC_OP_RECV_INITIAL_METADATA;
			ops[n++].data.recv_initial_metadata.recv_initial_metadata = &s->initial;
		}
		ops[n].op = GRPC_OP_RECV_MESSAGE;
		ops[n++].data.recv_message.recv_message = &s->reply;
		if (grpc_call_start_batch(s->call, ops, n, &s->tag_recv, NULL) != GRPC_CALL_OK) {
			grpc_call_cancel_with_status(s->call, GRPC_STATUS_INTERNAL,
						     "gRPC refused to receive a message", NULL);
			return stream_finish(s, gpr_inf_future(GPR_CLOCK_MONOTONIC));
		}
		s->started_recv = true;
		s->recv_pending = true;
	}
	if (pluck_or_cancel(s->cq, s->call, &s->tag_recv, deadline, GRPC_STATUS_DEADLINE_EXCEEDED, idle_why))
		went_quiet(s->conn);
	s->recv_pending = false;
	if (!s->reply)
		return stream_finish(s, after_ms(s->conn->idle_ms));
	answered(s->conn);
	count_received(s->conn, grpc_byte_buffer_length(s->reply));
	return 1;
}

/* A message that does not decode: the call is cancelled, and the error is ours. */
static int undecodable(btr_stream *s)
{
	grpc_call_cancel_with_status(s->call, GRPC_STATUS_INTERNAL, "a message does not decode", NULL);
	stream_finish(s, gpr_inf_future(GPR_CLOCK_MONOTONIC));
	/* the server may have ended the call first with its own status; this error is ours */
	status_set(&s->st, GRPC_STATUS_INTERNAL, "a message does not decode");
	s->end = -EIO;
	return -EIO;
}

int btr_stream_next(btr_stream *s, const ProtobufCMessageDescriptor *desc, ProtobufCMessage **msg)
{
	int rc;
	*msg = NULL;
	if ((rc = recv_next(s)) != 1)
		return rc;
	*msg = unpack(s->reply, desc);
	grpc_byte_buffer_destroy(s->reply);
	s->reply = NULL;
	return *msg ? 1 : undecodable(s);
}

int btr_stream_next_bytes(btr_stream *s, const uint8_t **data, size_t *len)
{
	int rc;
	*data = NULL;
	*len = 0;
	if (s->flat_held) {
		grpc_slice_unref(s->flat);
		s->flat_held = false;
	}
	if ((rc = recv_next(s)) != 1)
		return rc;
	grpc_byte_buffer *bb = s->reply;
	s->reply = NULL;
	if (!flatten(bb, &s->flat)) {
		grpc_byte_buffer_destroy(bb);
		return undecodable(s);
	}
	grpc_byte_buffer_destroy(bb);
	s->flat_held = true;
	*data = GRPC_SLICE_START_PTR(s->flat);
	*len = GRPC_SLICE_LENGTH(s->flat);
	return 1;
}

int btr_stream_bad_message(btr_stream *s)
{
	return undecodable(s);
}

const btr_status *btr_stream_status(const btr_stream *s)
{
	return &s->st;
}

void btr_stream_close(btr_stream *s)
{
	if (!s)
		return;
	if (s->call) {
		if (s->send_pending || s->recv_pending || s->status_pending)
			grpc_call_cancel(s->call, NULL);
		gpr_timespec inf = gpr_inf_future(GPR_CLOCK_MONOTONIC);
		if (s->send_pending)
			grpc_completion_queue_pluck(s->cq, &s->tag_send, inf, NULL);
		if (s->recv_pending)
			grpc_completion_queue_pluck(s->cq, &s->tag_recv, inf, NULL);
		if (s->status_pending)
			grpc_completion_queue_pluck(s->cq, &s->tag_status, inf, NULL);
		grpc_call_unref(s->call);
	}
	if (s->cq)
		cq_destroy(s->cq);
	if (s->reply)
		grpc_byte_buffer_destroy(s->reply);
	if (s->flat_held)
		grpc_slice_unref(s->flat);
	if (s->req)
		grpc_byte_buffer_destroy(s->req);
	md_release(s->md, s->nmd);
	grpc_slice_unref(s->details);
	grpc_metadata_array_destroy(&s->initial);
	grpc_metadata_array_destroy(&s->trailing);
	free(s);
}
