/* cellctl.h — what cellctl's subcommands share: the run context, the command table entry, the store
 * opener and the one-line error reporter. Internal to tools/.
 *
 * A subcommand is `int cmd_x(struct cellctl *cc, int argc, char **argv)` with ARGV its arguments after
 * the subcommand name; it returns the process exit status. It validates every argument before it opens
 * a write transaction, so a bad argument writes nothing.
 */
#ifndef CELLFS_CELLCTL_H
#define CELLFS_CELLCTL_H

#include <stdbool.h>
#include <stddef.h>

#include "args.h"
#include "cellstore.h"

enum {
	CC_OK = 0,
	CC_FAIL = 1, /* cbt exits 1 for every failure; so does cellctl */
};

/* How a subcommand uses the store. */
enum cc_access {
	CC_NONE,   /* no store through cellctl_open() (help; copy opens its two itself) */
	CC_READ,   /* read-only transactions */
	CC_WRITE,  /* write transactions */
	CC_CREATE, /* write, and create the store if it does not exist yet */
};

struct cellctl;
typedef int cmd_fn(struct cellctl *cc, int argc, char **argv);

struct cmd {
	const char *name;
	cmd_fn *fn;
	enum cc_access access;
	const char *desc;  /* one line, for the command list */
	const char *usage; /* first line: the synopsis; the rest: `cellctl help NAME` */
};

/* --format: what ls, read, lookup and count print (jsonfmt.h describes JSON's records). */
enum cc_format {
	CC_FORMAT_TEXT, /* cbt's output, byte for byte */
	CC_FORMAT_JSON, /* JSON lines */
};

struct cellctl {
	const struct cmd *cmd; /* the subcommand being run */
	const char *db;        /* --db PATH, or NULL */
	cs_store *st;          /* opened by cellctl_open() */
	enum cc_format format; /* --format */
	bool asof;             /* asof=TIME (cc_asof()): the store is opened as of ASOF_US (CS_OPEN_ASOF) */
	int64_t asof_us;
};

/* Open the store for CC's subcommand: --db PATH, else $CELLFS_DB, else the default store (which, like
 * any store a CC_CREATE subcommand names, is created if missing). Prints the error and returns
 * CC_FAIL, or returns CC_OK. Idempotent. */
int cellctl_open(struct cellctl *cc);

/* Open the store PATH with FLAGS (CS_OPEN_*) into *ST, for a subcommand that opens its stores itself
 * (copy). Prints the error as cellctl_open() does ("no store at ..."). Returns CC_OK or CC_FAIL. */
int cc_store_open(const char *path, unsigned flags, cs_store **st);

/* Close store ST (NULL: nothing), named NAME for --stats: with --stats, first print to stderr what its
 * service cost (cs_store_counters(): "# stats of NAME", then a "COUNTER VALUE" line each; nothing for a
 * local store). */
void cc_store_close(cs_store *st, const char *name);

/* A reading subcommand's asof=TIME argument VAL (NULL or empty: none): parsed with cs_time_parse() into
 * CC, so that cellctl_open() opens the store as of that time (every read sees only cells at or before
 * it). Call before the store is opened. Prints the error. Returns CC_OK or CC_FAIL. */
int cc_asof(struct cellctl *cc, const char *val);

/* Begin a transaction on the open store (read-only for CC_READ subcommands). Prints the error. */
int cellctl_begin(struct cellctl *cc, cs_txn **txn);

/* Commit TXN, printing the error if that fails. Returns CC_OK or CC_FAIL. */
int cellctl_commit(cs_txn *txn);

/* Print "cellctl: MESSAGE" on one line to stderr; return CC_FAIL. */
__attribute__((format(printf, 1, 2)))
int cc_error(const char *fmt, ...);

/* Print "cellctl: usage: SYNOPSIS" for CC's subcommand; return CC_FAIL. */
int cc_usage(const struct cellctl *cc);

/* args_kv() (args.h: cbt's key=value arguments) over ARGC/ARGV into VALS, printing its error (or
 * ENOMEM's) with cc_error(). Returns CC_OK or CC_FAIL. */
int cc_args_kv(int argc, char *const argv[], const char *const valid[], const char *vals[]);

/* Go-quote S (N bytes) for a message. The string is one of 8 slots used in turn: it stays valid through
 * the next 7 calls of cc_q()/cc_qs() and is freed by the 8th (or at exit), so one message may quote up to
 * 8 strings; "<nomem>" (static) if memory ran out. Not thread-safe. Messages quote user input with
 * this, so they stay on one line whatever the bytes. */
