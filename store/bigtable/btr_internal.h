/* btr_internal.h — what the transport's files (btr.c: calls and streams; btr_conn.c: connections) share:
 * the connection's struct. Internal to the btr module. */
#ifndef CELLFS_BTR_INTERNAL_H
#define CELLFS_BTR_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <grpc/grpc.h>

#include "btr.h"

#define BTR_COUNTED_METHODS 24 /* more methods than btr's callers use; others count as the last */

struct btr_conn {
	grpc_channel *ch[2];     /* [BTR_DATA], [BTR_ADMIN]: the same channel for an emulator */
	unsigned deadline_ms[2]; /* of a unary call, per API */
	unsigned idle_ms;        /* a stream's wait for one message */
	/* until when (bt_mono-style ms, CLOCK_MONOTONIC; 0: not) calls fail at once, because one ended at
	 * its deadline without an answer just before (btr_quiet); any answer clears it. Atomic. */
	int64_t quiet_until;
	bool emulator;
	char *endpoint[2];       /* host:port of [BTR_DATA], [BTR_ADMIN] ($BIGTABLE_EMULATOR_HOST's for both) */
	char *app_profile;       /* "" for none */
	char who[400];           /* the credential (btr_who) */
	char roots[300];         /* the TLS roots' file, for a certificate that does not verify */
	/* btr_counters_text's counters, added to with relaxed atomics (a read counts every row it takes);
	 * count_lock only guards claiming a slot of calls[] for a new method, NAME the method's last path
	 * element (a static string of the caller's) */
	pthread_mutex_t count_lock;
	struct { const char *name; uint64_t n; } calls[BTR_COUNTED_METHODS];
	uint64_t retries, msgs_in, bytes_in, bytes_out, rows_in, cells_in;
	char instance_name[];    /* projects/P/instances/I */
};

#endif
