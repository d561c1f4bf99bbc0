/* cellstore.h — the public API of the cellfs wide-column store.
 *
 * A store is a directory holding one LMDB environment. It holds tables; a table has column families
 * (each with a GC policy in cbt's syntax) and rows sorted bytewise by key; a row holds cells addressed by
 * (family, qualifier, timestamp). Nothing here exposes LMDB or zstd.
 *
 * Conventions, for every function below unless it says otherwise:
 * - Return >= 0 on success, a negative errno on failure.
 * - -ENOMEM: out of memory.  -EIO: the store is corrupt or an I/O error occurred.
 *   -ENOSPC: the disk (or the store's map) is full.  -E2BIG: a write transaction grew too large for
 *   LMDB (hundreds of MiB of changed pages): commit in smaller batches.
 * - Byte strings are passed as cs_bytes, borrowed for the duration of the call.
 * - Memory this API returns is owned by the caller unless the comment says "borrowed".
 * - Writes happen inside a write transaction (cs_txn_begin without CS_TXN_RDONLY). Validation errors
 *   (-EINVAL, -ENOENT, -EEXIST, -ENAMETOOLONG, -EFBIG, -EXDEV) are detected before anything is written
 *   and leave the transaction usable. Any other error leaves it failed: cs_txn_commit() then returns
 *   that error and nothing of the transaction is stored. So a row mutation is all-or-nothing, and so is
 *   a transaction.
 */
#ifndef CELLSTORE_H
#define CELLSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CS_MAX_ROW_KEY 4096             /* bytes; row keys are 1..CS_MAX_ROW_KEY bytes */
#define CS_MAX_QUALIFIER 16384          /* bytes; qualifiers are 0..CS_MAX_QUALIFIER bytes */
#define CS_MAX_FAMILY 64                /* family names: [_a-zA-Z0-9][-_.a-zA-Z0-9]*, 1..64 bytes */
#define CS_MAX_TABLE 50                 /* table names: [_a-zA-Z0-9][-_.a-zA-Z0-9]*, 1..50 bytes */
#define CS_DEFAULT_MAX_VALUE (100u << 20) /* default value size limit, bytes */
#define CS_TS_NOW INT64_MIN             /* as a cell timestamp: "now" (cs_now_us()) */
#define CS_TS_MAX INT64_MAX             /* as the end of a timestamp range: unbounded */
#define CS_DEFAULT_DELIM '#'

typedef struct cs_bytes {
	const void *data;
	size_t len;
} cs_bytes;

#define CS_BYTES(p, n) ((cs_bytes){ (p), (n) })
#define CS_STR(s) ((cs_bytes){ (s), strlen(s) })

typedef struct cs_store cs_store;
typedef struct cs_txn cs_txn;
typedef struct cs_scan cs_scan;

/* ---- Store ---------------------------------------------------------------------------------------- */

enum {
	CS_OPEN_RDONLY = 1 << 0, /* open read-only: every write returns -EROFS */
	CS_OPEN_CREATE = 1 << 1, /* create the directory (0700) and store files (0600) if missing */
	CS_OPEN_BG_SYNC = 1 << 2, /* the caller makes the sync points when cs_store_sync_due() says (a
	                           * thread of its own), so that commits do not wait for the disk */
	CS_OPEN_CACHE = 1 << 3,   /* the caller reads the same rows again and again (the mount): a store
	                           * without CS_CAP_WATCH may keep what it read for version_ttl_ms (its own
	                           * writes still show at once), and read a listed range whole in advance
	                           * (cs_open_opts.prefetch_bytes) */
	CS_OPEN_ASOF = 1 << 4,    /* an as-of view (cs_open_opts.asof): read-only, and every read through the
	                           * store (scans, dumps, stats, tables' creation times) sees it as it was at
	                           * that time: only cells whose timestamps are at or before it */
};

/* A remote store's connection settings, as cbt's global flags and its ~/.cbtrc name them. Every member
 * is NULL or a string of the struct's own (cs_remote_set() copies; cs_remote_clear() frees). What a
 * member means is the backend's (store/bigtable/README.md): PROJECT and INSTANCE name the instance
 * (cellctl and cellfs make bigtable://PROJECT/INSTANCE of them); CREDS a credentials JSON file;
 * ACCESS_TOKEN a bearer token; DATA_ENDPOINT and ADMIN_ENDPOINT host:port; CERT_FILE the TLS roots (PEM);
 * USER_AGENT; APP_PROFILE; TIMEOUT a duration as cbt's -timeout (cs_duration_parse()). */
typedef struct cs_remote {
	char *project, *instance, *creds, *access_token, *data_endpoint, *admin_endpoint, *cert_file,
		*user_agent, *app_profile, *timeout;
} cs_remote;

/* cs_remote_set — sets KEY of R to VALUE (a copy; replacing what it held). KEY is cbt's flag or .cbtrc
 * name without its dash ("data-endpoint"), or with '_' for '-' ("data_endpoint", the mount's -o form):
 * project, instance, creds, access-token, data-endpoint, admin-endpoint, cert-file, user-agent,
 * app-profile, timeout. Returns 0, or -EINVAL (a KEY not among them, an empty VALUE, a timeout that is
 * not a duration) with *WHY (may be NULL) a static sentence, or -ENOMEM. */
int cs_remote_set(cs_remote *r, const char *key, const char *value, const char **why);

/* cs_remote_key — the Ith key cs_remote_set() takes, in cbt's spelling ("project", ..., "timeout"), or
 * NULL for I past the last: the one list of them (cellctl's flags are made of it). A static string. */
const char *cs_remote_key(size_t i);

/* cs_remote_cbtrc — reads cbt's config file PATH (NULL: $CBTRC, else $HOME/.cbtrc): lines
 * "key = value" of cs_remote_set()'s keys (blank lines and lines starting with '#' skipped), and sets each
 * member of R that is still NULL (the flags given win over the file). Returns 0; -ENOENT when the file
 * does not exist (R unchanged); -EINVAL (a line that is not key = value, or a key or value
 * cs_remote_set() refuses) or another -errno (the file cannot be read), with WHY (WHYN bytes) naming the
 * file, the line and what is wrong (R then unchanged too); -ENOMEM. */
int cs_remote_cbtrc(cs_remote *r, const char *path, char *why, size_t whyn);

/* cs_remote_clear — frees R's strings and sets them to NULL. */
void cs_remote_clear(cs_remote *r);

typedef struct cs_open_opts {
	unsigned flags;     /* CS_OPEN_* */
	uint64_t max_value; /* value size limit in bytes; 0 = CS_DEFAULT_MAX_VALUE */
	unsigned version_ttl_ms; /* a store without CS_CAP_WATCH opened CS_OPEN_CACHE: how long what it read
	                          * is kept, each row and range from when it was read (0 = 5000); callers
	                          * that cache what they read keep it no longer (cs_store_version() does
	                          * not tell them of other clients' writes) */
	int64_t asof;            /* CS_OPEN_ASOF: the time, µs since the epoch (>= 0; cs_time_parse()) */
	unsigned deadline_ms;    /* a remote store: how long each call to the service may take, in ms,
	                          * retries included (a stream: the wait for each message); 0 = the
	                          * backend's default ($CELLFS_BT_DEADLINE_MS, else 30 s; schema changes
	                          * 60 s); cs_duration_parse() reads cbt's -timeout syntax. Local stores
	                          * ignore it. */
	uint64_t prefetch_bytes; /* a store without CS_CAP_WATCH opened CS_OPEN_CACHE: the memory what it
	                          * keeps may take (0 = CS_DEFAULT_PREFETCH); a key range a scan asks
	                          * for whose rows take at most half of it is read whole in one call
	                          * and later scans inside it are answered from memory */
	const cs_remote *remote; /* a remote store: how to reach it (NULL: its defaults); its PROJECT,
	                          * INSTANCE and TIMEOUT are not read (the name and deadline_ms say them);
	                          * APP_PROFILE is the name's ?app_profile= when the name has none.
	                          * Local stores ignore it */
} cs_open_opts;

