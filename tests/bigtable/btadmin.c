/* btadmin.c — another client of the instance, for the scripts: makes what neither cbt 1.23 nor cellctl
 * makes. `btadmin PROJECT INSTANCE TABLE [FAMILY...]` sends one CreateTable of TABLE (any name: the
 * emulator takes names Bigtable refuses) whose families carry no GC rule at all (ColumnFamily.gc_rule
 * absent; cbt and cellctl send an empty rule), through $BIGTABLE_EMULATOR_HOST. Exit 0, or 1 with the
 * server's status on stderr. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin.pb-c.h"
#include "btr.h"

int main(int argc, char **argv)
{
	Google__Bigtable__Admin__V2__CreateTableRequest req = GOOGLE__BIGTABLE__ADMIN__V2__CREATE_TABLE_REQUEST__INIT;
	Google__Bigtable__Admin__V2__Table t = GOOGLE__BIGTABLE__ADMIN__V2__TABLE__INIT;
	Google__Bigtable__Admin__V2__Table__ColumnFamiliesEntry *ent, **entp;
	Google__Bigtable__Admin__V2__ColumnFamily *cf;
	char routing[BTR_NAME_MAX * 3 + 64];
	ProtobufCMessage *resp = NULL;
	btr_status st;
	btr_conn *c;
	size_t n;
	int rc;

	if (argc < 4) {
		fprintf(stderr, "usage: btadmin PROJECT INSTANCE TABLE [FAMILY...]\n");
		return 2;
	}
	n = (size_t)argc - 4;
	ent = calloc(n + 1, sizeof(*ent));
	entp = calloc(n + 1, sizeof(*entp));
	cf = calloc(n + 1, sizeof(*cf));
	if (!ent || !entp || !cf || btr_connect(argv[1], argv[2], NULL, &c)) {
		fprintf(stderr, "btadmin: cannot start\n");
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		google__bigtable__admin__v2__table__column_families_entry__init(&ent[i]);
		google__bigtable__admin__v2__column_family__init(&cf[i]); /* gc_rule NULL: absent */
		ent[i].key = argv[4 + i];
		ent[i].value = &cf[i];
		entp[i] = &ent[i];
	}
	t.n_column_families = n;
	t.column_families = entp;
	t.granularity = GOOGLE__BIGTABLE__ADMIN__V2__TABLE__TIMESTAMP_GRANULARITY__MILLIS;
	req.parent = (char *)btr_instance_name(c);
	req.table_id = argv[3];
	req.table = &t;
	rc = btr_routing(c, BTR_ADMIN, "parent", req.parent, routing, sizeof(routing));
	if (!rc)
		rc = btr_unary(c, BTR_ADMIN, "/google.bigtable.admin.v2.BigtableTableAdmin/CreateTable", &req.base,
			       &google__bigtable__admin__v2__table__descriptor, &resp, routing, 0, &st);
	if (rc)
		fprintf(stderr, "btadmin: CreateTable %s: %s (%d: %s)\n", argv[3], strerror(-rc), (int)st.code, st.message);
	else
		protobuf_c_message_free_unpacked(resp, NULL);
	btr_close(c);
	free(ent);
	free(entp);
	free(cf);
	return rc ? 1 : 0;
}
