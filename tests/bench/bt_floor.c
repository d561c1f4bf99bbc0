/* bt_floor.c — the cheapest full read of a Bigtable table through cellfs's transport: one ReadRows of the
 * whole table whose messages are received and counted, never decoded or printed. Its CPU is what gRPC
 * and the kernel cost a client for the stream itself, the floor under `cellctl read` (bench_bigtable.sh).
 *
 *     bt_floor PROJECT INSTANCE TABLE      prints "MESSAGES messages, BYTES bytes"
 *
 * With $BIGTABLE_EMULATOR_HOST, the emulator there. Exit 1 with the status on a failed stream.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bigtable.pb-c.h"
#include "btr.h"

int main(int argc, char **argv)
{
	btr_conn *c = NULL;
	btr_stream *s = NULL;
	char name[BTR_NAME_MAX], routing[BTR_NAME_MAX * 3 + 64];
	Google__Bigtable__V2__ReadRowsRequest req = GOOGLE__BIGTABLE__V2__READ_ROWS_REQUEST__INIT;
	const uint8_t *msg;
	size_t len;
	uint64_t nmsg = 0, nbytes = 0;
	int rc;

	if (argc != 4) {
		fprintf(stderr, "usage: bt_floor PROJECT INSTANCE TABLE\n");
		return 2;
	}
	if ((rc = btr_connect(argv[1], argv[2], NULL, &c)) ||
	    (rc = btr_table_name(c, argv[3], name, sizeof name)) ||
	    (rc = btr_routing(c, BTR_DATA, "table_name", name, routing, sizeof routing))) {
		fprintf(stderr, "bt_floor: %s\n", strerror(-rc));
		btr_close(c);
		return 1;
	}
	req.table_name = name;
	if ((rc = btr_stream_open(c, BTR_DATA, "/google.bigtable.v2.Bigtable/ReadRows", &req.base, routing, &s))) {
		fprintf(stderr, "bt_floor: ReadRows: %s\n", strerror(-rc));
		btr_close(c);
		return 1;
	}
	while ((rc = btr_stream_next_bytes(s, &msg, &len)) == 1) {
		nmsg++;
		nbytes += len;
	}
	if (rc < 0)
		fprintf(stderr, "bt_floor: ReadRows: %s: %s\n", btr_code_name(btr_stream_status(s)->code),
			btr_stream_status(s)->message);
	else
		printf("%llu messages, %llu bytes\n", (unsigned long long)nmsg, (unsigned long long)nbytes);
	btr_stream_close(s);
	btr_close(c);
	return rc < 0;
}