#define CS_DEFAULT_PREFETCH (64ull << 20)

/* Open the store in directory DIR, or, for a DIR of the form bigtable://PROJECT/INSTANCE[?app_profile=ID],
 * the Cloud Bigtable instance (store/bigtable/README.md: with $BIGTABLE_EMULATOR_HOST set, the emulator
 * there; else the service, with Application Default Credentials). Such a store lacks some capabilities
 * (cs_store_caps()); its calls may also fail with -EIO when the service cannot be reached in time, with
 * the service's own words in cs_last_error(). -EPROTONOSUPPORT: no backend for the name's scheme (this
 * build has none, or its module is not installed; cs_last_error() says which).
 * Open the store in directory DIR. OPTS may be NULL (defaults, no CS_OPEN_CREATE).
 * Several processes may have one store open at once; writers are serialised. The first open after a
 * reboot gives the store back its last synced state if commits after it were lost (store/lmdb/anchor.h).
 * A writable open of a store on tmpfs or ramfs waits for a commit in progress in another process (it
 * sizes the data file under the writer lock), and installs cs_store_catch_faults()'s handlers: its
 * commits are written into a map of the file, which grows when a write faults past its end (SIGBUS).
 * They must stay installed while the store is written; one that replaced them meanwhile is replaced in
 * turn at the next write transaction, and handed the faults that are not the store's.
 * CS_OPEN_ASOF opens the store read-only (write transactions are -EROFS) as of OPTS->asof: every scan of
 * it returns only cells with timestamps at or before that time (its ts_end is lowered to asof + 1), so a
 * column's newest cell is its newest then, and a row or family whose cells are all newer is not there.
 * It is the store as it is now, seen back to that time, not a snapshot of the past: cells deleted,
 * dropped or collected by a GC policy since are gone (policies are judged now, as for every read:
 * under maxversions=1 a column whose newest cell is newer than ASOF shows nothing older either), and
 * the schema is today's, but no table's creation time is later than ASOF. cs_table_stats_get() counts
 * only such cells; cs_store_compact(), which would copy everything, is -EOPNOTSUPP.
 * A DIR that starts like a store URL without being one (a scheme, ':' and '/', as bigtable:/p/i or
 * s3:/b; or bigtable: in any case, as bigtable:p/i or Bigtable://p/i) is -EINVAL, with cs_last_error()
 * saying why, and nothing is created: a typo must not make a directory of that name ("./bigtable:/x"
 * names one; "backup:2024", a colon without a slash after it, is a directory's name too).
 * Errors: -ENOENT (no store there and no CS_OPEN_CREATE), -ENOTEMPTY (creating a store in a directory
 *         that holds other files), -ENOTDIR, -EACCES, -EIO (DIR is not a valid store), -EINVAL
 *         (CS_OPEN_ASOF with a negative asof, or with CS_OPEN_CREATE; a name like a URL, above), -ENOMEM.
 *         On success *OUT is the caller's; close it with cs_store_close(). */
int cs_store_open(const char *dir, const cs_open_opts *opts, cs_store **out);

/* What NAME, given as a store, names: 1 a remote store (SCHEME://...), 0 a directory, or -EINVAL when it
 * starts like a store URL without being one (cs_store_open() refuses it; cs_last_error() says why), for
 * a caller that resolves a directory's path itself before opening it (cellfs). Opens nothing. */
int cs_store_name_kind(const char *name);

/* Parse TEXT as a point in time for CS_OPEN_ASOF, into *US (µs since the epoch): RFC 3339
 * ("2026-11-26T05:34:38Z", "2026-11-26 06:34:38.5+01:00": 'T', 't' or a space between date and time,
 * 'Z', 'z' or a numeric offset ±HH:MM, an optional fraction of any length), or a decimal integer of
 * microseconds since the epoch ("1795671278000000"). A fraction finer than a microsecond is truncated,
 * which is exact for "at or before": a cell's timestamp (whole µs) is at or before TEXT's instant if and
 * only if it is at or before the truncated one. The second 60 (a leap second) and times before
 * 1970-01-01T00:00:00Z (no cell is older) are refused. Reads no store, prints nothing.
 * Errors: -EINVAL: *WHY (if WHY is not NULL) gets a static one-line reason ("month out of range",
 * "no time zone: ...", "before the epoch ..."), for a message that also names TEXT. *US is then unset. */
int cs_time_parse(const char *text, int64_t *us, const char **why);

/* Parse TEXT as a duration in Go's syntax (cbt's -timeout): a sequence of decimal numbers, each with an
 * optional fraction and a unit, "ns", "us" (or "µs"), "ms", "s", "m" or "h" ("30s", "500ms", "1m30s",
 * "1.5h"), into *MS, rounded up to whole milliseconds. For cs_open_opts.deadline_ms, so it must be more
 * than 0 and at most 24 h. Prints nothing.
 * Errors: -EINVAL: *WHY (if WHY is not NULL) gets a static one-line reason ("a number needs a unit",
 * "zero: a deadline must be positive", "over 24h", ...), for a message that also names TEXT. */
int cs_duration_parse(const char *text, unsigned *ms, const char **why);

/* Why this thread's last call that failed on a remote store failed, in the service's own words, or why
 * its last cs_store_open() of a remote store failed; NULL when there is nothing to add to the errno (a
 * local store's calls never set it). Borrowed: valid until this thread's next call into the store. */
const char *cs_last_error(void);

/* Close a store. Every transaction and scan on it must be finished. What CS_TXN_DEFER transactions queued
 * is sent first, and waited for (a failure then is lost: cs_store_sync() first to see it). Accepts NULL. */
void cs_store_close(cs_store *st);

/* Flush committed transactions (every process's) to stable storage and anchor them, so they survive a
 * power loss. (A committed transaction always survives a crash of the process, but a CS_TXN_DEFER one on
 * a store without CS_CAP_TXN.) After a power loss the store opens as of its last sync, whole: later
 * commits are dropped (store/README.md, "Durability"). A store without CS_CAP_SYNC (Bigtable) has only
 * what CS_TXN_DEFER transactions queued to send: sent, and waited for; a failure of those is returned
 * (as described at CS_TXN_DEFER).
 * Errors: -EIO, -ENOSPC, -EROFS, -ENOMEM; a service's errors. */
int cs_store_sync(cs_store *st);

/* For a process that keeps ST open and writes now and then (the daemon): if it has committed nothing
 * since its last sync point, let go of the snapshot it keeps pinned there (store/README.md,
 * "Durability"), so that other processes' commits may reuse the pages freed after it, where otherwise
 * the file grows with everything they rewrite until this process's next sync point. Its next write makes
 * a sync point first. Returns whether this process's commits are all synced (true for a read-only
 * store): when false, nothing was let go, and cs_store_sync() has work to do. Cheap when there is
 * nothing to let go of (no lock, no system call). */
