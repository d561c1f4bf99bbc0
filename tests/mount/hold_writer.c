/* hold_writer.c — `hold_writer STORE`: take the store's writer lock (a write transaction, as a cellctl
 * import does for each batch), print "held" and keep it until standard input ends, then abort. The
 * mount-slow test uses it to make the daemon's write-backs wait. Exit 1 if the store cannot be opened. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cellstore.h"

int main(int argc, char **argv)
{
	cs_store *st;
	cs_txn *txn;
	char buf[64];
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: hold_writer STORE\n");
		return 2;
	}
	if ((rc = cs_store_open(argv[1], NULL, &st)) || (rc = cs_txn_begin(st, 0, &txn))) {
		fprintf(stderr, "hold_writer: %s: %s\n", argv[1], strerror(-rc));
		return 1;
	}
	printf("held\n");
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	cs_txn_abort(txn);
	cs_store_close(st);
	return 0;
}
