/* cursor.c — the positions of directory listings in progress (see cursor.h). A few dozen slots searched
 * in order: a walk has one listing in progress per directory it is inside, and a search costs far less
 * than the request it serves. */
#include "cursor.h"

#include <string.h>

void cursor_cache_init(struct cursor_cache *c)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
}

void cursor_cache_release(struct cursor_cache *c)
{
	for (size_t i = 0; i < CURSOR_SLOTS; i++)
		view_pos_release(&c->slots[i].pos);
	pthread_mutex_destroy(&c->lock);
}

bool cursor_take(struct cursor_cache *c, uint64_t ino, uint64_t off, struct view_pos *pos)
{
	bool found = false;

	memset(pos, 0, sizeof(*pos));
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < CURSOR_SLOTS; i++) {
		struct cursor *s = &c->slots[i];
		if (s->stamp && s->ino == ino && s->off == off) {
			*pos = s->pos;
			memset(s, 0, sizeof(*s));
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return found;
}

void cursor_put(struct cursor_cache *c, uint64_t ino, uint64_t off, struct view_pos *pos)
{
	struct cursor *s, old;

	pthread_mutex_lock(&c->lock);
	s = &c->slots[0];
	for (size_t i = 0; i < CURSOR_SLOTS && s->stamp; i++)
		if (!c->slots[i].stamp || c->slots[i].stamp < s->stamp)
			s = &c->slots[i];
	old = *s;
	s->ino = ino;
	s->off = off;
	s->stamp = ++c->clock;
	s->pos = *pos;
	pthread_mutex_unlock(&c->lock);
	memset(pos, 0, sizeof(*pos));
	if (old.stamp)
		view_pos_release(&old.pos); /* outside the lock: it frees */
}
