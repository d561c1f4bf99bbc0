/* btr.h — the gRPC transport of the Bigtable backend: channels to the Data and Admin APIs, unary calls with
 * deadlines and retries, server-streaming calls; protobuf-c messages in and out, negative errno back.
 * Built on the gRPC core C API. Library code: it never prints (gRPC's own log goes where GRPC_VERBOSITY
 * and gRPC's defaults send it).
 *
 * Threads: a btr_conn is shared. Every call below may run in several threads at once on one conn, except
 * btr_set_deadline_ms (before sharing) and btr_close (after every call and stream has ended). A btr_stream
 * belongs to one thread at a time.
 *
 * gRPC's global state: btr_connect calls grpc_init() and btr_close grpc_shutdown(); gRPC counts them, so
 * its threads stop when the last conn of the process closes, and a later btr_connect starts them again.
 * fork(): gRPC's threads do not cross it. A process may fork after its last btr_close (which waits until
 * gRPC has stopped), never while a conn is open, and a child must not use a conn of its parent.
 */
#ifndef CELLFS_BTR_H
#define CELLFS_BTR_H

#include <stddef.h>
#include <stdint.h>
#include <grpc/status.h>
#include <protobuf-c/protobuf-c.h>

#include "btr_auth.h"

typedef struct btr_conn btr_conn;
typedef struct btr_stream btr_stream;

/* Which API a call goes to (its channel and its default deadline). */
enum { BTR_DATA = 0, BTR_ADMIN = 1 };

/* Flags of btr_unary. BTR_IDEMPOTENT: the call may be sent again, so UNAVAILABLE, ABORTED and a
 * DEADLINE_EXCEEDED that leaves time are retried (btr_unary says how). Never set it for ReadModifyWrite,
 * a SetCell with the server's timestamp (-1) or AddToCell; CheckAndMutate only if both branches are. */
enum { BTR_IDEMPOTENT = 1u };

/* Default deadlines, in ms: of a unary data call, of a unary admin call, and the idle limit of a stream
 * (btr_stream_next). */
#define BTR_DATA_DEADLINE_MS 30000u
#define BTR_ADMIN_DEADLINE_MS 60000u
/* The largest message sent or received (channel arguments; the Data API's own request limit too). */
#define BTR_MAX_MESSAGE (256u << 20)
/* Enough for any resource name or routing header btr builds: btr_table_name, btr_routing. */
#define BTR_NAME_MAX 1024u

/* A call's outcome as the server (or gRPC) gave it: the gRPC status code and its message (truncated to
 * fit, always NUL-terminated; "" on success), and where the call went: "host:port" of its channel
 * (btr_endpoint), or NULL before a call filled it. */
typedef struct btr_status {
	grpc_status_code code;
	char message[512];
	const char *endpoint;
	const char *method; /* the call's method's name ("ReadRows"), or NULL before a call filled it */
	const char *who;    /* the credential it was made with (btr_who), or NULL */
} btr_status;


/* btr_connect — channels to instance projects/PROJECT/instances/INSTANCE.
 * With $BIGTABLE_EMULATOR_HOST=host:port set: one plaintext channel to it for both APIs, no credentials.
 * Otherwise TLS to bigtable.googleapis.com:443 (data) and bigtableadmin.googleapis.com:443 (admin) with
 * Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's, or the metadata server).
 * Channels connect lazily: a dead endpoint shows at the first call, not here.
 * APP_PROFILE may be NULL or "" (the instance's default profile); btr keeps it for btr_app_profile and
 * btr_routing, but a request's app_profile_id field is the caller's to fill.
 * Deadlines start at BTR_DATA_DEADLINE_MS / BTR_ADMIN_DEADLINE_MS, the stream idle limit at
 * BTR_DATA_DEADLINE_MS; $CELLFS_BT_DEADLINE_MS=N (a positive integer) sets all three to N ms.
 * Returns 0 and *OUT (free with btr_close), or -EINVAL (PROJECT or INSTANCE empty or containing '/', a
 * malformed $CELLFS_BT_DEADLINE_MS), -EACCES (no Application Default Credentials found), -ENOMEM, -EIO (a
 * channel could not be made). */
int btr_connect(const char *project, const char *instance, const char *app_profile, btr_conn **out);

/* btr_connect_with — btr_connect with O's endpoints, TLS roots and credentials (btr_auth_channel says in
 * which order credentials are looked for; O may be NULL). The same errors, and -EINVAL for a credentials
 * or roots file that cannot be used; WHY (WHYN bytes, may be NULL) then says what was wrong. */
int btr_connect_with(const char *project, const char *instance, const btr_opts *o, btr_conn **out, char *why,
		     size_t whyn);

/* btr_close — destroys the channels (cancelling nothing: no call or stream may be running) and frees C.
 * Closing the last conn of the process waits until gRPC has stopped (about a millisecond; at most 2 s,
 * when a connection attempt to a peer that does not answer is still under way, or something else in the
 * process keeps gRPC started). Accepts NULL. */
void btr_close(btr_conn *c);