bool cs_store_unpin(cs_store *st);

/* Let go of the store's pages this process has mapped: a local store's file is mapped whole, and every page
 * a scan touched stays in the process's resident memory (RSS) though it belongs to the page cache. They
 * stay in the page cache; the next access maps each again (a minor fault). For a long-running reader
 * whose RSS should show its own memory. Returns 0 or a negative errno; 0 for a remote store. */
int cs_store_release_pages(cs_store *st);

/* Whether a sync point is due (store/README.md, "Durability"): this process has committed enough since
 * its last sync for cs_store_sync() to be worth its time. A store opened with CS_OPEN_BG_SYNC makes them
 * in commits only when far overdue; its owner waits for them with cs_store_sync_wait() or polls this
 * (cheap: no system call). */
bool cs_store_sync_due(cs_store *st);

/* For the CS_OPEN_BG_SYNC owner's thread: wait up to MS milliseconds for a commit in this process to find
 * a sync point due, and return cs_store_sync_due() (false on a timeout with none due). Commits tell it
 * at once, so sync points come every few dozen commits when the disk is fast (a tick would let the
 * snapshot pinned between them hold thousands). */
bool cs_store_sync_wait(cs_store *st, unsigned ms);

/* For processes that read stores they cannot trust (the daemon, cellctl): install SIGSEGV and SIGBUS
 * handlers so that a fault inside LMDB, which follows a damaged store's page references unchecked,
 * fails the call that met it with -EIO instead of killing the process. The transaction is then marked
 * damaged: every later read in it is -EIO, commit is -EIO (nothing written); abort it (or renew a
 * read-only one). A fault anywhere else goes to what handled the signal before (by default the
 * process dies as usual). A writable cs_store_open() in memory installs them itself. Errors: -EINVAL. */
int cs_store_catch_faults(void);

/* The default store's directory: $CELLFS_DB if set and non-empty, else $XDG_DATA_HOME/cellfs/default,
 * else $HOME/.local/share/cellfs/default. Errors: -ENOENT (no HOME), -ENOMEM. Caller frees *OUT. */
int cs_default_path(char **out);

/* Microseconds since the epoch, now. */
int64_t cs_now_us(void);

/* The value size limit the store was opened with. */
uint64_t cs_store_max_value(const cs_store *st);

/* What a store can do (cs_store_caps()). A store on the local disk (LMDB) can do all of it; a store on
 * Cloud Bigtable (a STORE named bigtable://PROJECT/INSTANCE) lacks the flags its comment names. Callers
 * ask for the capability, never for the kind of store. */
enum {
	CS_CAP_TXN = 1 << 0,          /* a write transaction is atomic across rows and abort undoes it; a read
	                               * transaction is a snapshot. Without it (Bigtable) each call that writes
	                               * is applied when made, atomically per row; commit reports the first
	                               * error, abort undoes nothing, and reads see the newest data */
	CS_CAP_MOVE = 1 << 1,         /* cs_move_prefix() (else -EXDEV) */
	CS_CAP_TABLE_RENAME = 1 << 2, /* cs_table_rename() (else -EXDEV) */
	CS_CAP_TS_MICROS = 1 << 3,    /* cell timestamps of any microsecond; without it (Bigtable keeps whole
	                               * milliseconds) a timestamp not a multiple of 1000 is -EINVAL */
	CS_CAP_WATCH = 1 << 4,        /* cs_store_version() changes with every process's writes; without it
	                               * only with this process's, and every cs_open_opts.version_ttl_ms */
	CS_CAP_MAINT = 1 << 5,        /* cs_gc(), cs_verify(), cs_store_compact(), cs_store_size(),
	                               * cs_restore(), cs_table_stats_get() (else -EOPNOTSUPP) */
	CS_CAP_SYNC = 1 << 6,         /* cs_store_sync() has work to do; without it every commit is already
	                               * durable when it returns (the service acknowledged it), but for what
	                               * CS_TXN_DEFER transactions queued */
	CS_CAP_KEYVIZ = 1 << 7,       /* the Key Visualizer: cs_heat_get(), cs_table_set_keyviz() (else
	                               * -EOPNOTSUPP); without it nothing is counted (Cloud Bigtable has its own) */
};

/* The CS_CAP_* flags of ST. */
unsigned cs_store_caps(const cs_store *st);

/* ---- Transactions ----------------------------------------------------------------------------------- */

enum {
	CS_TXN_RDONLY = 1 << 0, /* a read-only snapshot; many may run at once, from any thread */
	CS_TXN_DEFER = 1 << 1,  /* a store without CS_CAP_TXN (Bigtable) may send this write transaction's row
	                         * mutations (cs_row_mutate) after cs_txn_commit() returns: see below. A local
	                         * store ignores it (every commit is applied when it returns) */
};

/* CS_TXN_DEFER, what it promises. The row mutations of such a transaction (only those: any other call in
 * it is made as in any transaction) are checked when made (validation errors as always), then queued and
 * sent in batches (Bigtable: MutateRows), within 100 ms, when the queue is full (that call then waits),
 * and before any other call of this process on the same table reaches the service. So this process sees
 * them at once, in order with its later writes of the same row (a deferred delete then a write of the
 * same cell leaves the write), and other processes within about 100 ms. cs_store_sync() sends them and
 * waits; so does cs_store_close(). Until then a crash of the process loses them: use it where that is
 * acceptable (a delete: the deleted data comes back), never for data the caller promised to keep.
 * A queued mutation that fails (after the service's retries) is reported once, by the next call of this
 * process on the same table (a read, a write, cs_store_sync()), with its errno (-EIO, ...) and
 * cs_last_error() "N queued deletes (or: mutations) of table T failed: ADDRESS: CODE: message"; the rows
 * concerned are read from the service again. One failing at cs_store_close() is lost: sync first.
 * A mutation too large to queue (over 1 MiB), or one that is not idempotent (an aggregate's AddToCell), is
 * sent when made, as without the flag. */

/* Begin a transaction. A write transaction blocks until other writers (any process) finish; a thread
 * may hold at most one write transaction. Errors: -EROFS (write on a read-only store), -EAGAIN (too many
 * readers), -EIO, -ENOMEM. Finish *OUT with cs_txn_commit() or cs_txn_abort(). */
int cs_txn_begin(cs_store *st, unsigned flags, cs_txn **out);

/* Commit and free TXN (also a read-only one, which just ends). If an earlier call failed the
 * transaction, nothing is stored and that error is returned. Errors: as the failing call, -ENOSPC, -EIO. */
int cs_txn_commit(cs_txn *txn);

/* Discard TXN and everything it wrote. Accepts NULL. */
void cs_txn_abort(cs_txn *txn);

/* Move the read-only transaction TXN to the newest committed snapshot, cheaply (a long-lived reader,
 * such as a daemon thread, renews instead of beginning anew). Scans opened on TXN must be closed first.
 * Errors: -EINVAL (TXN writes), -EIO, -EAGAIN. On error TXN can only be aborted. */
int cs_txn_renew(cs_txn *txn);

/* Let go of read-only TXN's snapshot until the next cs_txn_renew(), so an idle reader does not keep
 * old pages from being reused. Nothing may be read through TXN meanwhile. Accepts NULL. */
