/* replay.c — the replay driver: feeds every file named on the command line (a directory: every file in
 * it, in name order) to the target's LLVMFuzzerTestOneInput. Linked with each target in ordinary builds,
 * so `meson test --suite fuzz` reruns the saved corpus (zstd's tests/fuzz does the same); libFuzzer
 * builds bring their own main instead. Exit 0 if every input ran, 1 if a file could not be read or there was none; a
 * property that fails aborts. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path, size_t *count)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0;

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (;;) {
		size_t got;
		if (n == cap) {
			uint8_t *nb = realloc(buf, cap ? 2 * cap : 4096);
			if (!nb) {
				fprintf(stderr, "replay: %s: out of memory\n", path);
				free(buf);
				fclose(f);
				return -1;
			}
			buf = nb;
			cap = cap ? 2 * cap : 4096;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		fprintf(stderr, "replay: %s: read error\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	/* An exact-size copy, so ASan builds catch reads past the input's end. */
	uint8_t *in = fuzz_dup(buf, n);
	free(buf);
	LLVMFuzzerTestOneInput(in, n);
	free(in);
	(*count)++;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, size_t *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;
	int rc = 0;

	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		char **nn;
		if (e->d_name[0] == '.')
			continue;
		if (!(nn = realloc(names, (n + 1) * sizeof(*nn))) || !(nn[n] = strdup(e->d_name))) {
			fprintf(stderr, "replay: out of memory\n");
			free(nn ? nn : names);
			closedir(d);
			return -1;
		}
		names = nn;
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		char *path;
		if (asprintf(&path, "%s/%s", dir, names[i]) < 0) {
			rc = -1;
			break;
		}
		if (run_file(path, count))
			rc = -1;
		free(path);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	size_t count = 0;
	int status = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st)) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			status = 1;
			continue;
		}
		if ((S_ISDIR(st.st_mode) ? run_dir(argv[i], &count) : run_file(argv[i], &count)))
			status = 1;
	}
	printf("replay: %zu inputs\n", count);
	if (!count) {
		fprintf(stderr, "replay: no inputs\n");
		status = 1;
	}
	return status;
}