/* btr_set_deadline_ms — from now on unary calls of both APIs get MS (> 0) as their deadline and streams
 * MS as their idle limit. Not thread-safe: call it before sharing C. */
void btr_set_deadline_ms(btr_conn *c, unsigned ms);

/* btr_quiet — 1 while C is quiet, else 0. A call that waited its whole deadline without an answer (a
 * unary call ending DEADLINE_EXCEEDED, or UNAVAILABLE with no time left for another attempt; a stream's
 * message not arriving within the idle limit) makes C quiet for 3 s (at most the idle limit); any answer
 * of the service ends it. While quiet, btr_unary fails at once (-EIO, DEADLINE_EXCEEDED, a message
 * saying so) and btr_stream_open gives a stream that has already ended so, without sending anything:
 * requests that queue behind one that timed out (the kernel sends a FUSE daemon one lookup of a name at
 * a time) fail within their own deadline rather than waiting one each. Callers that resume or retry by
 * themselves stop when it is 1. Thread-safe. */
int btr_quiet(btr_conn *c);

/* btr_count_* — what C's calls cost, for btr_counters_text: a read's resume after a broken stream (a
 * retry the caller made: btr_unary counts its own), and rows and cells a read took from the service.
 * Thread-safe. */
void btr_count_retry(btr_conn *c);
void btr_count_rows(btr_conn *c, uint64_t rows, uint64_t cells);

/* btr_counters_text — C's counters since btr_connect, one "bigtable.NAME VALUE\n" line each: calls made,
 * by method ("bigtable.calls.ReadRows": every attempt of a unary call, every stream opened; none for a
 * call failed at once while quiet), in the methods' name order, then retries, messages_received,
 * bytes_received, bytes_sent (serialized messages), rows_received, cells_received. *OUT (NUL-terminated,
 * *LEN bytes before the NUL) is the caller's to free(). Returns 0 or -ENOMEM. Thread-safe. */
int btr_counters_text(btr_conn *c, char **out, size_t *len);

/* "projects/P/instances/I", valid until btr_close. */
const char *btr_instance_name(const btr_conn *c);
/* The app profile given to btr_connect, "" for none; valid until btr_close. */
const char *btr_app_profile(const btr_conn *c);
/* The credential C's calls are made with, for messages ("service account a@p.iam.gserviceaccount.com,
 * key /k.json", "the access token given"; "no credentials (the emulator)"); valid until btr_close. */
const char *btr_who(const btr_conn *c);
/* Whether C talks to an emulator ($BIGTABLE_EMULATOR_HOST): 1 or 0. */
int btr_is_emulator(const btr_conn *c);
/* Where API's calls go, "host:port" ($BIGTABLE_EMULATOR_HOST's value, or the service's endpoint), for
 * messages; valid until btr_close. */
const char *btr_endpoint(const btr_conn *c, int api);

/* btr_table_name — writes "projects/P/instances/I/tables/TABLE" to BUF (SIZE bytes, NUL-terminated).
 * Returns 0, or -ENAMETOOLONG when it does not fit (BUF then holds ""). BTR_NAME_MAX always fits a table
 * id Bigtable accepts (at most 50 bytes). */
int btr_table_name(const btr_conn *c, const char *table, char *buf, size_t size);

/* btr_routing — writes an x-goog-request-params value to BUF: "KEY=VALUE" with VALUE url-encoded (every
 * byte but A-Z a-z 0-9 - _ . ~ as %XX), and for API BTR_DATA, when C has an app profile,
 * "&app_profile_id=PROFILE" after it. KEY is the request's resource field: "table_name" for the Data API
 * calls on a table, "name" (GetTable, DeleteTable, ModifyColumnFamilies, DropRowRange) or "parent"
 * (CreateTable, ListTables) for the Admin API. Returns 0, or -ENAMETOOLONG (BUF then holds ""). */
int btr_routing(const btr_conn *c, int api, const char *key, const char *value, char *buf, size_t size);

/* btr_unary — one unary call: sends REQ to METHOD ("/google.bigtable.v2.Bigtable/MutateRow",
 * "/google.bigtable.admin.v2.BigtableTableAdmin/GetTable", ...) over API's channel with ROUTING (from
 * btr_routing; NULL or "" sends no routing header) as x-goog-request-params, and decodes the reply as
 * RESP_DESC.
 * Deadline: the call as a whole, retries included, ends within the conn's deadline for API (the data
 * deadline for the Admin API's reads, GetTable and ListTables: they answer a mount's lookups). Without
 * BTR_IDEMPOTENT there is one attempt. With it, an attempt that fails with UNAVAILABLE, ABORTED or
 * DEADLINE_EXCEEDED is sent again after an exponential backoff with jitter (50 ms doubling to 2 s), while
 * the backoff ends before the deadline; the last attempt's status is returned.
 * Returns 0 and *RESP (caller frees with protobuf_c_message_free_unpacked(*RESP, NULL)), or a negative
 * errno (*RESP is then NULL): the status as btr_errno maps it, -EIO for a reply that does not decode,
 * -EMSGSIZE for a REQ over BTR_MAX_MESSAGE (nothing sent), -EIO at once while C is quiet (btr_quiet),
 * -EINVAL for an API other than BTR_DATA and
 * BTR_ADMIN. ST, if not NULL, receives the status (for a reply that does not decode: INTERNAL and a
 * message saying so). */