void cs_txn_reset(cs_txn *txn);

/* A number that changes whenever any process commits a write to the store (for change polling).
 * Cheap: no transaction. */
uint64_t cs_store_version(cs_store *st);

/* What the store's service cost this handle since it was opened, as text: one "NAME VALUE\n" line per
 * counter, names fixed by the backend (Bigtable: "bigtable.calls.METHOD" for each method called, then
 * retries, messages, bytes and rows and cells received; store/bigtable/README.md). A store with no service
 * (a local one) has none: *TEXT is "". *TEXT is NUL-terminated, *LEN bytes before the NUL, and the
 * caller's to free(). Errors: -ENOMEM. Thread-safe. */
int cs_store_counters(cs_store *st, char **text, size_t *len);

/* ---- Schema --------------------------------------------------------------------------------------- */

/* A family's value type (fixed when the family is created). A plain family holds bytes; an aggregate
 * family merges what CS_ADD_TO_CELL brings into the cell of the same (row, column, timestamp) at write
 * time, as Bigtable's aggregate families do. Aggregate cells hold a signed 64-bit integer, 8 bytes
 * big-endian (Bigtable's Int64 BigEndianBytes encoding), and are written only by CS_ADD_TO_CELL. */
typedef enum cs_value_type {
	CS_TYPE_BYTES = 0, /* a plain family */
	CS_TYPE_INTSUM,    /* int64 sum (two's complement: overflow wraps, as in Bigtable) */
	CS_TYPE_INTMIN,    /* int64 minimum (signed) */
	CS_TYPE_INTMAX,    /* int64 maximum (signed) */
} cs_value_type;

typedef struct cs_family_info {
	char *name;    /* family name */
	char *gc;      /* GC policy in cbt's input syntax, canonical form ("never", "maxversions=1", ...) */
	char *gc_cbt;  /* the policy as `cbt ls TABLE` prints it */
	cs_value_type type; /* CS_TYPE_BYTES, or the aggregate type it was created with */
} cs_family_info;

/* The name of TYPE as cbt's createtable spells it: "intsum", "intmin", "intmax"; "" for CS_TYPE_BYTES and
 * for an unknown value. Never NULL; a static string. */
const char *cs_value_type_name(cs_value_type type);

/* TYPE as `cbt ls TABLE` prints it in its "Value Type" column: "{}" for a plain family, else the
 * aggregate type's JSON as cbt 1.23.2 prints it. Never NULL; a static string. */
const char *cs_value_type_cbt(cs_value_type type);

/* Parse a value type name as cs_value_type_name() writes it ("" is CS_TYPE_BYTES), in any case, as cbt
 * reads it (Go's strings.ToLower: "INTSUM" and "IntSum" are "intsum").
 * Errors: -EOPNOTSUPP (a type Bigtable has and cellfs does not: "inthll", "stringutf8bytes"), -EINVAL
 * (anything else). */
int cs_value_type_parse(const char *name, cs_value_type *out);

typedef struct cs_table_info {
	char *name;
	char delim;                  /* row-key delimiter for the mount */
	int64_t created;             /* when the table was created, µs since the epoch (0: unknown) */
	size_t nfamilies;
	cs_family_info *families;    /* sorted by name */
	bool keyviz_off;             /* the Key Visualizer records nothing of it (cs_table_set_keyviz()) */
} cs_table_info;

/* Check a table name / family name. Returns 0 or -EINVAL. */
int cs_check_table_name(const char *name);
int cs_check_family_name(const char *name);

/* Check a GC policy in cbt's syntax: maxversions=N, maxage=D (D an integer with unit ms|s|m|h|d),
 * never, combined with and/&&, or/||, parentheses. Returns 0 or -EINVAL. If CANON is not NULL it gets the
 * canonical form (caller frees). */
int cs_check_gc_policy(const char *text, char **canon);

/* Why TEXT is not a valid GC policy: a one-line message naming the fault (caller frees), or NULL if it
 * is valid (or on ENOMEM). */
char *cs_gc_policy_error(const char *text);

/* Create table NAME with row-key delimiter DELIM (0 = CS_DEFAULT_DELIM).
 * Errors: -EINVAL (bad name), -EEXIST, -EROFS. */
int cs_table_create(cs_txn *txn, const char *name, char delim);

/* Create table INFO->name with INFO's delimiter (0 = CS_DEFAULT_DELIM), creation time (0 = now) and
 * families (each with its GC policy, NULL = "never", and value type), as cs_table_create() and
 * cs_family_create_typed() for each family would, in one step: how a copy of a table gets its source's
 * schema (cs_table_info_get()). INFO is borrowed; its gc_cbt fields are not read.
 * Errors: -EINVAL (a bad table or family name, GC policy or value type, or a family given twice),
 * -EEXIST (a table of that name exists), -EROFS. Nothing is created on error. */
int cs_table_create_as(cs_txn *txn, const cs_table_info *info);

/* Delete table NAME and all its data (the space is reclaimed by cs_gc()). Errors: -ENOENT, -EROFS. */
int cs_table_delete(cs_txn *txn, const char *name);

/* Rename table FROM to TO. The table keeps its id, and with it every cell, its families and GC policies,
 * delimiter, creation time and dropped ranges: only the table's record changes, in constant time. The
 * name FROM is free afterwards (a table of that name may be created, empty); scans of the table already
 * open in TXN go on. FROM equal to TO is -EEXIST.
 * Errors: -ENOENT (no table FROM), -EEXIST (a table TO exists), -EINVAL (TO not a valid name), -EROFS. */
int cs_table_rename(cs_txn *txn, const char *from, const char *to);

/* The table names, sorted. Caller frees with cs_strv_free(*NAMES, *N). */
int cs_table_list(cs_txn *txn, char ***names, size_t *n);
void cs_strv_free(char **v, size_t n);

/* Schema of table NAME. Errors: -ENOENT. Caller frees *OUT with cs_table_info_free(). */
int cs_table_info_get(cs_txn *txn, const char *name, cs_table_info **out);
void cs_table_info_free(cs_table_info *info);

/* Create family FAMILY in TABLE with GC policy GC (NULL = "never").
 * Errors: -ENOENT (no table), -EEXIST, -EINVAL (bad name or policy), -EROFS. */
int cs_family_create(cs_txn *txn, const char *table, const char *family, const char *gc);

/* cs_family_create() for a family of value type TYPE (CS_TYPE_BYTES: the same as cs_family_create).
 * The type cannot be changed later (delete the family and create it again).
 * Errors: as cs_family_create(); -EINVAL also for a TYPE that is not a cs_value_type. */
int cs_family_create_typed(cs_txn *txn, const char *table, const char *family, const char *gc,
			   cs_value_type type);

/* Delete FAMILY and every cell in it. Errors: -ENOENT, -EROFS. */
int cs_family_delete(cs_txn *txn, const char *table, const char *family);

/* Set FAMILY's GC policy. Collected cells are never returned again: what the old policy collected is
 * removed first (as cs_gc() does, over TABLE), so a looser policy brings nothing back.
 * Errors: -ENOENT, -EINVAL, -EROFS. */
int cs_family_set_gc(cs_txn *txn, const char *table, const char *family, const char *gc);

/* ---- Mutations ------------------------------------------------------------------------------------ */

