/* temu.h — a private Bigtable emulator for a C test: started on a free loopback port (its own log says
 * which), stopped at the end. $CBT_EMULATOR overrides the Cloud SDK's path. For tests only. */
#ifndef CELLFS_TEMU_H
#define CELLFS_TEMU_H

#include <sys/types.h>

struct temu {
	pid_t pid;
	char dir[64];
	char addr[128]; /* "127.0.0.1:PORT" */
};

/* The emulator's path: $CBT_EMULATOR, else the Cloud SDK's. */
const char *temu_path(void);
/* Start one into *E, waiting (up to 120 s) until it listens: 0, or -1 (a line on stderr says why). */
int temu_start(struct temu *e);
/* Stop E with SIG (SIGTERM at a test's end, SIGKILL for a crash) and remove its directory. */
void temu_stop(struct temu *e, int sig);

#endif