int btr_unary(btr_conn *c, int api, const char *method, const ProtobufCMessage *req,
	      const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **resp,
	      const char *routing, unsigned flags, btr_status *st);

/* btr_stream_open — starts a server-streaming call (ReadRows, MutateRows, SampleRowKeys): sends REQ to
 * METHOD over API's channel with ROUTING as in btr_unary. Never retried: after an error the caller
 * decides whether to open another (btr_retryable), e.g. resuming a read after its last committed row.
 * The stream has no overall deadline (a long table read must not time out); each btr_stream_next waits at
 * most the conn's idle limit for its message.
 * Returns 0 and *OUT (free with btr_stream_close), or -EMSGSIZE (REQ over BTR_MAX_MESSAGE), -EINVAL (API),
 * -ENOMEM, -EIO (gRPC refused to start the call). Errors of the call itself (a dead endpoint) come from
 * btr_stream_next. */
int btr_stream_open(btr_conn *c, int api, const char *method, const ProtobufCMessage *req,
		    const char *routing, btr_stream **out);

/* btr_stream_open_bytes — the same, sending the LEN bytes at REQ (copied), a message encoded by the
 * caller (btw.h). Errors as btr_stream_open's. */
int btr_stream_open_bytes(btr_conn *c, int api, const char *method, const void *req, size_t len,
			  const char *routing, btr_stream **out);

/* btr_stream_next — the stream's next message, decoded as DESC.
 * Returns 1 and *MSG (caller frees with protobuf_c_message_free_unpacked(*MSG, NULL)); 0 at the end of a
 * stream that ended with status OK; or a negative errno as btr_errno maps its error status, -EIO for a
 * message that does not decode (the call is then cancelled). When no message arrives within the idle
 * limit, the call is cancelled and ends with DEADLINE_EXCEEDED (-EIO). *MSG is NULL unless 1 is returned.
 * After an end (0 or an error), every further call returns the same. */
int btr_stream_next(btr_stream *s, const ProtobufCMessageDescriptor *desc, ProtobufCMessage **msg);

/* btr_stream_next_bytes — the stream's next message undecoded, for a caller that decodes it itself: 1 and
 * its LEN bytes at *DATA, held by S until the next btr_stream_next_bytes or btr_stream_close; the other
 * returns as btr_stream_next's (*DATA NULL, *LEN 0). */
int btr_stream_next_bytes(btr_stream *s, const uint8_t **data, size_t *len);

/* btr_stream_bad_message — the caller found a message it was given undecodable: cancels the call and
 * ends the stream with INTERNAL "a message does not decode". Returns -EIO, as every later
 * btr_stream_next does. */
int btr_stream_bad_message(btr_stream *s);

/* The status a stream ended with (code GRPC_STATUS_OK and "" while it runs); valid until
 * btr_stream_close. */
const btr_status *btr_stream_status(const btr_stream *s);

/* btr_stream_close — cancels a stream that has not ended, waits for gRPC to let go of it, frees it.
 * Accepts NULL. */
void btr_stream_close(btr_stream *s);

/* btr_errno — the negative errno of a gRPC status code: OK 0; NOT_FOUND -ENOENT; ALREADY_EXISTS -EEXIST;
 * INVALID_ARGUMENT, OUT_OF_RANGE and FAILED_PRECONDITION -EINVAL; PERMISSION_DENIED and UNAUTHENTICATED
 * -EACCES; RESOURCE_EXHAUSTED (a quota, a rate limit) -EAGAIN; UNIMPLEMENTED -EOPNOTSUPP; every other code
 * (UNAVAILABLE, DEADLINE_EXCEEDED, ABORTED, CANCELLED, INTERNAL, UNKNOWN, DATA_LOSS) -EIO. */
int btr_errno(grpc_status_code code);

/* btr_retryable — 1 for a code worth another attempt of an idempotent call or a resumed stream
 * (UNAVAILABLE, ABORTED, DEADLINE_EXCEEDED), else 0. */
int btr_retryable(grpc_status_code code);

/* btr_status_retryable — btr_retryable of ST's code, but 0 for a connection the TLS handshake refused
 * (the server's certificate does not verify): that fails the same way until the settings change. */
int btr_status_retryable(const btr_status *st);

/* btr_backoff_ms — how long to wait before attempt ATTEMPT + 1 (ATTEMPT counts from 1): 50 ms doubling
 * per attempt up to 2 s, a random point in the upper half of that. Thread-safe. */
unsigned btr_backoff_ms(unsigned attempt);

/* btr_code_name — "UNAVAILABLE", "NOT_FOUND", ... ("UNKNOWN" for a code gRPC does not define); static. */
const char *btr_code_name(grpc_status_code code);

#endif