enum cs_mut_op {
	CS_SET_CELL,      /* family, qualifier, ts (or CS_TS_NOW), value: create or replace that cell */
	CS_DELETE_COLUMN, /* family, qualifier, [ts_start, ts_end): delete those cells of the column */
	CS_DELETE_FAMILY, /* family: delete the row's cells in the family */
	CS_DELETE_ROW,    /* delete every cell of the row */
	CS_ADD_TO_CELL,   /* family (an aggregate one), qualifier, ts (or CS_TS_NOW), input: merge INPUT into
	                   * the visible cell at exactly that timestamp (sum, min or max as the family's type
	                   * says), or write INPUT there if there is none. A cell a read would not return
	                   * (collected by the GC policy, dropped, of a deleted family) counts as none: what
	                   * was collected never comes back. */
};

typedef struct cs_mutation {
	enum cs_mut_op op;
	const char *family;
	cs_bytes qualifier;
	int64_t ts;               /* CS_SET_CELL: >= 0, or CS_TS_NOW */
	cs_bytes value;           /* CS_SET_CELL */
	int64_t ts_start, ts_end; /* CS_DELETE_COLUMN: [ts_start, ts_end); ts_end CS_TS_MAX = unbounded.
	                           * Zero-initialised (0, 0) means every timestamp. */
	int64_t input;            /* CS_ADD_TO_CELL: the number to merge in */
} cs_mutation;

/* Apply N mutations to ROW of TABLE, in order, atomically.
 * Errors: -ENOENT (no such table or family), -EINVAL (empty row key, negative timestamp, bad op,
 *         CS_SET_CELL into an aggregate family, CS_ADD_TO_CELL into a plain one),
 *         -ENAMETOOLONG (row key > CS_MAX_ROW_KEY or qualifier > CS_MAX_QUALIFIER), -EFBIG (value over
 *         the store's limit), -EROFS; then -ENOSPC, -EIO, -ENOMEM (transaction failed). */
int cs_row_mutate(cs_txn *txn, const char *table, cs_bytes row, const cs_mutation *m, size_t n);

/* ReadModifyWrite: append SUFFIX to the newest cell of FAMILY:QUALIFIER (missing = ""), writing a new
 * cell at max(newest timestamp, now). If TS is not NULL it gets that timestamp. Errors: as cs_row_mutate
 * (-EINVAL for an aggregate family, as for CS_SET_CELL; this holds for cs_rmw_increment too). */
int cs_rmw_append(cs_txn *txn, const char *table, cs_bytes row, const char *family, cs_bytes qualifier,
		  cs_bytes suffix, int64_t *ts);

/* ReadModifyWrite: add DELTA to the newest cell of FAMILY:QUALIFIER read as a 64-bit big-endian signed
 * integer (missing = 0; overflow wraps), writing a new cell at max(newest timestamp, now). *RESULT (if
 * not NULL) gets the new value. Errors: as cs_row_mutate; -EINVAL if the cell is not 8 bytes long. */
int cs_rmw_increment(cs_txn *txn, const char *table, cs_bytes row, const char *family,
		     cs_bytes qualifier, int64_t delta, int64_t *result);

typedef struct cs_predicate {
	const char *family;
	cs_bytes qualifier;
	const cs_bytes *value_equals; /* NULL: "the column has a cell"; else "its newest cell equals this" */
} cs_predicate;

/* CheckAndMutate: evaluate PRED on ROW and apply TRUE_M (if it held) or FALSE_M, atomically.
 * *MATCHED (if not NULL) tells which. Errors: as cs_row_mutate. */
int cs_check_and_mutate(cs_txn *txn, const char *table, cs_bytes row, const cs_predicate *pred,
			const cs_mutation *true_m, size_t n_true, const cs_mutation *false_m, size_t n_false,
			bool *matched);

/* Drop every row whose key starts with PREFIX (an empty PREFIX drops all rows). Takes time independent
 * of the number of cells dropped; space is reclaimed by cs_gc() (after an empty PREFIX, by cs_gc() with
 * TABLE NULL). Errors: -ENOENT, -ENAMETOOLONG (PREFIX longer than CS_MAX_ROW_KEY), -EROFS. */
int cs_drop_prefix(cs_txn *txn, const char *table, cs_bytes prefix);

/* Move the subtree of row keys FROM to TO, as renaming a directory of the mount moves its rows: the row
 * FROM itself and every row whose key starts with FROM followed by TABLE's delimiter D. Row FROM becomes
 * TO and row FROM D REST becomes TO D REST, with every cell (family, qualifier, timestamp, value)
 * unchanged. FROM is a whole key, not a byte prefix: rows that merely start with its bytes (for FROM
 * "a#b": "a#bc", "a#b\0") stay. So `mv T/a/b T/a/c` is one call with FROM "a#b", TO "a#c".
 * Only what a read would return moves: cells hidden by a GC policy, a dropped range or a deleted family
 * are not moved and never come back (they are removed, under FROM and under TO). Moved cells count as
 * written now: a range of TO dropped earlier (in TXN or before) does not hide them; a later drop does.
 * Everything happens in TXN, atomically with the caller's other changes (abort undoes it). Time is
 * proportional to the cells stored under FROM and TO (a range dropped and not written since is skipped
 * in one seek), not to the table's size; memory is constant. Nothing visible under FROM: returns 0 and
 * writes nothing. *MOVED (if not NULL) gets the number of cells moved (0 on error).
 * Errors, all detected before anything is written (the transaction stays usable), checked in this order:
 *   -EROFS; -ENOENT (no table); -EINVAL (FROM or TO empty, or the subtrees overlap: TO equals FROM, lies
 *   under it (starts with FROM D: a directory moved into itself), or FROM lies under TO);
 *   -ENAMETOOLONG (FROM or TO longer than CS_MAX_ROW_KEY); -EEXIST (a read of TO's subtree returns a
 *   cell: moving would merge rows); then, while counting the cells to move, -ENAMETOOLONG (a row with a
 *   visible cell would get a key longer than CS_MAX_ROW_KEY) or -EXDEV (more than MAX_CELLS cells would
 *   move; MAX_CELLS 0 = no limit; returned as soon as the count passes it, so the caller's cost is
 *   bounded: fall back to copying, as mv(1) does for EXDEV).
 *   Then -ENOSPC, -EIO, -ENOMEM, -E2BIG (the transaction failed). */
int cs_move_prefix(cs_txn *txn, const char *table, cs_bytes from, cs_bytes to, uint64_t max_cells,
		   uint64_t *moved);

/* ---- Bulk loading ----------------------------------------------------------------------------------- */

/* A bulk loader writes many cells into one table inside the caller's write transaction, with the
 * result cs_row_mutate(CS_SET_CELL) would have (also in aggregate families, which CS_SET_CELL refuses:
 * cs_bulk_put()), faster: the table and family are looked up once, and
 * cells whose keys arrive in increasing order (rows ascending; in a row, family name, qualifier,
 * newest timestamp first) past the end of everything stored, as when a new table is filled in key
 * order, are appended (LMDB's MDB_APPEND: no search, pages filled whole). Any other order works too, at
 * the speed of ordinary writes; so do row keys and qualifiers too long for appending.
 * Commit in batches (close the loader, cs_txn_commit(), begin again): one transaction holding hundreds
 * of MiB of changes fails with -E2BIG. The table's schema must not change in TXN while the loader is
 * open. A loader is not thread-safe; it lives inside TXN and must be closed before TXN ends. */
typedef struct cs_bulk cs_bulk;

