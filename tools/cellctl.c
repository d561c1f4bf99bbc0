/* cellctl.c — the cellctl command: global options, the subcommand table, help, and what subcommands
 * share (opening the store, reporting errors). Subcommands live in cmd_*.c; output formats in cbtfmt.c.
 *
 * cellctl speaks Google's cbt dialect: same subcommands, same key=value arguments, and for the same data
 * byte-identical output, so scripts written for cbt keep working against a local cellfs store.
 */
#include "cellctl.h"
#include "ccremote.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cbtfmt.h"

#ifndef CELLFS_VERSION
#define CELLFS_VERSION "unknown"
#endif

static cmd_fn cmd_help;

static const struct cmd commands[] = {
	{ "addtocell", cmd_addtocell, CC_WRITE, "Add a value to an aggregate cell (write)",
	  "cellctl addtocell <table> <row-key> [app-profile=<app-profile-id>] <family>:<column>=<val>[@<timestamp>] ...\n"
	  "\n"
	  "  <family>:<column>=<val>[@<timestamp>] may be repeated to add to several cells of the row at once.\n"
	  "\n"
	  "    The family must be an aggregate family (created with a type: intsum, intmin or intmax).\n"
	  "    val is an integer (Go syntax, as timestamps); it is merged into the cell of the same\n"
	  "    timestamp: added to it, or kept if smaller (intmin) or larger (intmax). Reads show the\n"
	  "    cell as Bigtable encodes it, a big-endian 64-bit integer.\n"
	  "    timestamp is an optional integer in microseconds since 1970-01-01 00:00:00 UTC, truncated\n"
	  "    to milliseconds as cbt does; without it the time is now.\n"
	  "\n"
	  "    Example: cellctl addtocell table1 user1 sum_cf:col1=1@12345\n" },
	{ "compact", cmd_compact, CC_READ, "Write a compacted copy of the store",
	  "cellctl compact <dest-dir>\n"
	  "\n"
	  "  Writes a consistent, compacted copy of the store (free pages left out) into <dest-dir>, which\n"
	  "  is created if missing and must not hold a store or other files. Open it with --db <dest-dir>.\n" },
	{ "copy", cmd_copy, CC_NONE, "Copy tables, schema and every version, to another store",
	  "cellctl copy <src-store> <dst-store> [<table>...] [round=<none|ms>] [batch-size=<n>] [--quiet]\n"
	  "\n"
	  "  Copies every table of <src-store> (or the tables named) into <dst-store>: its schema (delimiter,\n"
	  "  creation time, families, GC policies, value types) and every cell a read returns, all versions,\n"
	  "  at their exact timestamps. A store is a path or bigtable://PROJECT/INSTANCE; --db is not used.\n"
	  "  <dst-store> is created if it does not exist yet; a table it lacks is created as the source's.\n"
	  "  A table it has must have the source's delimiter and every source family with the same GC policy\n"
	  "  and value type; the cells are then written into it (cells of the same column and timestamp are\n"
	  "  replaced, aggregate ones too: not added).\n"
	  "  round=ms         Round every timestamp down to a whole millisecond (a store that keeps only\n"
	  "                   milliseconds, as Bigtable, otherwise refuses the copy); two versions of one\n"
	  "                   column that round to the same timestamp are an error\n"
	  "  batch-size=<n>   Commit every n cells (default and at most 100000; also every 64 MiB)\n"
	  "  --quiet          No progress line (it shows only on a terminal anyway)\n"
	  "\n"
	  "  Everything is checked before anything is written: a cell the destination cannot hold (a value\n"
	  "  over its limit, a timestamp finer than it keeps) or a table whose schema differs is an error\n"
	  "  naming it, and nothing is copied. Then the cells are written in batches, each one committed. A\n"
	  "  copy that was interrupted is finished by running it again: nothing is duplicated.\n"
	  "\n"
	  "    Example: cellctl copy ~/.local/share/cellfs/default bigtable://my-project/my-instance quotes\n" },
	{ "count", cmd_count, CC_READ, "Count rows in a table",
	  "cellctl count <table> [prefix=<row-key-prefix>] [asof=<time>]\n"
	  "\n"
	  "  prefix=<row-key-prefix>    Count only rows whose key starts with this\n"
	  "  asof=<time>                Count the rows as they were then (see \"lookup\")\n" },
	{ "createfamily", cmd_createfamily, CC_WRITE, "Create a column family",
	  "cellctl createfamily <table> <family>[:<gcpolicy>[:<type>]]\n"
	  "\n"
	  "  Without a policy the family keeps every cell (\"never\"). For gcpolicy, see \"setgcpolicy\".\n"
	  "  type makes an aggregate family: intsum, intmin or intmax, in any case (see \"addtocell\").\n"
	  "\n"
	  "    Example: cellctl createfamily mobile-time-series stats_summary:maxversions=1\n" },
	{ "createtable", cmd_createtable, CC_CREATE, "Create a table",
	  "cellctl createtable <table> [families=<family>[:<gcpolicy>[:<type>]],...] [splits=<row-key>,...]\n"
	  "\n"
	  "  families     Column families and their garbage collection (gc) policies, comma-separated\n"
	  "               (CSV: quote an item that contains a comma). Put gc policies in quotes when they\n"
	  "               include shell operators && and ||. For gcpolicy, see \"setgcpolicy\".\n"
	  "               Types \"intsum\", \"intmin\" and \"intmax\" (in any case) make aggregate\n"
	  "               families (see \"addtocell\").\n"
	  "  splits       Accepted for cbt compatibility and ignored (a local store has no tablets)\n"
	  "\n"
	  "  Creates the store too if it does not exist yet.\n"
	  "\n"
	  "    Example: cellctl createtable mobile-time-series \"families=stats_summary:maxage=10d||maxversions=1,"
	  "stats_detail:maxage=10d||maxversions=1\"\n" },
	{ "deleteallrows", cmd_deleteallrows, CC_WRITE, "Delete all rows",
	  "cellctl deleteallrows <table>\n" },
	{ "deletecolumn", cmd_deletecolumn, CC_WRITE, "Delete all cells in a column",
	  "cellctl deletecolumn <table> <row-key> <family> <column> [app-profile=<app-profile-id>]\n"
	  "\n"
	  "  app-profile=<app-profile-id>    Accepted for cbt compatibility and ignored\n" },
	{ "deletefamily", cmd_deletefamily, CC_WRITE, "Delete a column family",
	  "cellctl deletefamily <table> <family>\n" },
	{ "deleterow", cmd_deleterow, CC_WRITE, "Delete a row",
	  "cellctl deleterow <table> <row-key> [app-profile=<app-profile-id>]\n"
	  "\n"
	  "  app-profile=<app-profile-id>    Accepted for cbt compatibility and ignored\n" },
	{ "deletetable", cmd_deletetable, CC_WRITE, "Delete a table",
	  "cellctl deletetable <table>\n" },
	{ "droprowrange", cmd_droprowrange, CC_WRITE, "Drop the rows under a row-key prefix, or all rows",
	  "cellctl droprowrange <table> (prefix=<row-key-prefix> | all=true)\n"
	  "\n"
	  "  prefix=<row-key-prefix>    Drop every row whose key starts with this (not empty)\n"
	  "  all=true                   Drop every row of the table (as deleteallrows)\n"
	  "\n"
	  "  Takes the same short time however many rows it drops; the space is reclaimed by gc.\n"
	  "\n"
	  "    Example: cellctl droprowrange mobile-time-series prefix=phone#4c410523#\n" },
	{ "dump", cmd_dump, CC_READ, "Write an exact copy of tables to standard output",
	  "cellctl dump [<table>...] > FILE\n"
	  "\n"
	  "  Writes every table (or the tables named) with its schema (delimiter, families, GC policies,\n"
	  "  value types) and every cell a read returns, all versions, in cellfs's checksummed dump\n"
	  "  format. The same store always gives the same bytes. \"cellctl restore\" reads it back.\n" },
	{ "export", cmd_export, CC_READ, "Write a table as CSV (cbt import's format) or JSON lines",
	  "cellctl export <table> [start=<row-key>] [end=<row-key>] [prefix=<row-key-prefix>] [regex=<regex>] "
	  "[columns=<family>:<qualifier>,...] [count=<n>] [cells-per-column=<n>] [format=<csv|jsonl>] "
	  "[timestamp=<value-encoded|now>] [asof=<time>]\n"
	  "\n"
	  "  Writes to standard output. The filters are read's (see \"read\"), asof= too.\n"
	  "  format=csv        (default) cbt import's CSV: a column family row, a qualifier row, then rows;\n"
	  "                    a row with several versions of a column takes several lines, newest first\n"
	  "  format=jsonl      One cell per line, every version exactly:\n"
	  "                    {\"row\":..,\"family\":..,\"qualifier\":..,\"ts\":<µs>,\"value\":..}; a bytes\n"
	  "                    field that is not valid UTF-8 is \"<name>_b64\" (base64) instead\n"
	  "  timestamp=value-encoded   (default) each CSV cell is <value>@<timestamp>: import it with\n"
	  "                    timestamp=value-encoded\n"
	  "  timestamp=now     plain values, newest version only (empty values cannot be told from none)\n"
	  "\n"
	  "  CSV cannot carry \"\\r\\n\" inside a field (refused) nor timestamps finer than milliseconds\n"
	  "  (cbt import truncates them; export warns). JSON lines carry everything.\n"
	  "\n"
	  "    Example: cellctl export mytable > mytable.csv && cellctl import copy mytable.csv timestamp=value-encoded\n" },
	{ "gc", cmd_gc, CC_WRITE, "Physically remove collected, dropped and deleted cells",
	  "cellctl gc [<table>]\n"
	  "\n"
	  "  Removes what reads no longer return (cells GC policies collected, dropped rows, deleted\n"
	  "  families; without <table> also deleted tables and abandoned restores) and prints what it freed.\n" },
	{ "help", cmd_help, CC_NONE, "Print help text",
	  "cellctl help [<command>]\n" },
	{ "import", cmd_import, CC_WRITE, "Import CSV (as cbt import), JSON lines or a DynamoDB export into a table",
	  "cellctl import <table> <input-file>|- [column-family=<family-name>] [timestamp=<now|value-encoded>] "
	  "[format=<csv|jsonl|dynamodb>] [key=<partition-key>[#<sort-key>]] [app-profile=<id>] [batch-size=<500>] "
	  "[workers=<1>] [--quiet] [--batches]\n"
	  "\n"
	  "  Reads cbt import's CSV: an optional column family row (first field empty; each family applies to\n"
	  "  its column and those to its right), a qualifier row (first field empty), then one row per line:\n"
	  "  the row key, then the cells; empty fields write nothing. RFC 4180 quoting: a quoted field may hold\n"
	  "  commas, doubled quotes and newlines. \"-\" reads standard input.\n"
	  "  column-family=<family-name>    There is no family row: every column is in this family\n"
	  "  timestamp=now                  (default) every cell gets the time of the import\n"
	  "  timestamp=value-encoded        A cell <value>@<timestamp> (µs, truncated to milliseconds as cbt\n"
	  "                                 does) gets that timestamp; without one, or if it does not parse,\n"
	  "                                 the time of the import and the whole field as the value\n"
	  "  format=jsonl                   JSON lines as export writes them (also recognised by a first '{'):\n"
	  "                                 exact timestamps, any bytes; one cell or one row per line\n"
	  "  format=dynamodb key=<pk>[#<sk>]  A DynamoDB table export (DynamoDB JSON, {\"Item\":{...}} a line).\n"
	  "                                 The row key: the value of attribute <pk>, or it, the table's\n"
	  "                                 delimiter and that of <sk>. S N B BOOL NULL: a column of\n"
	  "                                 column-family= (default cf) named after the attribute; L: versions\n"
	  "                                 of such a column, element i at the timestamp + i ms; SS NS BS: a\n"
	  "                                 family named after the attribute, a column per member holding one\n"
	  "                                 zero byte; M: a family named after the attribute, a column per key.\n"
	  "                                 Values: S as UTF-8, N its text as exported, B decoded, BOOL\n"
	  "                                 true/false, NULL empty, a nested set, map or list its DynamoDB JSON.\n"
	  "                                 Missing families are created (GC policy never).\n"
	  "                                 timestamp=now (default) or <µs since the epoch, whole ms>\n"
	  "  batch-size=<n>                 A batch holds at most n lines (default: up to 100000 cells)\n"
	  "  app-profile, workers           Accepted (checked as cbt checks them) and ignored\n"
	  "  --quiet                        No progress line (it shows only on a terminal anyway)\n"
	  "  --batches                      After each batch is committed and synced, print on stderr\n"
	  "                                 \"cellctl import: committed lines 1-<line>, <cells> cells\"\n"
	  "\n"
	  "  The whole input is checked before anything is written: a malformed line, a wrong number of\n"
	  "  fields, an unknown family or a bad timestamp writes nothing and names the line. Then it is\n"
	  "  written in batches, each committed and synced. An input may be gzip'd (its first bytes say so).\n"
	  "    Example: cat export/data/*.json.gz | cellctl import users - format=dynamodb key=user#ts\n" },
	{ "increment", cmd_increment, CC_WRITE, "Add to counter cells, atomically (ReadModifyWrite; not in cbt)",
	  "cellctl increment <table> <row-key> <family>:<column>=<delta> ...\n"
	  "\n"
	  "  Bigtable's ReadModifyWrite increment, which cbt has no command for: each column's newest cell, an\n"
	  "  8-byte big-endian signed integer (none: 0), plus <delta> (an integer; 0x.. and 0o.. too) is written\n"
	  "  as a new cell at the later of now and that cell's time. All in one transaction: increments from\n"
	  "  any number of processes at once count exactly. Prints each new value, one line each. The family\n"
	  "  must be a plain one (aggregate families add with addtocell).\n"
	  "    Example: cellctl increment table1 user1 stats:visits=1\n" },
	{ "keyviz", cmd_keyviz, CC_READ, "Report on a table's key design, by the rules of Google's guides",
	  "cellctl keyviz <table> [row-size=<bytes>] [row-limit=<bytes>] [cell-size=<bytes>] [max-families=<n>]\n"
	  "cellctl keyviz <table> out=<file.svg>\n"
	  "\n"
	  "  Reads the table's keys once (no values) and prints, per row-key segment depth (the table's\n"
	  "  delimiter splits keys), how many distinct values there are and what they look like (timestamp,\n"
	  "  reversed timestamp, number, zero-padded number, sequence, hash, salt, domain, text), then the\n"
	  "  findings: the rules of the schema guides the table breaks, each with its numbers and example\n"
	  "  keys; \"no findings\" if none. With --format=json, all of it as one JSON object on one line.\n"
	  "  The rules: keys starting with a timestamp or a sequential number (what share of the newest\n"
	  "  writes land in the last 1% of the rows), a hashed or salted prefix, numbers not zero-padded\n"
	  "  (\"10\" sorts before \"9\"), reversed timestamps, rows over row-size or near row-limit, cells\n"
	  "  over cell-size, more than max-families families, and columns written more versions than their\n"
	  "  GC policy keeps (cells collected and not yet removed by gc).\n"
	  "  row-size=<bytes>       A row's values above this are a finding (default 100M; K, M, G: KiB...)\n"
	  "  row-limit=<bytes>      A row at 80% of this or more is near the hard limit (default 256M)\n"
	  "  cell-size=<bytes>      A cell above this is a finding (default 10M)\n"
	  "  max-families=<n>       More families than this are a finding (default 100)\n"
	  "\n"
	  "  With out=<file.svg>, draws the table's heatmap there instead, as Bigtable's Key Visualizer does:\n"
	  "  key ranges of about equal row counts (top: the first key) against time (one column a minute,\n"
	  "  or more past 360), reads and writes side by side, dark to bright. Open it in a browser; hovering\n"
	  "  a cell shows its count, first key and time. The store records, per table and minute, the rows\n"
	  "  read and written through it (the mount and cellctl alike) in up to 64 key ranges, for a week;\n"
	  "  \"cellctl updatetable <table> keyviz=off\" turns that off for a table.\n"
	  "\n"
	  "    Example: cellctl keyviz quotes\n"
	  "    Example: cellctl keyviz quotes out=quotes.svg\n" },
	{ "lookup", cmd_lookup, CC_READ, "Read from a single row",
	  "cellctl lookup <table> <row-key> [columns=<family>:<qualifier>,...] [cells-per-column=<n>] "
	  "[keys-only=<true|false>] [asof=<time>]\n"
	  "\n"
	  "  columns=<family>:<qualifier>,...    Read only these columns, comma-separated; \"f:\" is a whole\n"
	  "                                      family, \"q\" or \":q\" a qualifier in any family. Both are\n"
	  "                                      regular expressions in RE2 syntax, as in cbt, matching whole\n"
	  "                                      names byte by byte\n"
	  "  cells-per-column=<n>                Read only this number of cells per column\n"
	  "  keys-only=<true|false>              Print cells without their values\n"
	  "  include-stats=full                  Print cbt's summary of the rows and cells seen and returned\n"
	  "  asof=<time>                         Read the row as it was at <time> (not in cbt): only cells at\n"
	  "                                      or before it, as if nothing newer had been written (what\n"
	  "                                      was deleted or collected since stays gone). <time> is RFC\n"
	  "                                      3339 (2026-11-26T05:34:38Z, 2026-11-26 06:34:38.5+01:00)\n"
	  "                                      or an integer of microseconds since the epoch\n"
	  "  app-profile=<app-profile-id>        Accepted for cbt compatibility and ignored\n" },
	{ "ls", cmd_ls, CC_READ, "List tables and column families",
	  "cellctl ls                List tables\n"
	  "cellctl ls <table>        List a table's column families and garbage collection policies\n" },
	{ "read", cmd_read, CC_READ, "Read rows",
	  "cellctl read <table> [start=<row-key>] [end=<row-key>] [prefix=<row-key-prefix>] [regex=<regex>] "
	  "[reversed=<true|false>] [columns=<family>:<qualifier>,...] [count=<n>] [cells-per-column=<n>] "
	  "[keys-only=<true|false>] [asof=<time>]\n"
	  "\n"
	  "  start=<row-key>                     Start reading at this row\n"
	  "  end=<row-key>                       Stop reading before this row\n"
	  "  prefix=<row-key-prefix>             Read rows with this prefix (not with start/end)\n"
	  "  regex=<regex>                       Read rows whose whole key matches this regular expression\n"
	  "                                      (RE2 syntax, as in cbt; one byte is one character)\n"
	  "  reversed=<true|false>               Read rows in descending key order\n"
	  "  columns=<family>:<qualifier>,...    Read only these columns, comma-separated (see \"lookup\")\n"
	  "  count=<n>                           Read only this many rows\n"
	  "  cells-per-column=<n>                Read only this many cells per column\n"
	  "  keys-only=<true|false>              Print cells without their values\n"
	  "  include-stats=full                  Print cbt's summary of the rows and cells seen and returned\n"
	  "  asof=<time>                         Read the table as it was at <time> (see \"lookup\")\n"
	  "  app-profile=<app-profile-id>        Accepted for cbt compatibility and ignored\n" },
	{ "restore", cmd_restore, CC_CREATE, "Restore tables from a dump",
	  "cellctl restore [<file>] [overwrite=<true|false>] [round=ms]\n"
	  "\n"
	  "  Reads a dump written by \"cellctl dump\" from <file> (or standard input, or \"-\") and creates\n"
	  "  its tables exactly. All or nothing: a truncated or corrupt dump restores nothing.\n"
	  "  overwrite=true    Replace tables that exist (else an existing table is an error)\n"
	  "  round=ms          Onto Bigtable: round timestamps down to whole milliseconds (as copy's)\n"
	  "\n"
	  "  Onto Bigtable (no transactions) the dump is checked whole in a temporary local store in\n"
	  "  $TMPDIR, then copied; if the copy fails, the tables it made are deleted again, and the\n"
	  "  tables overwrite=true replaces are gone (the error says so).\n"
	  "\n"
	  "  Creates the store too if it does not exist yet.\n" },
	{ "set", cmd_set, CC_WRITE, "Set value of a cell (write)",
	  "cellctl set <table> <row-key> <family>:<column>=<val>[@<timestamp>] ...\n"
	  "\n"
	  "  <family>:<column>=<val>[@<timestamp>] may be repeated to set several cells of the row at once.\n"
	  "\n"
	  "    timestamp is an optional integer (Go syntax: 0x.., 0o.., 0b.., '_' between digits), in\n"
	  "    microseconds since 1970-01-01 00:00:00 UTC, truncated to milliseconds as cbt does.\n"
	  "    If it cannot be parsed, '@<timestamp>' is part of the value. Without it the time is now.\n"
	  "    A value ends at its first newline, as in cbt.\n" },
	{ "setgcpolicy", cmd_setgcpolicy, CC_WRITE,
	  "Set the garbage-collection policy (age, versions) for a column family",
	  "cellctl setgcpolicy <table> <family> ((maxage=<d> | maxversions=<n>) [(and|or) (maxage=<d> | "
	  "maxversions=<n>),...] | never) [force]\n"
	  "\n"
	  "  maxage=<d>         Maximum timestamp age to preserve. Acceptable units: ms, s, m, h, d\n"
	  "  maxversions=<n>    Maximum number of versions to preserve\n"
	  "  Put garbage collection policies in quotes when they include shell operators && and ||.\n"
	  "  A trailing \"force\" is accepted for cbt compatibility and ignored.\n"
	  "\n"
	  "    Examples:\n"
	  "      cellctl setgcpolicy mobile-time-series stats_detail maxage=10d\n"
	  "      cellctl setgcpolicy mobile-time-series stats_summary maxage=10d or maxversions=1\n" },
	{ "stats", cmd_stats, CC_READ, "Print rows, cells and sizes per table and family",
	  "cellctl stats [<table>]\n"
	  "\n"
	  "  One tab-separated line per table (family \"-\") and per family: rows, visible cells, their\n"
	  "  values' raw bytes and stored bytes (compressed, with cell headers), key bytes, the compression\n"
	  "  ratio raw/stored, and garbage (stored cells reads no longer return, which \"cellctl gc\" frees).\n" },
	{ "updatetable", cmd_updatetable, CC_WRITE, "Update a table's properties (the Key Visualizer's recording)",
	  "cellctl updatetable <table> keyviz=on|off\n"
	  "\n"
	  "  keyviz=off    Stop recording the table's reads and writes for \"cellctl keyviz\" (what was\n"
	  "                recorded stays, up to a week); keyviz=on (the default) records them again.\n" },
	{ "verify", cmd_verify, CC_READ, "Read and check every record of the store",
	  "cellctl verify\n"
	  "\n"
	  "  Reads every schema record, drop record, cell key and value (decompressed) and prints one line\n"
	  "  per problem (table, row, column and timestamp where known). Exit status 1 if any is found.\n" },
};

