/* test_remote_conf.c — a remote store's connection settings (cs_remote, store/remote_conf.c): keys in
 * cbt's and the mount's spellings, values copied and replaced, bad keys and values refused; cbt's
 * ~/.cbtrc read with the flags already given winning, comments, blank lines and CRLF skipped, a bad line
 * naming its file and number and changing nothing. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dir;

static const char *write_file(const char *name, const char *text)
{
	static char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static void set_takes_both_spellings(void **state)
{
	cs_remote r = { 0 };
	const char *why = NULL;
	char value[8] = "a.json";

	assert_int_equal(cs_remote_set(&r, "data-endpoint", "h:1", &why), 0);
	assert_int_equal(cs_remote_set(&r, "admin_endpoint", "h:2", &why), 0);
	assert_int_equal(cs_remote_set(&r, "creds", value, &why), 0);
	value[0] = 'b'; /* (a copy) */
	assert_string_equal(r.creds, "a.json");
	assert_int_equal(cs_remote_set(&r, "creds", "c.json", &why), 0);
	assert_string_equal(r.creds, "c.json");
	assert_string_equal(r.data_endpoint, "h:1");
	assert_string_equal(r.admin_endpoint, "h:2");
	assert_int_equal(cs_remote_set(&r, "timeout", "1m30s", &why), 0);
	assert_string_equal(r.timeout, "1m30s");
	cs_remote_clear(&r);
	assert_null(r.creds);
	assert_null(r.timeout);
}

/* cs_remote_key() lists every setting once (the list cellctl's flags are made of): each is taken in both
 * spellings, fills its own member, and is named in the message refusing an unknown key. */
static void keys_list_every_setting(void **state)
{
	const size_t members = sizeof(cs_remote) / sizeof(char *);
	const char *key, *why = NULL;
	size_t n = 0;

	assert_int_equal(cs_remote_set(&(cs_remote){ 0 }, "colour", "blue", &why), -EINVAL);
	for (; (key = cs_remote_key(n)); n++) {
		cs_remote r = { 0 };
		char under[32];
		const char *value = strcmp(key, "timeout") ? "v" : "1s";
		size_t set = 0;

		assert_true(n < members);
		assert_non_null(strstr(why, key));
		assert_int_equal(cs_remote_set(&r, key, value, NULL), 0);
		for (size_t m = 0; m < members; m++)
			set += ((char **)&r)[m] != NULL;
		assert_int_equal(set, 1);
		snprintf(under, sizeof(under), "%s", key);
		for (char *c = under; *c; c++)
			*c = *c == '-' ? '_' : *c;
		assert_int_equal(cs_remote_set(&r, under, value, NULL), 0);
		for (size_t m = 0; m < n; m++) /* no key twice */
			assert_string_not_equal(cs_remote_key(m), key);
		cs_remote_clear(&r);
	}
	assert_int_equal(n, members);
}

static void set_refuses_bad_input(void **state)
{
	cs_remote r = { 0 };
	const char *why = NULL;

	assert_int_equal(cs_remote_set(&r, "colour", "blue", &why), -EINVAL);
	assert_non_null(strstr(why, "not a setting"));
	assert_int_equal(cs_remote_set(&r, "data-endpoint_", "x", &why), -EINVAL);
	assert_int_equal(cs_remote_set(&r, "creds", "", &why), -EINVAL);
	assert_string_equal(why, "an empty value");
	assert_int_equal(cs_remote_set(&r, "timeout", "soon", &why), -EINVAL);
	assert_int_equal(cs_remote_set(&r, "creds", NULL, NULL), -EINVAL);
	assert_null(r.creds);
	assert_null(r.timeout);
}