typedef struct cs_bulk_stats {
	uint64_t appended; /* cells stored by appending */
	uint64_t put;      /* cells stored by ordinary writes (a store without CS_CAP_TXN: those the
	                    * service acknowledged, which it keeps whatever becomes of the transaction) */
} cs_bulk_stats;

/* Start loading cells into TABLE in TXN. Errors: -ENOENT (no table), -EROFS (read-only transaction or
 * store), the transaction's earlier error; then -EIO, -ENOMEM. Close *OUT with cs_bulk_close(). */
int cs_bulk_open(cs_txn *txn, const char *table, cs_bulk **out);

/* Create or replace the cell (ROW, FAMILY, QUALIFIER, TS) with VALUE. TS >= 0, or CS_TS_NOW.
 * In an aggregate family VALUE is the cell as reads return it (8 bytes, a big-endian int64), and it
 * replaces the cell at TS as a plain cell is replaced: it is not merged as CS_ADD_TO_CELL merges, so
 * loading the same cells twice (a copy run again) leaves what loading them once does.
 * Errors, detected before anything is written (the transaction stays usable): -EINVAL (empty row key,
 * negative TS, a value not 8 bytes long in an aggregate family), -ENAMETOOLONG (row key over CS_MAX_ROW_KEY, qualifier over CS_MAX_QUALIFIER), -EFBIG
 * (value over the store's limit), -ENOENT (no such family). Then -ENOSPC, -EIO, -ENOMEM, -E2BIG: the
 * transaction failed (cs_txn_commit() returns the error and stores nothing of it). */
int cs_bulk_put(cs_bulk *b, cs_bytes row, const char *family, cs_bytes qualifier, int64_t ts, cs_bytes value);

/* How the cells so far were stored (for benchmarks and tests; and, after cs_bulk_flush(), how many cells a
 * store without CS_CAP_TXN holds already). */
void cs_bulk_get_stats(const cs_bulk *b, cs_bulk_stats *stats);

/* Hand every cell put so far to the store and wait: a store without CS_CAP_TXN sends what B still holds
 * and waits for the service's answer, so that cs_bulk_get_stats() counts every cell it acknowledged (a
 * caller that fails part-way can say how much is written); for a local store the cells are in the
 * transaction already, and this does nothing. Errors: -EROFS, the transaction's earlier error; then what
 * sending fails with (-EIO, ..., cs_last_error() saying why), which the transaction keeps as
 * cs_bulk_put()'s do. */
int cs_bulk_flush(cs_bulk *b);

/* Free B. What it wrote stays in the transaction. Accepts NULL. */
void cs_bulk_close(cs_bulk *b);

/* ---- Reads ---------------------------------------------------------------------------------------- */

typedef struct cs_column_sel {
	const char *family;          /* exact family name, or NULL */
	const char *family_regex;    /* a regex (cs_regex_compile()) matching the whole name, or NULL */
	const cs_bytes *qualifier;   /* exact qualifier, or NULL */
	const char *qualifier_regex; /* regex matching the whole qualifier, or NULL */
} cs_column_sel;

struct cs_cell;

typedef struct cs_read_opts {
	const cs_bytes *row;        /* exactly this row, or NULL */
	cs_bytes start, end;        /* rows in [start, end); a zero length means unbounded */
	cs_bytes prefix;            /* only rows starting with this; zero length = all */
	const char *row_regex;      /* regex matching the whole row key, or NULL */
	bool reversed;              /* rows in descending key order */
	uint64_t limit;             /* at most this many rows; 0 = no limit */
	size_t ncolumns;            /* the union of these selectors; 0 = every column */
	const cs_column_sel *columns;
	uint32_t cells_per_column;  /* at most this many newest cells per column; 0 = all */
	uint32_t cells_per_row;     /* at most this many cells per row, its first (family, qualifier, newest
	                             * first) after every other filter; 0 = all. With ROW, reading stops
	                             * there: "does row R (or its family F) have a cell" costs one cell */
	const struct cs_cell *after; /* with ROW, forward: only the row's cells after this one in the row's
	                             * order (family, qualifier, newest first; its value is not looked at):
	                             * with cells_per_row, a row read in pieces (a wide family's listing).
	                             * Ignored without ROW or when reversed */
	int64_t ts_start, ts_end;   /* only cells with ts in [ts_start, ts_end); (0, 0) = all */
	bool keys_only;             /* cells carry no value (value_len still set) */
	bool unrecorded;            /* not counted as reads by the Key Visualizer (cs_heat_get()): for scans
	                             * that look at the table on its behalf, as drawing the heatmap does */
} cs_read_opts;

typedef struct cs_cell {
	const char *family;  /* borrowed; the cells of one family in a row share one pointer */
	cs_bytes qualifier;  /* borrowed */
	int64_t ts;
	cs_bytes value;      /* borrowed; empty with keys_only */
	uint64_t value_len;  /* the value's length, known without decompressing it */
} cs_cell;

typedef struct cs_row {
	cs_bytes key;        /* borrowed */
	size_t ncells;
	const cs_cell *cells; /* sorted by family name, qualifier, then newest first */
} cs_row;

/* Start reading TABLE's rows as OPTS (NULL = everything) says. Rows without a selected cell are skipped.
 * Cells a GC policy has collected are never returned. The scan lives inside TXN.
 * Errors: -ENOENT (no table), -EINVAL (a regex cs_regex_compile() refuses), -ENOMEM. Close *OUT with
 * cs_scan_close(). */
int cs_scan_open(cs_txn *txn, const char *table, const cs_read_opts *opts, cs_scan **out);

/* Next row. Returns 1 and sets *ROW (borrowed, valid until the next call or close), 0 at the end,
 * or a negative errno (-EIO for a record that does not decode). */
int cs_scan_next(cs_scan *scan, const cs_row **row);

void cs_scan_close(cs_scan *scan); /* accepts NULL */

/* Continue a forward scan at the first row >= ROW (and within the scan's bounds), skipping what lies
 * between: how a caller jumps over the rows under a prefix. Errors: -EINVAL (a reversed scan), -ENOMEM. */
int cs_scan_seek(cs_scan *scan, cs_bytes row);

/* ---- Regular expressions (rx.c) ------------------------------------------------------------------- */

/* The dialect of cbt and Bigtable, which the read filters above use: RE2's syntax (Go's regexp/syntax
 * with the Perl flags, \C included), matched against raw bytes, one byte one character, and only against
 * the whole subject. A byte of the pattern at or above 0x80 stands for itself (as if written \xHH).
 * Classes and case folding are Go's Unicode ones, restricted to the runes 0-255 a byte can be: \pL
 * matches the byte 0xE9, [\p{Han}] matches nothing, (?i)k matches K, (?i)\x{212A} (the Kelvin sign)
 * matches k and K. Matching takes time polynomial in the subject, whatever the pattern. */
typedef struct cs_regex cs_regex;

/* Why a pattern was refused: Go's regexp words for it ("missing closing )", "invalid escape sequence")
 * and the part of the pattern they are about, as Go's error names it. */
typedef struct cs_regex_error {
	const char *what;  /* static string */
	size_t off, len;   /* the offending bytes: PATTERN[off .. off + len) */
} cs_regex_error;