const char *cc_q(const void *s, size_t n);
const char *cc_qs(const char *s);

/* Compile PAT, a regular expression in cbt's dialect (cs_regex_compile()) given as WHAT ("regex=",
 * "columns="), into *RE (free with cs_regex_free()), or only check it when RE is NULL. A refused pattern is reported as
 * "bad regex PAT in WHAT: error parsing regexp: ..." with Go's words, as cbt reports it. Returns CC_OK
 * or CC_FAIL (printed). (cmd_read.c) */
int cc_regex(const char *pat, const char *what, cs_regex **re);

/* The words for ERR, a negative errno a store call has just returned: a remote store's own
 * (cs_last_error(): the address it called, the gRPC status and the service's message), else
 * strerror(-ERR). Call it before any other store call, which may replace the remote's words. Borrowed:
 * valid until the next store call. Every message about a failed store call says its cause with this. */
const char *cc_strerror(int err);

/* A store error for TABLE (and FAMILY, if not NULL) in words: -ENOENT becomes "table "t" not found" or
 * "family "f" not found in table "t"" (whichever is missing), the rest cc_strerror(). Returns CC_FAIL. */
int cc_store_error(cs_txn *txn, int err, const char *what, const char *table, const char *family);

/* The row key argument, checked as Bigtable checks it (non-empty, at most CS_MAX_ROW_KEY bytes).
 * Prints the error. Returns CC_OK or CC_FAIL. */
int cc_check_row_key(const char *row);

/* Apply M (N mutations) to ROW of TABLE in one transaction and commit, after checking that every family
 * exists and holds the kind of cell its mutation writes (set: plain, addtocell: aggregate). ARGS (if not
 * NULL) are the arguments the mutations came from, named in messages. Prints the error. */
int cc_mutate_row(struct cellctl *cc, const char *table, const char *row, const cs_mutation *m, size_t n,
		  const char *const *args);

/* One argument of set or addtocell, ARG, parsed by args_set_cell() into C: fill M, or print the error.
 * NOW is the time of "no @ts". */
typedef int cc_cell_fn(const char *arg, const set_cell *c, int64_t now, cs_mutation *m);

/* set's and addtocell's skeleton: TABLE ROW family:column=val[@ts]..., each argument parsed with
 * args_set_cell() ("bad <command> arg" if it does not parse) and turned into a mutation by TO_MUTATION;
 * app-profile= skipped, authorized-view= refused, "nothing to VERB" without a cell; then all of them in
 * one transaction (cc_mutate_row), nothing written if any argument is bad. Prints the error. */
int cc_write_cells(struct cellctl *cc, int argc, char **argv, const char *verb, cc_cell_fn *to_mutation);

/* The value of set-style argument ARG (parsed into C) as strconv.ParseInt(val, 0, 64) reads it, into *N;
 * CMD names the command in the error ("bad value ... (CMD takes integers)"). Prints the error. */
int cc_cell_int(const char *arg, const set_cell *c, const char *cmd, int64_t *n);

/* Subcommands. */
cmd_fn cmd_createtable, cmd_createfamily, cmd_deletefamily, cmd_deletetable, cmd_setgcpolicy, cmd_ls;
cmd_fn cmd_set, cmd_deleterow, cmd_deletecolumn, cmd_deleteallrows, cmd_increment;
cmd_fn cmd_lookup, cmd_read, cmd_count;
cmd_fn cmd_addtocell;     /* cmd_agg.c */
cmd_fn cmd_droprowrange;  /* cmd_drop.c */
cmd_fn cmd_import, cmd_export; /* cmd_import.c, cmd_export.c */
cmd_fn cmd_copy;                /* cmd_copy.c */
cmd_fn cmd_dump, cmd_restore;                          /* cmd_dump.c */
cmd_fn cmd_gc, cmd_stats, cmd_verify, cmd_compact;     /* cmd_maint.c */
cmd_fn cmd_keyviz;                                     /* cmd_keyviz.c */
/* keyviz TABLE out=OUT: draw TABLE's heatmap into OUT (cmd_heatsvg.c). Returns CC_OK, or CC_FAIL with
 * the error printed. */
int keyviz_heatmap(struct cellctl *cc, const char *table, const char *out);
cmd_fn cmd_updatetable;                                /* cmd_schema.c */

#endif