static void out_of_memory_changes_nothing(void **state)
{
	cs_remote r = { 0 };
	char why[512];
	const char *path = write_file("oom", "project = p\ninstance = i\ncreds = /k.json\n");

	assert_int_equal(cs_remote_set(&r, "creds", "old.json", NULL), 0);
	cs_fault_arm(CS_FAULT_ALLOC, 1);
	assert_int_equal(cs_remote_set(&r, "creds", "new.json", NULL), -ENOMEM);
	assert_true(cs_fault_fired());
	assert_string_equal(r.creds, "old.json");
	for (uint64_t n = 1; n <= 3; n++) { /* each of the file's three copies failing */
		cs_fault_arm(CS_FAULT_ALLOC, n);
		assert_int_equal(cs_remote_cbtrc(&r, path, why, sizeof(why)), -ENOMEM);
		assert_null(r.project);
		assert_null(r.instance);
		assert_string_equal(r.creds, "old.json");
	}
	cs_fault_arm(0, 0);
	cs_remote_clear(&r);
}

static void cbtrc_fills_what_flags_leave(void **state)
{
	cs_remote r = { 0 };
	char why[512];
	const char *path = write_file("rc", "# a comment\r\n\r\n  project =  my-proj \r\ninstance=i1\n"
					    "creds = /k.json\ntimeout = 10s\nuser-agent = a b c\n");

	assert_int_equal(cs_remote_set(&r, "instance", "flag-inst", NULL), 0);
	assert_int_equal(cs_remote_cbtrc(&r, path, why, sizeof(why)), 0);
	assert_string_equal(r.project, "my-proj");
	assert_string_equal(r.instance, "flag-inst");
	assert_string_equal(r.creds, "/k.json");
	assert_string_equal(r.timeout, "10s");
	assert_string_equal(r.user_agent, "a b c");
	assert_null(r.data_endpoint);
	cs_remote_clear(&r);
}

static void cbtrc_bad_line_changes_nothing(void **state)
{
	cs_remote r = { 0 };
	char why[512];
	const char *path = write_file("bad", "project = p\ninstance = i\nno equals sign\n");

	assert_int_equal(cs_remote_cbtrc(&r, path, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "bad:3: not \"key = value\""));
	assert_null(r.project);
	path = write_file("bad2", "project = p\nauth-token = x\n");
	assert_int_equal(cs_remote_cbtrc(&r, path, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "bad2:2: auth-token: not a setting"));
	path = write_file("bad3", "timeout = 5 parsecs\n");
	assert_int_equal(cs_remote_cbtrc(&r, path, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "bad3:1: timeout: "));
	assert_null(r.project);
	assert_null(r.timeout);
}

static void cbtrc_missing_and_env(void **state)
{
	cs_remote r = { 0 };
	char why[512], path[512];

	snprintf(path, sizeof(path), "%s/none", dir);
	assert_int_equal(cs_remote_cbtrc(&r, path, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "none"));
	setenv("CBTRC", write_file("env", "project = from-env\n"), 1);
	assert_int_equal(cs_remote_cbtrc(&r, NULL, why, sizeof(why)), 0);
	assert_string_equal(r.project, "from-env");
	cs_remote_clear(&r);
	unsetenv("CBTRC");
	setenv("HOME", dir, 1);
	write_file(".cbtrc", "instance = from-home\n");
	assert_int_equal(cs_remote_cbtrc(&r, NULL, why, sizeof(why)), 0);
	assert_string_equal(r.instance, "from-home");
	cs_remote_clear(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(set_takes_both_spellings),
		cmocka_unit_test(keys_list_every_setting),
		cmocka_unit_test(set_refuses_bad_input),
		cmocka_unit_test(out_of_memory_changes_nothing),
		cmocka_unit_test(cbtrc_fills_what_flags_leave),
		cmocka_unit_test(cbtrc_bad_line_changes_nothing),
		cmocka_unit_test(cbtrc_missing_and_env),
	};
	if (!(dir = tu_mkdtemp()))
		return 1;
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	tu_rmtree(dir);
	free(dir);
	return rc;
}