static const size_t ncommands = sizeof commands / sizeof commands[0];

static const struct cmd *find_command(const char *name)
{
	for (size_t i = 0; i < ncommands; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* ---- Messages ----------------------------------------------------------------------------------- */

static const char *current_cmd; /* for the "cellctl CMD:" prefix */

int cc_error(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout); /* whatever was printed before the error comes first */
	if (current_cmd)
		fprintf(stderr, "cellctl %s: ", current_cmd);
	else
		fputs("cellctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	putc('\n', stderr);
	return CC_FAIL;
}

int cc_usage(const struct cellctl *cc)
{
	const char *u = cc->cmd->usage;

	return cc_error("usage: %.*s", (int)strcspn(u, "\n"), u);
}

int cc_args_kv(int argc, char *const argv[], const char *const valid[], const char *vals[])
{
	char *err = NULL;
	int rc = CC_OK;

	if (args_kv(argc, argv, valid, vals, &err) < 0)
		rc = cc_error("%s", err ? err : strerror(ENOMEM));
	free(err);
	return rc;
}

enum { QRING = 8 };
static char *qring[QRING];
static unsigned qnext;

static void qring_free(void)
{
	for (unsigned i = 0; i < QRING; i++)
		free(qring[i]);
}

const char *cc_q(const void *s, size_t n)
{
	char **slot = &qring[qnext++ % QRING];

	free(*slot);
	*slot = cbtfmt_quote_dup(s, n);
	return *slot ? *slot : "<nomem>";
}

const char *cc_qs(const char *s)
{
	return cc_q(s, strlen(s));
}

const char *cc_strerror(int err)
{
	const char *why = cs_last_error();

	return why ? why : strerror(-err);
}

int cc_store_error(cs_txn *txn, int err, const char *what, const char *table, const char *family)
{
	cs_table_info *info = NULL;
	int found;

	if (err != -ENOENT && err != -EEXIST)
		return cc_error("%s: %s", what, cc_strerror(err));
	found = txn ? cs_table_info_get(txn, table, &info) : -ENOENT;
	cs_table_info_free(info);
	if (err == -ENOENT && found == -ENOENT)
		return cc_error("table %s not found", cc_qs(table));
	if (err == -EEXIST && !family)
		return cc_error("table %s already exists", cc_qs(table));
	if (err == -EEXIST)
		return cc_error("family %s already exists in table %s", cc_qs(family), cc_qs(table));
	if (family)
		return cc_error("family %s not found in table %s", cc_qs(family), cc_qs(table));
	return cc_error("%s: %s", what, cc_strerror(err));
}

/* ---- The store ---------------------------------------------------------------------------------- */

/* --timeout: each call to a remote store's service may take this long (ms; 0: the store's default). */
static unsigned deadline_ms;
/* --stats: print what each store's service cost as it is closed (cc_store_close). */
static bool print_stats;

/* What cs_store_open() of PATH returned, RC, in words: CC_OK, or CC_FAIL with the error printed. */
static int open_status(int rc, const char *path)
{
	if (rc == -ENOENT)
		return cc_error("no store at %s", cc_qs(path));
	if (rc == -ENOTEMPTY)
		return cc_error("cannot create a store in %s: the directory holds other files", cc_qs(path));
	if (rc == -EIO && !cs_last_error())
		return cc_error("cannot open store %s: not a valid cellfs store, or an I/O error", cc_qs(path));
	if (rc < 0)
		return cc_error("cannot open store %s: %s", cc_qs(path), cc_strerror(rc));
	return CC_OK;
}

int cellctl_open(struct cellctl *cc)
{
	const char *env = getenv("CELLFS_DB");
	cs_open_opts opts = { .deadline_ms = deadline_ms, .remote = cc_remote() };
	char *path;
	bool is_default = false;
	int rc, status;

	if (cc->st)
		return CC_OK;
	if (cc->db) {
		path = strdup(cc->db);
	} else if (env && *env) {
		path = strdup(env);
	} else {
		rc = cs_default_path(&path);
		if (rc < 0)
			return cc_error("cannot locate the default store (set --db or CELLFS_DB): %s", strerror(-rc));
		is_default = true;
	}
	if (!path)
		return cc_error("%s", strerror(ENOMEM));
	/* A reading command opens read-only (a writable open of a store in memory waits for a commit in
	 * progress elsewhere: cs_store_open()); the default store is made on first use, by any command. */
	if (cc->cmd->access == CC_READ)
		opts.flags = CS_OPEN_RDONLY;
	else if (is_default || cc->cmd->access == CC_CREATE)
		opts.flags = CS_OPEN_CREATE;
	if (cc->asof) { /* (the past of a store that does not exist is not made: "no store at") */
		opts.flags = CS_OPEN_ASOF;
		opts.asof = cc->asof_us;
	}
	rc = cs_store_open(path, &opts, &cc->st);
	if (rc == -ENOENT && is_default && cc->cmd->access == CC_READ && !cc->asof) {
		opts.flags = CS_OPEN_CREATE;
		rc = cs_store_open(path, &opts, &cc->st);
	}
	status = open_status(rc, path);
	free(path);
	return status;
}

int cc_store_open(const char *path, unsigned flags, cs_store **st)
{
	cs_open_opts opts = { .flags = flags, .deadline_ms = deadline_ms, .remote = cc_remote() };

	return open_status(cs_store_open(path, &opts, st), path);
}

void cc_store_close(cs_store *st, const char *name)
{
	char *text;
	size_t len;

	if (st && print_stats && !cs_store_counters(st, &text, &len)) {
		if (len) {
			fflush(stdout); /* (the command's output first, when both go to one place) */
			fprintf(stderr, "# stats of %s\n%s", name, text);
		}
		free(text);
	}
	cs_store_close(st);
}

int cc_asof(struct cellctl *cc, const char *val)
{
	const char *why;

	if (!val || !*val)
		return CC_OK;
	if (cs_time_parse(val, &cc->asof_us, &why) < 0)
		return cc_error("bad asof %s: %s (give RFC 3339, as 2026-11-26T05:34:38Z, or microseconds since the "
				"epoch)", cc_qs(val), why);
	cc->asof = true;
	return CC_OK;
}

int cellctl_begin(struct cellctl *cc, cs_txn **txn)
{
	int rc = cellctl_open(cc);

	if (rc != CC_OK)
		return rc;
	rc = cs_txn_begin(cc->st, cc->cmd->access == CC_READ ? CS_TXN_RDONLY : 0, txn);
	if (rc < 0)
		return cc_error("cannot begin a transaction: %s", cc_strerror(rc));
	return CC_OK;
}

int cellctl_commit(cs_txn *txn)
{
	int rc = cs_txn_commit(txn);

	if (rc == -ENOSPC)
		return cc_error("the store is full, nothing was written: %s", strerror(ENOSPC));
	if (rc < 0)
		return cc_error("commit failed, nothing was written: %s", cc_strerror(rc));
	return CC_OK;
}

/* ---- Help --------------------------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fputs("Usage: cellctl [--db PATH] <command> [<argument>...]\n"
	      "\n"
	      "cellctl reads and writes a cellfs store in the dialect of Google's cbt tool: the same\n"
	      "commands and arguments, and the same output for the same data.\n"
	      "\n"
	      "Commands:\n", f);
	for (size_t i = 0; i < ncommands; i++)
		fprintf(f, "    %-15s %s\n", commands[i].name, commands[i].desc);
	fputs("\n"
	      "Options:\n"
	      "    --db PATH       The store to use. Default: $CELLFS_DB, else the default store\n"
	      "                    ($XDG_DATA_HOME/cellfs/default or ~/.local/share/cellfs/default),\n"
	      "                    which is created on first use\n"
	      "    --format FMT    What ls, read, lookup, count and keyviz print: text (cbt's output,\n"
	      "                    the default) or json (JSON lines: one object per row, table,\n"
	      "                    family, count or report)\n"
	      "    --timeout DURATION  On bigtable://: how long each call to Bigtable may take\n"
	      "                    before the command fails (cbt's -timeout, also spelt so: 30s,\n"
	      "                    500ms, 1m30s; default 30s, schema changes 60s)\n"
	      "    --stats         On bigtable://: print to stderr, at the end, the calls made to\n"
	      "                    Bigtable by method, retries, and the bytes, rows and cells\n"
	      "                    received\n"
	      "    -project P -instance I  cbt's flags: the store is bigtable://P/I; ~/.cbtrc (or\n"
	      "                    $CBTRC) fills in what they leave out\n"
	      "    --cbtrc         The store is the instance ~/.cbtrc names (a bare cellctl uses\n"
	      "                    the local store whatever .cbtrc says)\n"
	      "    -creds FILE, -access-token T, -data-endpoint H:P, -admin-endpoint H:P,\n"
	      "    -cert-file PEM, -user-agent S, -app-profile ID  How to reach a Bigtable\n"
	      "                    instance, as cbt's flags of those names\n"
	      "    -o FILE         Write standard output to FILE\n"
	      "    --help, -h      Print this help\n"
	      "    --version       Print cellctl's version\n"
	      "\n"
	      "Use \"cellctl help <command>\" (or \"cellctl <command> --help\") for more information\n"
	      "about a command.\n", f);
}

static int cmd_help(struct cellctl *cc, int argc, char **argv)
{
	const struct cmd *c;

	if (argc == 0) {
		usage(stdout);
		return CC_OK;
	}
	if (argc > 1)
		return cc_usage(cc);
	c = find_command(argv[0]);
	if (!c)
		return cc_error("unknown command %s", cc_qs(argv[0]));
	fputs(c->usage, stdout);
	return CC_OK;
}

/* ---- main --------------------------------------------------------------------------------------- */

/* The test hook $CELLFS_FAULT (cs_fault_arm_spec()): says, as the process ends, whether the injected
 * fault fired (or how many calls it counted), so a test looping N upward knows when to stop. */
static void fault_report(void)
{
	if (cs_fault_fired())
		fprintf(stderr, "cellctl: CELLFS_FAULT=%s fired\n", getenv("CELLFS_FAULT"));
	else
		fprintf(stderr, "cellctl: CELLFS_FAULT=%s did not fire: %llu calls\n", getenv("CELLFS_FAULT"),
			(unsigned long long)cs_fault_calls());
}

static int finish(int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "cellctl: writing output: %s\n", strerror(errno));
		return CC_FAIL;
	}
	return status;
}

