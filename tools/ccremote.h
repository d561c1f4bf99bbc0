/* ccremote.h — cbt's global flags and ~/.cbtrc in cellctl: `cellctl -project P -instance I CMD` is
 * `cellctl --db bigtable://P/I CMD`; -creds, -access-token, -data-endpoint, -admin-endpoint, -cert-file,
 * -user-agent and -app-profile say how to reach it; -o FILE sends stdout to FILE; --cbtrc takes the
 * store from ~/.cbtrc (or $CBTRC). A flag may be -name VALUE, -name=VALUE, --name VALUE or --name=VALUE,
 * as Go's flag package (cbt's) reads them. */
#ifndef CELLFS_CCREMOTE_H
#define CELLFS_CCREMOTE_H

#include "cellctl.h"

/* cc_remote_flag — if ARGV[*I] is one of the flags above, takes it (and its value: *I moves past it) and
 * returns 1; returns 0 if it is not one, -1 (the error printed) for a bad value or a missing one. */
int cc_remote_flag(int argc, char **argv, int *i);

/* cc_remote_store — after the flags: with -project, -instance or --cbtrc, sets *DB to the instance they
 * name, ~/.cbtrc filling in what the flags leave out (*DB given too is an error). With none of them,
 * *DB stays: a bigtable:// *DB still reads ~/.cbtrc's settings the flags leave out, a local store (the
 * default one included) never does. .cbtrc's timeout sets *DEADLINE_MS when it is 0 (no -timeout).
 * Returns CC_OK, or CC_FAIL with the error printed (a .cbtrc that does not parse, --cbtrc without a
 * .cbtrc, a project without an instance). */
int cc_remote_store(const char **db, unsigned *deadline_ms);

/* The connection settings gathered, for cs_open_opts.remote; valid until exit. */
const cs_remote *cc_remote(void);

#endif