/* Compile PATTERN (NUL-terminated). On success *OUT is the compiled expression; free it with
 * cs_regex_free(). Errors: -EINVAL (the pattern is refused; *ERR, if ERR is not NULL, says why),
 * -ENOMEM. Refused as RE2 refuses them: bad syntax, backreferences, lookaround, possessive quantifiers,
 * repetition counts over 1000 (also in product, as (a{100}){11}); and groups nested over 1000 deep or a
 * pattern too large to compile ("expression too large"). */
int cs_regex_compile(const char *pattern, cs_regex **out, cs_regex_error *err);

/* Whether RE matches all of the N bytes at P (P may be NULL when N is 0). Returns 1 (it does), 0 (it
 * does not) or -ENOMEM. A cs_regex is used by one thread at a time (it holds the matcher's workspace). */
int cs_regex_match(cs_regex *re, const void *p, size_t n);

/* Free RE. Accepts NULL. */
void cs_regex_free(cs_regex *re);

/* ---- Maintenance ---------------------------------------------------------------------------------- */

typedef struct cs_gc_stats {
	uint64_t cells_removed; /* cells physically removed */
	uint64_t bytes_freed;   /* their stored bytes (keys and values) */
} cs_gc_stats;

/* Physically remove what is no longer visible in TABLE (NULL = every table, and deleted tables):
 * GC-collected cells and dropped rows (with NULL, also the Key Visualizer's records of names no table
 * has, and those older than CS_HEAT_MINUTES). STATS may be NULL. Errors: -ENOENT, -EROFS. */
int cs_gc(cs_txn *txn, const char *table, cs_gc_stats *stats);

/* ---- Dump and restore (dump.c, restore.c; the format is specified in store/dump-format.md) ------ */

/* Where a dump goes: write all N bytes at P. Returns 0 or a negative errno (which the caller gets). */
typedef int cs_write_fn(void *ctx, const void *p, size_t n);
/* Where a dump comes from: read up to N bytes into P, setting *GOT (0 only at the end of the input).
 * Returns 0 or a negative errno. */
typedef int cs_read_fn(void *ctx, void *p, size_t n, size_t *got);

typedef struct cs_dump_stats {
	uint64_t tables, rows, cells;
	uint64_t value_bytes; /* the values' total length, uncompressed */
	uint64_t bytes;       /* the dump's length */
} cs_dump_stats;

/* Write a dump of the N tables NAMES (N 0: every table, in name order) as TXN sees them: each table's
 * schema (delimiter, creation time, families, GC policies, value types) and every cell a read of all
 * versions returns, with its timestamp and value (cells a GC policy collected, dropped or deleted are not
 * dumped). The same store contents always give the same bytes. Every name is checked before anything is
 * written. STATS may be NULL. Memory: about one block (1 MiB) plus the largest value.
 * Errors: -ENOENT (a table does not exist; nothing written), -EINVAL (a name given twice), -EIO (a
 * record does not decode), -ENOMEM, or what WRITE returned. */
int cs_dump(cs_txn *txn, const char *const *names, size_t n, cs_write_fn *write, void *ctx,
	    cs_dump_stats *stats);

typedef struct cs_restore_opts {
	bool overwrite;       /* replace tables that exist (else -EEXIST) */
	uint64_t batch_bytes; /* values written per transaction before a commit; 0 = 64 MiB */
} cs_restore_opts;

typedef struct cs_restore_result {
	cs_dump_stats stats;          /* what was restored (complete only on success) */
	char table[CS_MAX_TABLE + 1]; /* -EEXIST: the table that exists */
	uint64_t offset;              /* -EBADMSG, -ENOTSUP, -EFBIG: where in the dump the fault lies */
	char why[160];                /* -EBADMSG, -ENOTSUP: what is wrong with the dump, one line */
} cs_restore_result;

/* Restore the dump READ yields into ST: its tables, with their schema and cells, replace tables of the
 * same names (OPTS->overwrite) or are refused. All or nothing: the data goes into hidden staging tables,
 * committed in batches of OPTS->batch_bytes (memory stays bounded whatever the dump's size), and only
 * after the trailer's counts and the checksum chain of the whole stream have been verified does one
 * last transaction put every table in place (and drop the tables it replaces). On any error the staging
 * tables are removed again (or, if the process dies, by the next cs_gc() of the whole store): no table
 * of the store changes. OPTS and RES may be NULL.
 * Errors: -EEXIST (a table in the dump exists and OPTS->overwrite is false; RES->table names it),
 *   -EBADMSG (not a dump, truncated, a checksum mismatch, or malformed; RES->why and RES->offset say
 *   which and where), -ENOTSUP (a newer format version, or a schema attribute this build does not know),
 *   -EFBIG (a value over the store's limit), -EROFS, -ENOSPC, -EIO, -ENOMEM, or what READ returned. */
int cs_restore(cs_store *st, cs_read_fn *read, void *ctx, const cs_restore_opts *opts,
	       cs_restore_result *res);

/* ---- Maintenance: statistics, verification, compaction (stats.c, verify.c) ------------------------ */

typedef struct cs_family_stats {
	char *name;
	uint64_t cells;         /* visible cells */
	uint64_t raw_bytes;     /* their values' length, uncompressed */
	uint64_t stored_bytes;  /* their values as stored (compressed or not, with the cell header) */
	uint64_t key_bytes;     /* their keys as encoded */
	uint64_t collected_cells; /* stored cells its GC policy has collected (reads no longer return them),
	                           * awaiting cs_gc(); part of the table's garbage_cells */
	uint32_t max_versions;  /* the most cells one column of a row holds as stored, visible or collected
	                         * (cs_gc() brings it down to what the policy keeps) */
} cs_family_stats;

typedef struct cs_table_stats {
	char *name;
	uint64_t rows;                            /* rows with a visible cell */
	uint64_t cells, raw_bytes, stored_bytes, key_bytes; /* the sums over the families */
	uint64_t garbage_cells, garbage_bytes;    /* stored but invisible (collected, dropped, deleted
	                                           * family): what cs_gc() would remove, keys included */
	size_t nfamilies;
	cs_family_stats *families;                /* sorted by name */
} cs_table_stats;

/* Statistics of TABLE: one pass over its stored cells. Errors: -ENOENT, -EIO.
 * Caller frees *OUT with cs_table_stats_free(). */
int cs_table_stats_get(cs_txn *txn, const char *table, cs_table_stats **out);
void cs_table_stats_free(cs_table_stats *s); /* accepts NULL */

typedef struct cs_problem {
	const char *table;       /* the table, or NULL if not known */
	const cs_bytes *row;     /* the row key, or NULL */
	const char *family;      /* or NULL */
	const cs_bytes *qualifier; /* or NULL */
	bool has_ts;
	int64_t ts;
	const char *what;        /* what is wrong, one line */
} cs_problem;

/* Called for every problem cs_verify() finds; everything is borrowed for the call. */
typedef void cs_problem_fn(void *ctx, const cs_problem *p);

typedef struct cs_verify_stats {
	uint64_t records;  /* stored records read */
	uint64_t tables, cells;
	uint64_t value_bytes; /* values decoded (uncompressed) */
	uint64_t orphans;  /* cells of deleted tables or of restores in progress, awaiting cs_gc() */
	uint64_t problems; /* problems reported */
	uint64_t heat;     /* Key Visualizer records read (checked, but not counted in records) */
} cs_verify_stats;

