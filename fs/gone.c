/* gone.c — columns whose bare name was unlinked lately (see gone.h). */
#include "gone.h"

#define NGONE (sizeof(((struct fs *)0)->gone) / sizeof(((struct fs *)0)->gone[0]))

void gone_add(struct fs *fs, uint64_t col, pid_t pid)
{
	pthread_mutex_lock(&fs->hlock);
	fs->gone[fs->ngone++ % NGONE] = (struct fs_gone){ .col = col, .at_us = cs_now_us(), .pid = pid };
	pthread_mutex_unlock(&fs->hlock);
}

void gone_drop(struct fs *fs, uint64_t col)
{
	pthread_mutex_lock(&fs->hlock);
	for (size_t i = 0; i < NGONE; i++)
		if (fs->gone[i].col == col)
			fs->gone[i].col = 0;
	pthread_mutex_unlock(&fs->hlock);
}

int gone_has(struct fs *fs, uint64_t col, pid_t pid)
{
	int64_t now = cs_now_us();
	int found = 0;
	pthread_mutex_lock(&fs->hlock);
	for (size_t i = 0; i < NGONE && found <= 0; i++)
		if (fs->gone[i].col == col && now - fs->gone[i].at_us < GONE_US)
			found = fs->gone[i].pid == pid ? 1 : -1;
	pthread_mutex_unlock(&fs->hlock);
	return found;
}
