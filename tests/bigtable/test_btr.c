/* test_btr.c — the gRPC transport (store/bigtable/btr.h) and the messages of its proto/ files against a
 * private Bigtable emulator on a free loopback port, and against endpoints that refuse or never answer.
 * The tests that need no emulator run first; without the emulator ($CBT_EMULATOR or the Cloud SDK's) the
 * rest are skipped (exit 77).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include <grpc/grpc.h>

#include "btr.h"
#include "tbtr.h"
#include "temu.h"

static struct temu emu; /* the online group's (temu.h) */

/* ---- endpoints that fail */

/* A loopback port nothing listens on (bound, then closed). */
static int closed_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* A loopback socket that listens and never accepts nor answers: connections complete in the kernel's
 * backlog and then hear nothing. Returns the fd (close it after) and the port in *PORT. */
static int silent_listener(int *port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(listen(fd, 16), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/* GetTable (unary, idempotent: retried) and ReadRows (a stream) against C's endpoint: both must end in
 * -EIO with a status that says the endpoint failed, rather than hang. */
/* Wait until C is no longer quiet (btr_quiet: a call just timed out), so that the next call is sent. */
static void quiet_over(btr_conn *c)
{
	for (int i = 0; i < 600 && btr_quiet(c); i++)
		usleep(50000);
	assert_int_equal(btr_quiet(c), 0);
}

static void assert_calls_fail_eio(btr_conn *c)
{
	btr_status st;
	int err;
	Table *t = tb_get_table(c, "t", &err, &st);
	assert_null(t);
	assert_int_equal(err, -EIO);
	assert_true(st.code == GRPC_STATUS_UNAVAILABLE || st.code == GRPC_STATUS_DEADLINE_EXCEEDED);
	assert_true(st.message[0] != '\0');

	/* and once more without retries: a MutateRow that may not be repeated */
	quiet_over(c);
	Google__Bigtable__V2__ReadModifyWriteRowRequest rmw = GOOGLE__BIGTABLE__V2__READ_MODIFY_WRITE_ROW_REQUEST__INIT;
	rmw.table_name = tb_table_path(c, "t");
	ProtobufCMessage *resp = NULL;
	err = btr_unary(c, BTR_DATA, DATA("ReadModifyWriteRow"), &rmw.base,
			&google__bigtable__v2__read_modify_write_row_response__descriptor, &resp,
			tb_route(c, BTR_DATA, "table_name", rmw.table_name), 0, &st);
	assert_int_equal(err, -EIO);
	assert_null(resp);
	assert_true(st.code == GRPC_STATUS_UNAVAILABLE || st.code == GRPC_STATUS_DEADLINE_EXCEEDED);

	struct cells *cs;
	quiet_over(c);
	err = tb_read_rows(c, "t", NULL, &cs, &st);
	assert_int_equal(err, -EIO);
	assert_int_equal(cs->n, 0);
	assert_true(st.code == GRPC_STATUS_UNAVAILABLE || st.code == GRPC_STATUS_DEADLINE_EXCEEDED);
	assert_true(st.message[0] != '\0');
	tb_cells_free(cs);
}

/* A call that waited its whole deadline makes the conn quiet: the calls and streams begun then fail at
 * once, saying why, without being sent (programs queued behind one lookup fail within their own
 * deadline); once the quiet ends, calls are sent again. */
static void test_btr__quiet_after_a_call_without_answer(void **state)
{
	int port;
	int fd = silent_listener(&port);
	char host[64];
	btr_status st;
	int err;
	snprintf(host, sizeof host, "127.0.0.1:%d", port);
	setenv("BIGTABLE_EMULATOR_HOST", host, 1);
	btr_conn *c = NULL;
	assert_int_equal(btr_connect("p", "i", NULL, &c), 0);
	btr_set_deadline_ms(c, 2000);
	assert_int_equal(btr_quiet(c), 0);
	/* (quiet for 2 s: should this process be held up that long between two lines, once more) */
	bool seen = false;
	for (int tries = 0; tries < 5 && !seen; tries++) {
		assert_null(tb_get_table(c, "t", &err, &st));
		assert_int_equal(err, -EIO);
		assert_non_null(strstr(st.message, "no answer within the deadline (2000 ms)"));
		if (!btr_quiet(c))
			continue;
		assert_null(tb_get_table(c, "t", &err, &st));
		assert_int_equal(err, -EIO);
		assert_int_equal(st.code, GRPC_STATUS_DEADLINE_EXCEEDED);
		if (!strstr(st.message, "a moment ago"))
			continue;
		struct cells *cs;
		err = tb_read_rows(c, "t", NULL, &cs, &st);
		assert_int_equal(err, -EIO);
		assert_int_equal(st.code, GRPC_STATUS_DEADLINE_EXCEEDED);
		seen = strstr(st.message, "a moment ago") != NULL;
		tb_cells_free(cs);
	}
	assert_true(seen);

	quiet_over(c); /* and the next call is sent, and waits its deadline again */
	assert_null(tb_get_table(c, "t", &err, &st));
	assert_int_equal(err, -EIO);
	assert_non_null(strstr(st.message, "no answer within the deadline"));
	btr_close(c);
	close(fd);
}

/* ---- tests that need no emulator */

static void test_btr__errno_of_each_status(void **state)
{
	static const struct {
		grpc_status_code code;
		int err;
		bool retry;
	} cases[] = {
		{ GRPC_STATUS_OK, 0, false },
		{ GRPC_STATUS_CANCELLED, -EIO, false },
		{ GRPC_STATUS_UNKNOWN, -EIO, false },
		{ GRPC_STATUS_INVALID_ARGUMENT, -EINVAL, false },
		{ GRPC_STATUS_DEADLINE_EXCEEDED, -EIO, true },
		{ GRPC_STATUS_NOT_FOUND, -ENOENT, false },
		{ GRPC_STATUS_ALREADY_EXISTS, -EEXIST, false },
		{ GRPC_STATUS_PERMISSION_DENIED, -EACCES, false },
		{ GRPC_STATUS_RESOURCE_EXHAUSTED, -EAGAIN, false },
		{ GRPC_STATUS_FAILED_PRECONDITION, -EINVAL, false },
		{ GRPC_STATUS_ABORTED, -EIO, true },
		{ GRPC_STATUS_OUT_OF_RANGE, -EINVAL, false },
		{ GRPC_STATUS_UNIMPLEMENTED, -EOPNOTSUPP, false },
		{ GRPC_STATUS_INTERNAL, -EIO, false },
		{ GRPC_STATUS_UNAVAILABLE, -EIO, true },
		{ GRPC_STATUS_DATA_LOSS, -EIO, false },
		{ GRPC_STATUS_UNAUTHENTICATED, -EACCES, false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		assert_int_equal(btr_errno(cases[i].code), cases[i].err);
		assert_int_equal(btr_retryable(cases[i].code), cases[i].retry);
	}
	assert_string_equal(btr_code_name(GRPC_STATUS_UNAVAILABLE), "UNAVAILABLE");
	assert_string_equal(btr_code_name(GRPC_STATUS_UNAUTHENTICATED), "UNAUTHENTICATED");
	assert_string_equal(btr_code_name((grpc_status_code)99), "UNKNOWN");
}

static void test_btr__backoff_grows_within_bounds(void **state)
{
	for (int round = 0; round < 100; round++) {
		assert_in_range(btr_backoff_ms(1), 25, 50);
		assert_in_range(btr_backoff_ms(2), 50, 100);
		assert_in_range(btr_backoff_ms(3), 100, 200);
		assert_in_range(btr_backoff_ms(30), 1000, 2000);
	}
}

static void test_btr__names_and_routing_headers(void **state)
{
	setenv("BIGTABLE_EMULATOR_HOST", "127.0.0.1:1", 1);
	btr_conn *c = NULL;
	assert_int_equal(btr_connect("my-proj", "my-inst", "prof 1", &c), 0);
	assert_int_equal(btr_is_emulator(c), 1);
	assert_string_equal(btr_instance_name(c), "projects/my-proj/instances/my-inst");
	assert_string_equal(btr_app_profile(c), "prof 1");

	char buf[BTR_NAME_MAX];
	assert_int_equal(btr_table_name(c, "t1", buf, sizeof buf), 0);
	assert_string_equal(buf, "projects/my-proj/instances/my-inst/tables/t1");
	assert_int_equal(btr_table_name(c, "t1", buf, 20), -ENAMETOOLONG);
	assert_string_equal(buf, "");

	assert_int_equal(btr_routing(c, BTR_DATA, "table_name", "projects/my-proj/instances/my-inst/tables/a.b~c_d-e",
				     buf, sizeof buf), 0);
	assert_string_equal(buf, "table_name=projects%2Fmy-proj%2Finstances%2Fmy-inst%2Ftables%2Fa.b~c_d-e"
				 "&app_profile_id=prof%201");
	/* the admin API has no app profile */
	assert_int_equal(btr_routing(c, BTR_ADMIN, "parent", "projects/p/instances/i", buf, sizeof buf), 0);
	assert_string_equal(buf, "parent=projects%2Fp%2Finstances%2Fi");
	/* exactly fitting, and one byte short */
	assert_int_equal(btr_routing(c, BTR_ADMIN, "k", "/", buf, 6), 0);
	assert_string_equal(buf, "k=%2F");
	assert_int_equal(btr_routing(c, BTR_ADMIN, "k", "/", buf, 5), -ENAMETOOLONG);
	assert_string_equal(buf, "");
	btr_close(c);

	assert_int_equal(btr_connect("p", "i", NULL, &c), 0);
	assert_string_equal(btr_app_profile(c), "");
	assert_int_equal(btr_routing(c, BTR_DATA, "table_name", "x", buf, sizeof buf), 0);
	assert_string_equal(buf, "table_name=x");
	btr_close(c);
	btr_close(NULL);
}

static void test_btr__connect_refuses_bad_names_and_deadlines(void **state)
{
	setenv("BIGTABLE_EMULATOR_HOST", "127.0.0.1:1", 1);
	btr_conn *c = (btr_conn *)&c;
	assert_int_equal(btr_connect("", "i", NULL, &c), -EINVAL);
	assert_null(c);
	assert_int_equal(btr_connect("p", "a/b", NULL, &c), -EINVAL);
	assert_int_equal(btr_connect(NULL, "i", NULL, &c), -EINVAL);
	static const char *const bad[] = { "", "0", "-5", "12x", "x", "99999999999" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		setenv("CELLFS_BT_DEADLINE_MS", bad[i], 1);
		assert_int_equal(btr_connect("p", "i", NULL, &c), -EINVAL);
		assert_null(c);
	}
	unsetenv("CELLFS_BT_DEADLINE_MS");
}

static void test_btr__refused_endpoint_is_eio(void **state)
{
	char host[64];
	snprintf(host, sizeof host, "127.0.0.1:%d", closed_port());
	setenv("BIGTABLE_EMULATOR_HOST", host, 1);
	setenv("CELLFS_BT_DEADLINE_MS", "2000", 1);
	btr_conn *c = NULL;
	assert_int_equal(btr_connect("p", "i", NULL, &c), 0);
	unsetenv("CELLFS_BT_DEADLINE_MS");
	assert_calls_fail_eio(c);
	btr_close(c);
}

static void test_btr__silent_endpoint_is_eio_at_the_deadline(void **state)
{
	int port;
	int fd = silent_listener(&port);
	char host[64];
	snprintf(host, sizeof host, "127.0.0.1:%d", port);
	setenv("BIGTABLE_EMULATOR_HOST", host, 1);
	btr_conn *c = NULL;
	assert_int_equal(btr_connect("p", "i", NULL, &c), 0);
	btr_set_deadline_ms(c, 1500);
	assert_calls_fail_eio(c);
	btr_close(c);
	close(fd);
}

/* ---- tests against the emulator */

static void test_btr__create_get_list_tables(void **state)
{
	btr_conn *c = tb_conn_to(&emu);
	btr_status st;
	static const char *const fams[] = { "cf1", "cf2", "sum" };
	static const int versions[] = { 1, 3, 1 };
	static const bool agg[] = { false, false, true };
	assert_int_equal(tb_create_table(c, "schema", 3, fams, versions, agg, &st), 0);
	assert_int_equal(st.code, GRPC_STATUS_OK);

	int err;
	Table *t = tb_get_table(c, "schema", &err, &st);
	assert_int_equal(err, 0);
	assert_non_null(t);
	assert_string_equal(t->name, tb_table_path(c, "schema"));
	assert_int_equal(t->n_column_families, 3);
	const ColumnFamily *cf1 = tb_family_of(t, "cf1"), *cf2 = tb_family_of(t, "cf2"), *sum = tb_family_of(t, "sum");
	assert_non_null(cf1);
	assert_non_null(cf2);
	assert_non_null(sum);
	assert_int_equal(cf1->gc_rule->rule_case, GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__RULE_MAX_NUM_VERSIONS);
	assert_int_equal(cf1->gc_rule->max_num_versions, 1);
	assert_int_equal(cf2->gc_rule->max_num_versions, 3);
	assert_null(cf1->value_type);
	assert_non_null(sum->value_type);
	assert_int_equal(sum->value_type->kind_case, GOOGLE__BIGTABLE__ADMIN__V2__TYPE__KIND_AGGREGATE_TYPE);
	assert_int_equal(sum->value_type->aggregate_type->aggregator_case,
			 GOOGLE__BIGTABLE__ADMIN__V2__TYPE__AGGREGATE__AGGREGATOR_SUM);
	protobuf_c_message_free_unpacked(&t->base, NULL);

	/* ModifyColumnFamilies: drop cf2, add cf3 with a union of max age and versions */
	Google__Bigtable__Admin__V2__ModifyColumnFamiliesRequest mreq =
		GOOGLE__BIGTABLE__ADMIN__V2__MODIFY_COLUMN_FAMILIES_REQUEST__INIT;
	Google__Bigtable__Admin__V2__ModifyColumnFamiliesRequest__Modification mod[2], *modp[2] = { &mod[0], &mod[1] };
	google__bigtable__admin__v2__modify_column_families_request__modification__init(&mod[0]);
	google__bigtable__admin__v2__modify_column_families_request__modification__init(&mod[1]);
	mod[0].id = "cf2";
	mod[0].mod_case = GOOGLE__BIGTABLE__ADMIN__V2__MODIFY_COLUMN_FAMILIES_REQUEST__MODIFICATION__MOD_DROP;
	mod[0].drop = 1;
	ColumnFamily cf3 = GOOGLE__BIGTABLE__ADMIN__V2__COLUMN_FAMILY__INIT;
	GcRule un = GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__INIT, age = GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__INIT,
	       vers = GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__INIT, *rules[2] = { &age, &vers };
	Google__Bigtable__Admin__V2__GcRule__Union u = GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__UNION__INIT;
	Google__Protobuf__Duration hour = GOOGLE__PROTOBUF__DURATION__INIT;
	hour.seconds = 3600;
	age.rule_case = GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__RULE_MAX_AGE;
	age.max_age = &hour;
	vers.rule_case = GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__RULE_MAX_NUM_VERSIONS;
	vers.max_num_versions = 2;
	u.n_rules = 2;
	u.rules = rules;
	un.rule_case = GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__RULE_UNION;
	un.union_ = &u;
	cf3.gc_rule = &un;
	mod[1].id = "cf3";
	mod[1].mod_case = GOOGLE__BIGTABLE__ADMIN__V2__MODIFY_COLUMN_FAMILIES_REQUEST__MODIFICATION__MOD_CREATE;
	mod[1].create = &cf3;
	mreq.name = tb_table_path(c, "schema");
	mreq.n_modifications = 2;
	mreq.modifications = modp;
	ProtobufCMessage *resp = NULL;
	assert_int_equal(btr_unary(c, BTR_ADMIN, ADMIN("ModifyColumnFamilies"), &mreq.base,
				   &google__bigtable__admin__v2__table__descriptor, &resp,
				   tb_route(c, BTR_ADMIN, "name", mreq.name), 0, &st), 0);
	t = (Table *)resp;
	assert_null(tb_family_of(t, "cf2"));
	const ColumnFamily *got3 = tb_family_of(t, "cf3");
	assert_non_null(got3);
	assert_int_equal(got3->gc_rule->rule_case, GOOGLE__BIGTABLE__ADMIN__V2__GC_RULE__RULE_UNION);
	assert_int_equal(got3->gc_rule->union_->n_rules, 2);
	assert_int_equal(got3->gc_rule->union_->rules[0]->max_age->seconds, 3600);
	assert_int_equal(got3->gc_rule->union_->rules[1]->max_num_versions, 2);
	protobuf_c_message_free_unpacked(resp, NULL);

	/* ListTables, a page at a time */
	assert_int_equal(tb_create_table(c, "schema2", 1, fams, versions, NULL, &st), 0);
	int seen = 0;
	char token[256] = "";
	do {
		Google__Bigtable__Admin__V2__ListTablesRequest lreq = GOOGLE__BIGTABLE__ADMIN__V2__LIST_TABLES_REQUEST__INIT;
		lreq.parent = (char *)btr_instance_name(c);
		lreq.view = GOOGLE__BIGTABLE__ADMIN__V2__TABLE__VIEW__NAME_ONLY;
		lreq.page_token = token;
		assert_int_equal(btr_unary(c, BTR_ADMIN, ADMIN("ListTables"), &lreq.base,
					   &google__bigtable__admin__v2__list_tables_response__descriptor, &resp,
					   tb_route(c, BTR_ADMIN, "parent", lreq.parent), BTR_IDEMPOTENT, &st), 0);
		Google__Bigtable__Admin__V2__ListTablesResponse *l = (void *)resp;
		for (size_t i = 0; i < l->n_tables; i++) {
			if (strcmp(l->tables[i]->name, tb_table_path(c, "schema")) == 0)
				seen |= 1;
			if (strcmp(l->tables[i]->name, tb_table_path(c, "schema2")) == 0)
				seen |= 2;
		}
		snprintf(token, sizeof token, "%s", l->next_page_token);
		protobuf_c_message_free_unpacked(resp, NULL);
	} while (token[0]);
	assert_int_equal(seen, 3);

	/* DeleteTable: then it is gone */
	Google__Bigtable__Admin__V2__DeleteTableRequest dreq = GOOGLE__BIGTABLE__ADMIN__V2__DELETE_TABLE_REQUEST__INIT;
	dreq.name = tb_table_path(c, "schema2");
	assert_int_equal(btr_unary(c, BTR_ADMIN, ADMIN("DeleteTable"), &dreq.base,
				   &google__protobuf__empty__descriptor, &resp,
				   tb_route(c, BTR_ADMIN, "name", dreq.name), 0, &st), 0);
	protobuf_c_message_free_unpacked(resp, NULL);
	assert_null(tb_get_table(c, "schema2", &err, &st));
	assert_int_equal(err, -ENOENT);
	btr_close(c);
}

static void test_btr__errors_map_with_the_servers_message(void **state)
{
	btr_conn *c = tb_conn_to(&emu);
	btr_status st;
	int err;
	assert_null(tb_get_table(c, "missing", &err, &st));
	assert_int_equal(err, -ENOENT);
	assert_int_equal(st.code, GRPC_STATUS_NOT_FOUND);
	assert_true(strstr(st.message, "missing") != NULL);

	static const char *const fams[] = { "cf" };
	static const int versions[] = { 1 };
	assert_int_equal(tb_create_table(c, "twice", 1, fams, versions, NULL, &st), 0);
	assert_int_equal(tb_create_table(c, "twice", 1, fams, versions, NULL, &st), -EEXIST);
	assert_int_equal(st.code, GRPC_STATUS_ALREADY_EXISTS);
	assert_true(st.message[0] != '\0');

	/* a stream's error: ReadRows of a missing table */
	struct cells *cs;
	assert_int_equal(tb_read_rows(c, "missing", NULL, &cs, &st), -ENOENT);
	assert_int_equal(st.code, GRPC_STATUS_NOT_FOUND);
	assert_int_equal(cs->n, 0);
	tb_cells_free(cs);

	/* a write into a family the table lacks: an error (the emulator says UNKNOWN, the service
	 * NOT_FOUND or INVALID_ARGUMENT) whose message names the family */
	assert_true(tb_set_cell(c, "twice", "r", "nofam", "q", 1000, "v", 1, &st) < 0);
	assert_true(st.code != GRPC_STATUS_OK);
	assert_true(strstr(st.message, "nofam") != NULL);
	btr_close(c);
}

static void test_btr__mutate_then_read_streams_the_cells(void **state)
{
	btr_conn *c = tb_conn_to(&emu);
	btr_status st;
	static const char *const fams[] = { "a", "b" };
	static const int versions[] = { 5, 5 };
	assert_int_equal(tb_create_table(c, "cells", 2, fams, versions, NULL, &st), 0);
	assert_int_equal(tb_set_cell(c, "cells", "r1", "a", "q1", 1000, "v1", 2, &st), 0);
	assert_int_equal(tb_set_cell(c, "cells", "r1", "a", "q1", 2000, "v2", 2, &st), 0);
	assert_int_equal(tb_set_cell(c, "cells", "r1", "b", "q2", 3000, "", 0, &st), 0);
	assert_int_equal(tb_set_cell(c, "cells", "r2", "a", "q1", 4000, "v4", 2, &st), 0);

	struct cells *cs;
	assert_int_equal(tb_read_rows(c, "cells", NULL, &cs, &st), 0);
	assert_int_equal(st.code, GRPC_STATUS_OK);
	assert_int_equal(cs->n, 4);
	/* each row's last cell commits it */
	assert_false(cs->c[0].committed);
	assert_false(cs->c[1].committed);
	assert_true(cs->c[2].committed);
	assert_true(cs->c[3].committed);
	tb_cells_sort(cs);
	tb_assert_cell(&cs->c[0], "r1", "a", "q1", 2000, "v2");
	tb_assert_cell(&cs->c[1], "r1", "a", "q1", 1000, "v1");
	tb_assert_cell(&cs->c[2], "r1", "b", "q2", 3000, "");
	tb_assert_cell(&cs->c[3], "r2", "a", "q1", 4000, "v4");
	tb_cells_free(cs);

	/* a row range, a filter chain (family regex, one cell per column) and a limit */
	Google__Bigtable__V2__ReadRowsRequest req = GOOGLE__BIGTABLE__V2__READ_ROWS_REQUEST__INIT;
	Google__Bigtable__V2__RowSet rs = GOOGLE__BIGTABLE__V2__ROW_SET__INIT;
	Google__Bigtable__V2__RowRange rr = GOOGLE__BIGTABLE__V2__ROW_RANGE__INIT, *rrp = &rr;
	rr.start_key_case = GOOGLE__BIGTABLE__V2__ROW_RANGE__START_KEY_START_KEY_CLOSED;
	rr.start_key_closed = tb_str("r1");
	rr.end_key_case = GOOGLE__BIGTABLE__V2__ROW_RANGE__END_KEY_END_KEY_OPEN;
	rr.end_key_open = tb_str("r9");
	rs.n_row_ranges = 1;
	rs.row_ranges = &rrp;
	Google__Bigtable__V2__RowFilter chain = GOOGLE__BIGTABLE__V2__ROW_FILTER__INIT,
					fam = GOOGLE__BIGTABLE__V2__ROW_FILTER__INIT,
					lim = GOOGLE__BIGTABLE__V2__ROW_FILTER__INIT, *filters[2] = { &fam, &lim };
	Google__Bigtable__V2__RowFilter__Chain ch = GOOGLE__BIGTABLE__V2__ROW_FILTER__CHAIN__INIT;
	fam.filter_case = GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_FAMILY_NAME_REGEX_FILTER;
	fam.family_name_regex_filter = "a";
	lim.filter_case = GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_CELLS_PER_COLUMN_LIMIT_FILTER;
	lim.cells_per_column_limit_filter = 1;
	ch.n_filters = 2;
	ch.filters = filters;
	chain.filter_case = GOOGLE__BIGTABLE__V2__ROW_FILTER__FILTER_CHAIN;
	chain.chain = &ch;
	req.rows = &rs;
	req.filter = &chain;
	req.rows_limit = 1;
	assert_int_equal(tb_read_rows(c, "cells", &req, &cs, &st), 0);
	assert_int_equal(cs->n, 1);
	tb_assert_cell(&cs->c[0], "r1", "a", "q1", 2000, "v2");
	tb_cells_free(cs);
	btr_close(c);
}

static void test_btr__other_data_calls(void **state)
{
	btr_conn *c = tb_conn_to(&emu);
	btr_status st;
	static const char *const fams[] = { "f", "n" };
	static const int versions[] = { 1, 1 };
	static const bool agg[] = { false, true };
	assert_int_equal(tb_create_table(c, "calls", 2, fams, versions, agg, &st), 0);
	ProtobufCMessage *resp;

	/* MutateRows: three entries, a status each */
	Google__Bigtable__V2__MutateRowsRequest mr = GOOGLE__BIGTABLE__V2__MUTATE_ROWS_REQUEST__INIT;
	Google__Bigtable__V2__MutateRowsRequest__Entry e[3], *ep[3];
	Mutation m[3], *mp[3];
	Google__Bigtable__V2__Mutation__SetCell sc[3];
	static const char *const rows[] = { "m1", "m2", "m3" };
	for (int i = 0; i < 3; i++) {
		google__bigtable__v2__mutate_rows_request__entry__init(&e[i]);
		google__bigtable__v2__mutation__init(&m[i]);
		google__bigtable__v2__mutation__set_cell__init(&sc[i]);
		sc[i].family_name = "f";
		sc[i].column_qualifier = tb_str("q");
		sc[i].timestamp_micros = 5000;
		sc[i].value = tb_str(rows[i]);
		m[i].mutation_case = GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_SET_CELL;
		m[i].set_cell = &sc[i];
		mp[i] = &m[i];
		e[i].row_key = tb_str(rows[i]);
		e[i].n_mutations = 1;
		e[i].mutations = &mp[i];
		ep[i] = &e[i];
	}
	mr.table_name = tb_table_path(c, "calls");
	mr.n_entries = 3;
	mr.entries = ep;
	btr_stream *s;
	assert_int_equal(btr_stream_open(c, BTR_DATA, DATA("MutateRows"), &mr.base,
					 tb_route(c, BTR_DATA, "table_name", mr.table_name), &s), 0);
	int seen = 0, r;
	while ((r = btr_stream_next(s, &google__bigtable__v2__mutate_rows_response__descriptor, &resp)) == 1) {
		Google__Bigtable__V2__MutateRowsResponse *mresp = (void *)resp;
		for (size_t i = 0; i < mresp->n_entries; i++) {
			assert_in_range(mresp->entries[i]->index, 0, 2);
			assert_true(!mresp->entries[i]->status || mresp->entries[i]->status->code == 0);
			seen |= 1 << mresp->entries[i]->index;
		}
		protobuf_c_message_free_unpacked(resp, NULL);
	}
	assert_int_equal(r, 0);
	assert_int_equal(btr_stream_next(s, &google__bigtable__v2__mutate_rows_response__descriptor, &resp), 0);
	btr_stream_close(s);
	assert_int_equal(seen, 7);

	/* CheckAndMutateRow: the row has cells, so the true branch runs */
	Google__Bigtable__V2__CheckAndMutateRowRequest cm = GOOGLE__BIGTABLE__V2__CHECK_AND_MUTATE_ROW_REQUEST__INIT;
	Mutation del = GOOGLE__BIGTABLE__V2__MUTATION__INIT, *delp = &del;
	Google__Bigtable__V2__Mutation__DeleteFromRow dfr = GOOGLE__BIGTABLE__V2__MUTATION__DELETE_FROM_ROW__INIT;
	del.mutation_case = GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_DELETE_FROM_ROW;
	del.delete_from_row = &dfr;
	cm.table_name = tb_table_path(c, "calls");
	cm.row_key = tb_str("m1");
	cm.n_true_mutations = 1;
	cm.true_mutations = &delp;
	assert_int_equal(btr_unary(c, BTR_DATA, DATA("CheckAndMutateRow"), &cm.base,
				   &google__bigtable__v2__check_and_mutate_row_response__descriptor, &resp,
				   tb_route(c, BTR_DATA, "table_name", cm.table_name), 0, &st), 0);
	assert_true(((Google__Bigtable__V2__CheckAndMutateRowResponse *)resp)->predicate_matched);
	protobuf_c_message_free_unpacked(resp, NULL);

	/* ReadModifyWriteRow: append to m2's cell, increment a fresh counter */
	Google__Bigtable__V2__ReadModifyWriteRowRequest rmw = GOOGLE__BIGTABLE__V2__READ_MODIFY_WRITE_ROW_REQUEST__INIT;
	Google__Bigtable__V2__ReadModifyWriteRule rule[2], *rulep[2] = { &rule[0], &rule[1] };
	google__bigtable__v2__read_modify_write_rule__init(&rule[0]);
	google__bigtable__v2__read_modify_write_rule__init(&rule[1]);
	rule[0].family_name = "f";
	rule[0].column_qualifier = tb_str("q");
	rule[0].rule_case = GOOGLE__BIGTABLE__V2__READ_MODIFY_WRITE_RULE__RULE_APPEND_VALUE;
	rule[0].append_value = tb_str("+x");
	rule[1].family_name = "f";
	rule[1].column_qualifier = tb_str("ctr");
	rule[1].rule_case = GOOGLE__BIGTABLE__V2__READ_MODIFY_WRITE_RULE__RULE_INCREMENT_AMOUNT;
	rule[1].increment_amount = 7;
	rmw.table_name = tb_table_path(c, "calls");
	rmw.row_key = tb_str("m2");
	rmw.n_rules = 2;
	rmw.rules = rulep;
	assert_int_equal(btr_unary(c, BTR_DATA, DATA("ReadModifyWriteRow"), &rmw.base,
				   &google__bigtable__v2__read_modify_write_row_response__descriptor, &resp,
				   tb_route(c, BTR_DATA, "table_name", rmw.table_name), 0, &st), 0);
	Google__Bigtable__V2__Row *row = ((Google__Bigtable__V2__ReadModifyWriteRowResponse *)resp)->row;
	assert_non_null(row);
	assert_memory_equal(row->key.data, "m2", 2);
	assert_int_equal(row->n_families, 1);
	assert_string_equal(row->families[0]->name, "f");
	int found = 0;
	for (size_t i = 0; i < row->families[0]->n_columns; i++) {
		Google__Bigtable__V2__Column *col = row->families[0]->columns[i];
		assert_int_equal(col->n_cells, 1);
		ProtobufCBinaryData v = col->cells[0]->value;
		if (col->qualifier.len == 1 && col->qualifier.data[0] == 'q') {
			assert_int_equal(v.len, 4);
			assert_memory_equal(v.data, "m2+x", 4);
			found |= 1;
		} else if (col->qualifier.len == 3 && memcmp(col->qualifier.data, "ctr", 3) == 0) {
			static const uint8_t seven[8] = { 0, 0, 0, 0, 0, 0, 0, 7 };
			assert_int_equal(v.len, 8);
			assert_memory_equal(v.data, seven, 8);
			found |= 2;
		}
	}
	assert_int_equal(found, 3);
	protobuf_c_message_free_unpacked(resp, NULL);

	/* AddToCell into the intsum family, twice */
	for (int i = 0; i < 2; i++) {
		Google__Bigtable__V2__MutateRowRequest req = GOOGLE__BIGTABLE__V2__MUTATE_ROW_REQUEST__INIT;
		Mutation add = GOOGLE__BIGTABLE__V2__MUTATION__INIT, *addp = &add;
		Google__Bigtable__V2__Mutation__AddToCell atc = GOOGLE__BIGTABLE__V2__MUTATION__ADD_TO_CELL__INIT;
		Google__Bigtable__V2__Value q = GOOGLE__BIGTABLE__V2__VALUE__INIT, ts = GOOGLE__BIGTABLE__V2__VALUE__INIT,
					    in = GOOGLE__BIGTABLE__V2__VALUE__INIT;
		q.kind_case = GOOGLE__BIGTABLE__V2__VALUE__KIND_RAW_VALUE;
		q.raw_value = tb_str("hits");
		ts.kind_case = GOOGLE__BIGTABLE__V2__VALUE__KIND_RAW_TIMESTAMP_MICROS;
		ts.raw_timestamp_micros = 9000;
		in.kind_case = GOOGLE__BIGTABLE__V2__VALUE__KIND_INT_VALUE;
		in.int_value = 20 + i;
		atc.family_name = "n";
		atc.column_qualifier = &q;
		atc.timestamp = &ts;
		atc.input = &in;
		add.mutation_case = GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_ADD_TO_CELL;
		add.add_to_cell = &atc;
		req.table_name = tb_table_path(c, "calls");
		req.row_key = tb_str("agg");
		req.n_mutations = 1;
		req.mutations = &addp;
		assert_int_equal(btr_unary(c, BTR_DATA, DATA("MutateRow"), &req.base,
					   &google__bigtable__v2__mutate_row_response__descriptor, &resp,
					   tb_route(c, BTR_DATA, "table_name", req.table_name), 0, &st), 0);
		protobuf_c_message_free_unpacked(resp, NULL);
	}

	/* DropRowRange of prefix "m": then only the aggregate row is left */
	Google__Bigtable__Admin__V2__DropRowRangeRequest drop = GOOGLE__BIGTABLE__ADMIN__V2__DROP_ROW_RANGE_REQUEST__INIT;
	drop.name = tb_table_path(c, "calls");
	drop.target_case = GOOGLE__BIGTABLE__ADMIN__V2__DROP_ROW_RANGE_REQUEST__TARGET_ROW_KEY_PREFIX;
	drop.row_key_prefix = tb_str("m");
	assert_int_equal(btr_unary(c, BTR_ADMIN, ADMIN("DropRowRange"), &drop.base,
				   &google__protobuf__empty__descriptor, &resp,
				   tb_route(c, BTR_ADMIN, "name", drop.name), 0, &st), 0);
	protobuf_c_message_free_unpacked(resp, NULL);

	struct cells *cs;
	assert_int_equal(tb_read_rows(c, "calls", NULL, &cs, &st), 0);
	assert_int_equal(cs->n, 1);
	static const uint8_t sum[8] = { 0, 0, 0, 0, 0, 0, 0, 41 };
	assert_string_equal(cs->c[0].row, "agg");
	assert_string_equal(cs->c[0].qual, "hits");
	assert_int_equal(cs->c[0].ts, 9000);
	assert_int_equal(cs->c[0].len, 8);
	assert_memory_equal(cs->c[0].val, sum, 8);
	tb_cells_free(cs);
	btr_close(c);
}

static void test_btr__six_mib_value_round_trips(void **state)
{
	btr_conn *c = tb_conn_to(&emu);
	btr_status st;
	static const char *const fams[] = { "big" };
	static const int versions[] = { 1 };
	assert_int_equal(tb_create_table(c, "big", 1, fams, versions, NULL, &st), 0);
	size_t n = 6u << 20;
	uint8_t *v = malloc(n);
	assert_non_null(v);
	for (size_t i = 0; i < n; i++)
		v[i] = (uint8_t)(i * 131 + (i >> 13));
	assert_int_equal(tb_set_cell(c, "big", "row", "big", "q", 1000, v, n, &st), 0);
	struct cells *cs;
	assert_int_equal(tb_read_rows(c, "big", NULL, &cs, &st), 0);
	assert_int_equal(cs->n, 1);
	assert_int_equal(cs->c[0].len, n);
	assert_memory_equal(cs->c[0].val, v, n);
	tb_cells_free(cs);
	free(v);
	btr_close(c);
}

/* A stream closed before its end: cancelled, no hang, and the conn goes on working. */
static void test_btr__stream_closed_early(void **state)
{
	btr_conn *c = tb_conn_to(&emu);
	btr_status st;
	static const char *const fams[] = { "f" };
	static const int versions[] = { 1 };
	assert_int_equal(tb_create_table(c, "early", 1, fams, versions, NULL, &st), 0);
	char row[16];
	for (int i = 0; i < 50; i++) {
		snprintf(row, sizeof row, "r%03d", i);
		assert_int_equal(tb_set_cell(c, "early", row, "f", "q", 1000, row, strlen(row), &st), 0);
	}
	Google__Bigtable__V2__ReadRowsRequest req = GOOGLE__BIGTABLE__V2__READ_ROWS_REQUEST__INIT;
	req.table_name = tb_table_path(c, "early");
	btr_stream *s;
	/* closed unread */
	assert_int_equal(btr_stream_open(c, BTR_DATA, DATA("ReadRows"), &req.base,
					 tb_route(c, BTR_DATA, "table_name", req.table_name), &s), 0);
	btr_stream_close(s);
	/* closed after one message */
	assert_int_equal(btr_stream_open(c, BTR_DATA, DATA("ReadRows"), &req.base,
					 tb_route(c, BTR_DATA, "table_name", req.table_name), &s), 0);
	ProtobufCMessage *m;
	assert_int_equal(btr_stream_next(s, &google__bigtable__v2__read_rows_response__descriptor, &m), 1);
	protobuf_c_message_free_unpacked(m, NULL);
	assert_int_equal(btr_stream_status(s)->code, GRPC_STATUS_OK);
	btr_stream_close(s);
	btr_stream_close(NULL);

	struct cells *cs;
	assert_int_equal(tb_read_rows(c, "early", NULL, &cs, &st), 0);
	assert_int_equal(cs->n, 50);
	tb_cells_free(cs);
	btr_close(c);
}

/* Threads share one conn: each writes its own rows; every row arrives. */
#define THREADS 4
#define ROWS_PER_THREAD 25

struct writer {
	btr_conn *c;
	int id, failures;
};

static void *writer_run(void *arg)
{
	struct writer *w = arg;
	char row[16];
	for (int i = 0; i < ROWS_PER_THREAD; i++) {
		snprintf(row, sizeof row, "t%d-%02d", w->id, i);
		btr_status st;
		if (tb_set_cell(w->c, "shared", row, "f", "q", 1000, row, strlen(row), &st) != 0)
			w->failures++;
	}
	return NULL;
}

static void test_btr__threads_share_a_conn(void **state)
{
	btr_conn *c = tb_conn_to(&emu);
	btr_status st;
	static const char *const fams[] = { "f" };
	static const int versions[] = { 1 };
	assert_int_equal(tb_create_table(c, "shared", 1, fams, versions, NULL, &st), 0);
	pthread_t th[THREADS];
	struct writer w[THREADS];
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct writer){ .c = c, .id = i };
		assert_int_equal(pthread_create(&th[i], NULL, writer_run, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(w[i].failures, 0);
	}
	struct cells *cs;
	assert_int_equal(tb_read_rows(c, "shared", NULL, &cs, &st), 0);
	assert_int_equal(cs->n, THREADS * ROWS_PER_THREAD);
	for (int i = 0; i < cs->n; i++)
		assert_true(cs->c[i].committed);
	tb_cells_free(cs);
	btr_close(c);
}

/* cellfs opens its store to check it, closes it, forks into the background and opens it again: gRPC,
 * stopped by the last btr_close, starts again in the child. (Were gRPC still stopping in the background
 * at the fork, the child's gRPC would count itself started and have no threads: its calls hang.) */
static void test_btr__conn_after_fork(void **state)
{
	btr_conn *c = tb_conn_to(&emu);
	btr_status st;
	static const char *const fams[] = { "f" };
	static const int versions[] = { 1 };
	assert_int_equal(tb_create_table(c, "forked", 1, fams, versions, NULL, &st), 0);
	btr_close(c);
	assert_int_equal(grpc_is_initialized(), 0); /* stopped, not stopping in the background */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		btr_conn *cc = NULL;
		int ok = btr_connect("proj", "inst", NULL, &cc) == 0 &&
			 tb_set_cell(cc, "forked", "child", "f", "q", 1000, "v", 1, &st) == 0;
		btr_close(cc);
		_exit(ok ? 0 : 1);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	c = tb_conn_to(&emu);
	struct cells *cs;
	assert_int_equal(tb_read_rows(c, "forked", NULL, &cs, &st), 0);
	assert_int_equal(cs->n, 1);
	tb_assert_cell(&cs->c[0], "child", "f", "q", 1000, "v");
	tb_cells_free(cs);
	btr_close(c);
}

/* The server dies while a stream is under way: the stream ends in an error worth a resume (a read
 * resumes after its last committed row), not in a clean end and not in a hang. The rows are more than
 * gRPC's flow control lets the server send ahead, so the break is met mid-stream. */
#define BROKEN_ROWS 64

static void test_btr__stream_broken_mid_way_is_retryable(void **state)
{
	struct temu own;
	assert_int_equal(temu_start(&own), 0);
	btr_conn *c = tb_conn_to(&own);
	btr_status st;
	static const char *const fams[] = { "f" };
	static const int versions[] = { 1 };
	assert_int_equal(tb_create_table(c, "broken", 1, fams, versions, NULL, &st), 0);
	size_t n = 1u << 20;
	uint8_t *v = calloc(1, n);
	assert_non_null(v);
	char row[16];
	for (int i = 0; i < BROKEN_ROWS; i++) {
		snprintf(row, sizeof row, "r%03d", i);
		assert_int_equal(tb_set_cell(c, "broken", row, "f", "q", 1000, v, n, &st), 0);
	}
	free(v);

	Google__Bigtable__V2__ReadRowsRequest req = GOOGLE__BIGTABLE__V2__READ_ROWS_REQUEST__INIT;
	req.table_name = tb_table_path(c, "broken");
	btr_stream *s;
	assert_int_equal(btr_stream_open(c, BTR_DATA, DATA("ReadRows"), &req.base,
					 tb_route(c, BTR_DATA, "table_name", req.table_name), &s), 0);
	ProtobufCMessage *m;
	assert_int_equal(btr_stream_next(s, &google__bigtable__v2__read_rows_response__descriptor, &m), 1);
	protobuf_c_message_free_unpacked(m, NULL);
	temu_stop(&own, SIGKILL);
	int r, rows = 1;
	while ((r = btr_stream_next(s, &google__bigtable__v2__read_rows_response__descriptor, &m)) == 1) {
		protobuf_c_message_free_unpacked(m, NULL);
		rows++;
	}
	assert_true(rows < BROKEN_ROWS);
	assert_int_equal(r, -EIO);
	assert_true(btr_retryable(btr_stream_status(s)->code));
	assert_true(btr_stream_status(s)->message[0] != '\0');
	btr_stream_close(s);
	btr_close(c);
}

static int group_setup(void **state)
{
	return temu_start(&emu) == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
	temu_stop(&emu, SIGTERM);
	return 0;
}

int main(void)
{
	const struct CMUnitTest offline[] = {
		cmocka_unit_test(test_btr__errno_of_each_status),
		cmocka_unit_test(test_btr__backoff_grows_within_bounds),
		cmocka_unit_test(test_btr__names_and_routing_headers),
		cmocka_unit_test(test_btr__connect_refuses_bad_names_and_deadlines),
		cmocka_unit_test(test_btr__refused_endpoint_is_eio),
		cmocka_unit_test(test_btr__silent_endpoint_is_eio_at_the_deadline),
		cmocka_unit_test(test_btr__quiet_after_a_call_without_answer),
	};
	const struct CMUnitTest online[] = {
		cmocka_unit_test(test_btr__create_get_list_tables),
		cmocka_unit_test(test_btr__errors_map_with_the_servers_message),
		cmocka_unit_test(test_btr__mutate_then_read_streams_the_cells),
		cmocka_unit_test(test_btr__other_data_calls),
		cmocka_unit_test(test_btr__six_mib_value_round_trips),
		cmocka_unit_test(test_btr__stream_closed_early),
		cmocka_unit_test(test_btr__threads_share_a_conn),
		cmocka_unit_test(test_btr__conn_after_fork),
		cmocka_unit_test(test_btr__stream_broken_mid_way_is_retryable),
	};
	unsetenv("CELLFS_BT_DEADLINE_MS");
	int failed = cmocka_run_group_tests_name("btr (no emulator)", offline, NULL, NULL);
	if (failed)
		return 1;
	if (access(temu_path(), X_OK) != 0) {
		printf("SKIP: Bigtable emulator not found (%s)\n", temu_path());
		return 77;
	}
	failed = cmocka_run_group_tests_name("btr (emulator)", online, group_setup, group_teardown);
	return failed ? 1 : 0;
}