/* Read every record TXN sees — metadata, table schemas, drop records, every cell's key and header, and
 * every value (decompressed) — checking structure, limits, key order and that each cell belongs to a
 * table. Each problem goes to REPORT (table, row, column and timestamp where the record says them).
 * A B-tree error LMDB reports ends the walk (as one problem). STATS may be NULL.
 * Returns 0 when the walk is done (the problems, if any, counted in STATS), or -ENOMEM. */
int cs_verify(cs_txn *txn, cs_problem_fn *report, void *ctx, cs_verify_stats *stats);

/* Write a compacted copy of ST (free pages left out, pages in order) into directory DEST, which is
 * created (0700) if missing and must hold no store. The copy is a consistent snapshot; ST stays usable.
 * *SIZE (if not NULL) gets the copy's size in bytes.
 * Errors: -EEXIST (DEST holds a store), -ENOTEMPTY (DEST holds other files), -ENOTDIR, -EACCES, -ENOSPC,
 * -EIO. A failed copy is removed. */
int cs_store_compact(cs_store *st, const char *dest, uint64_t *size);

/* The size in bytes of ST's data file. Errors: -EIO. */
int cs_store_size(cs_store *st, uint64_t *size);

/* ---- Key Visualizer: what each key range saw, minute by minute (heat.c) ------------------------------
 * A local store counts, per table and per minute, the rows its scans return (reads) and the row
 * mutations it commits (writes), in at most CS_HEAT_RANGES ranges of row keys kept in key order: a range
 * is the first CS_HEAT_KEY bytes of the least and of the greatest key counted in it, and its two counts.
 * Ranges never overlap; a key outside every range makes one of its own, and when a minute has more
 * ranges than that, the two adjacent ones with the smallest sum become one: totals stay exact, and a
 * count is never put in a range that does not hold its key. A handle counts in memory and writes its
 * counts into the store with a write transaction that commits anyway (its first, then at most one a
 * minute); cs_heat_flush() and cs_store_close() append the rest to the store's spool, a file beside it
 * ("heat.spool"), which no LMDB lock guards: a read-only handle's counts go there too, and the next
 * commit that writes counts takes them in. Counts a process could not spool (no right to write the
 * directory, or the spool at its 16 MiB cap) are lost. Minutes older than CS_HEAT_MINUTES are dropped.
 * A table whose keyviz is off (cs_table_set_keyviz()) is not counted. A store without CS_CAP_KEYVIZ
 * counts nothing (Bigtable: the service has its own Key Visualizer). What counts:
 * - a read: each row cs_scan_next() returns, but for scans opened with cs_read_opts.unrecorded;
 * - a write: each cs_row_mutate(), cs_rmw_append(), cs_rmw_increment() and cs_check_and_mutate() that
 *   applied mutations, and each row a bulk loader writes cells of (once per run of cells of one row).
 *   Range drops and moves are not counted. Writes of a transaction that does not commit are not counted. */

#define CS_HEAT_KEY 16                /* bytes of a row key a range keeps as its lower bound */
#define CS_HEAT_RANGES 64             /* ranges per table and minute, at most */
#define CS_HEAT_MINUTES (7 * 24 * 60) /* the minutes kept: a week */

typedef struct cs_heat_range {
	uint8_t key[CS_HEAT_KEY];  /* the least and the greatest key counted here (their first CS_HEAT_KEY */
	uint8_t last[CS_HEAT_KEY]; /* bytes): every row counted in the range starts with bytes in [key, last] */
	size_t keylen, lastlen;    /* 1..CS_HEAT_KEY each; key <= last */
	uint64_t reads, writes;
} cs_heat_range;

typedef struct cs_heat_minute {
	int64_t minute;          /* minutes since the epoch (UTC) */
	size_t nranges;          /* 1..CS_HEAT_RANGES */
	cs_heat_range *ranges;   /* sorted by key; keys distinct */
} cs_heat_minute;

typedef struct cs_heat {
	size_t nminutes;
	cs_heat_minute *minutes; /* oldest first; minutes in which nothing was counted are absent */
} cs_heat;

/* What the store recorded of TABLE's accesses since it was created: its records as TXN sees them and
 * what the spool holds now (what handles hold in memory, their own included, is not there:
 * cs_heat_flush() spools this handle's). Errors: -ENOENT (no table), -EIO (a damaged record), -ENOMEM,
 * -EOPNOTSUPP (no CS_CAP_KEYVIZ). Caller frees *OUT with cs_heat_free(). */
int cs_heat_get(cs_txn *txn, const char *table, cs_heat **out);
void cs_heat_free(cs_heat *h); /* accepts NULL */

/* Write what ST has counted and not yet written to the spool, without a commit (so no other process's
 * mount sees the store change, and nothing waits for a writer); when the spool has grown past 1 MiB and
 * ST may write and has no write transaction open, in a write transaction of its own, which takes the
 * spool in too. 0 when there is nothing to write, and without CS_CAP_KEYVIZ. Errors: the spool's (-EACCES,
 * -ENOSPC, -EFBIG at its cap...; the counts stay held), a transaction's. Threads: as cs_txn_begin(). */
int cs_heat_flush(cs_store *st);

/* Turn the Key Visualizer's recording of TABLE on (the default) or off: a table property, kept in the
 * table's record, which copies made through cs_table_info_get() and cs_table_create_as() keep (dumps do
 * not). Off, nothing more is counted, and what TXN's handle holds of it is dropped; what was recorded
 * (and spooled, by any process) stays until it is older than CS_HEAT_MINUTES. (Records are kept under the table's name: a
 * renamed table starts anew, and cs_gc() of the whole store removes those of names no table has.)
 * Errors: -ENOENT (no table), -EROFS, -EOPNOTSUPP (no CS_CAP_KEYVIZ). */
int cs_table_set_keyviz(cs_txn *txn, const char *table, bool on);

/* Test hook: the clock ST's recording reads the minute from (NULL: cs_now_us()), so tests move through
 * minutes without sleeping. Set it before ST is used by other threads. */
void cs_heat_set_clock(cs_store *st, int64_t (*now_us)(void *ctx), void *ctx);

/* ---- Test hook: fault injection --------------------------------------------------------------------- */

enum {
	CS_FAULT_LMDB = 1 << 0, /* calls into LMDB */
	CS_FAULT_ZSTD = 1 << 1,  /* calls into zstd */
	CS_FAULT_ALLOC = 1 << 2, /* the store's allocations (and zstd contexts, compiled regexes) */
};

/* Make the Nth call (1-based, counted from now) of the kinds in KINDS fail: an LMDB or zstd call as an
 * I/O error would, an allocation as out of memory. N = 0 disarms. Process-wide; for tests only. */
void cs_fault_arm(unsigned kinds, uint64_t n);

/* Arm from a spec as the test hook $CELLFS_FAULT spells it: KINDS:N, KINDS one or more of "lmdb",
 * "zstd", "alloc" joined by '+' (e.g. "alloc:17", "lmdb+zstd:3"); an empty spec disarms.
 * Errors: -EINVAL (not such a spec; nothing armed). */
int cs_fault_arm_spec(const char *spec);

/* Whether the armed fault has fired since cs_fault_arm(). */
bool cs_fault_fired(void);

/* The calls of the armed kinds counted since cs_fault_arm() (N once the fault fired): a run armed with
 * an N too large to fire measures how many calls a workload makes. */
uint64_t cs_fault_calls(void);

#ifdef __cplusplus
}
#endif
#endif
