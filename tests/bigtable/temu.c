/* temu.c — a private Bigtable emulator for a C test (temu.h). */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "temu.h"

#define EMULATOR_DEFAULT "/usr/lib/google-cloud-sdk/platform/bigtable-emulator/cbtemulator"

const char *temu_path(void)
{
	const char *path = getenv("CBT_EMULATOR");
	return path && *path ? path : EMULATOR_DEFAULT;
}

int temu_start(struct temu *e)
{
	static const char banner[] = "Cloud Bigtable emulator running on ";
	const char *path = temu_path();
	const char *tmp = getenv("TMPDIR");
	char log[128];

	memset(e, 0, sizeof *e);
	snprintf(e->dir, sizeof e->dir, "%s/cellfs-emu.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(e->dir)) {
		perror("mkdtemp");
		return -1;
	}
	snprintf(log, sizeof log, "%s/emulator.log", e->dir);
	e->pid = fork();
	if (e->pid < 0)
		return -1;
	if (e->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0)
			_exit(127);
		dup2(fd, 1);
		dup2(fd, 2);
		execl(path, path, "-host", "127.0.0.1", "-port", "0", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 1200; i++) { /* 120 s */
		char buf[4096] = "";
		FILE *f = fopen(log, "r");
		if (f) {
			size_t n = fread(buf, 1, sizeof buf - 1, f);
			buf[n] = '\0';
			fclose(f);
		}
		char *at = strstr(buf, banner);
		if (at && strchr(at, '\n')) {
			at += strlen(banner);
			size_t len = strcspn(at, "\r\n");
			if (len >= sizeof e->addr)
				return -1;
			memcpy(e->addr, at, len);
			e->addr[len] = '\0';
			return 0;
		}
		if (waitpid(e->pid, NULL, WNOHANG) == e->pid) {
			e->pid = 0;
			fprintf(stderr, "the emulator exited: %s\n", buf);
			return -1;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 100000000 }, NULL);
	}
	fprintf(stderr, "the emulator did not start within 120 s\n");
	return -1;
}

void temu_stop(struct temu *e, int sig)
{
	if (e->pid > 0) {
		kill(e->pid, sig);
		waitpid(e->pid, NULL, 0);
		e->pid = 0;
	}
	if (e->dir[0]) {
		char log[128];
		snprintf(log, sizeof log, "%s/emulator.log", e->dir);
		unlink(log);
		rmdir(e->dir);
		e->dir[0] = '\0';
	}
}