int main(int argc, char **argv)
{
	static char outbuf[1 << 16];
	struct cellctl cc = { 0 };
	int i, rc, status;

	atexit(qring_free);
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	__fsetlocking(stdout, FSETLOCKING_BYCALLER); /* only this thread prints: no lock a character */
	if (getenv("CELLFS_FAULT")) {
		if (cs_fault_arm_spec(getenv("CELLFS_FAULT")))
			return cc_error("CELLFS_FAULT=%s is not KINDS:N (KINDS lmdb, zstd, alloc joined by +)",
					getenv("CELLFS_FAULT"));
		atexit(fault_report);
	}
	if (!getenv("CELLCTL_NO_FAULT_GUARD")) /* a damaged store: -EIO, not a crash (tests: let ASan see it) */
		cs_store_catch_faults();
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			i++;
			break;
		} else if (!strcmp(a, "--db")) {
			if (++i == argc)
				return cc_error("option --db needs a PATH");
			cc.db = argv[i];
		} else if (!strncmp(a, "--db=", 5)) {
			cc.db = a + 5;
		} else if (!strcmp(a, "--format") || !strncmp(a, "--format=", 9)) {
			const char *fmt = a[8] == '=' ? a + 9 : (++i < argc ? argv[i] : NULL);

			if (!fmt)
				return cc_error("option --format needs text or json");
			if (!strcmp(fmt, "json"))
				cc.format = CC_FORMAT_JSON;
			else if (!strcmp(fmt, "text"))
				cc.format = CC_FORMAT_TEXT;
			else
				return cc_error("unknown format %s for --format (want text or json)", cc_qs(fmt));
		} else if (!strcmp(a, "--timeout") || !strncmp(a, "--timeout=", 10) || !strcmp(a, "-timeout") ||
			   !strncmp(a, "-timeout=", 9)) {
			const char *eq = strchr(a, '='), *why;
			const char *val = eq ? eq + 1 : (++i < argc ? argv[i] : NULL);

			if (!val)
				return cc_error("option %s needs a DURATION (30s, 500ms, 1m30s)", a);
			if (cs_duration_parse(val, &deadline_ms, &why))
				return cc_error("option --timeout=%s: %s (give a duration as cbt's -timeout takes "
						"it: 30s, 500ms, 1m30s)", val, why);
		} else if ((rc = cc_remote_flag(argc, argv, &i))) {
			if (rc != 1)
				return finish(CC_FAIL);
		} else if (!strcmp(a, "--stats")) {
			print_stats = true;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return finish(CC_OK);
		} else if (!strcmp(a, "--version")) {
			printf("cellctl %s\n", CELLFS_VERSION);
			return finish(CC_OK);
		} else {
			cc_error("unknown option %s (see \"cellctl --help\")", cc_qs(a));
			return CC_FAIL;
		}
	}
	if (cc.db && !*cc.db)
		return cc_error("option --db needs a PATH");
	if (cc_remote_store(&cc.db, &deadline_ms) != CC_OK)
		return finish(CC_FAIL);
	if (i == argc)
		return cc_error("no command given (see \"cellctl --help\")");
	cc.cmd = find_command(argv[i]);
	if (!cc.cmd)
		return cc_error("unknown command %s (see \"cellctl --help\")", cc_qs(argv[i]));
	current_cmd = cc.cmd->name;
	/* `cellctl CMD --help` (or -h) as the only argument is `cellctl help CMD`: no table or row is named
	 * "--help" in practice, and a user typing it wants the synopsis, not "table not found". */
	if (argc - i == 2 && (!strcmp(argv[i + 1], "--help") || !strcmp(argv[i + 1], "-h"))) {
		fputs(cc.cmd->usage, stdout);
		return finish(CC_OK);
	}
	cbtfmt_tz_init();
	status = cc.cmd->fn(&cc, argc - i - 1, argv + i + 1);
	/* The store does not fsync each commit; a write command that returns has reached the disk, as a
	 * cbt write that returns has reached Bigtable. */
	if (status == CC_OK && cc.st && cc.cmd->access != CC_READ) {
		cs_heat_flush(cc.st); /* the Key Visualizer's counts, into the synced state (lost if it fails) */
		rc = cs_store_sync(cc.st);
		if (rc < 0)
			status = cc_error("the write is committed but could not be flushed to disk: %s", strerror(-rc));
	}
	cc_store_close(cc.st, cc.db ? cc.db : getenv("CELLFS_DB") && *getenv("CELLFS_DB") ? getenv("CELLFS_DB") :
			      "the default store");
	return finish(status);
}
