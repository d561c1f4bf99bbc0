/* bt_samples.c — a table's size by key range, from Bigtable's SampleRowKeys: the sample list and its
 * bound (pure, bt_samples.h), then the per-store cache of each table's list and the call that fills it
 * (bt_internal.h). The first part builds alone, with BT_SAMPLES_LIST_ONLY defined, into a test that needs
 * neither gRPC nor an emulator (tests/bigtable/test_bt_samples.c, suite unit). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bt_key.h"
#include "bt_samples.h"
#include "mem.h"

struct bt_samples {
	int refs; /* atomic */
	int64_t fetched_ms;
	size_t n;
	bool has_end;
	uint64_t end;   /* the end marker's offset: the table's size (has_end) */
	uint64_t tail;  /* without an end marker: the allowance after the last sample */
	uint64_t *off;  /* [n], never going down */
	size_t *at;     /* [n + 1]: key I is keys[at[I] .. at[I + 1]) */
	uint8_t *keys;
};

static int sample_cmp(const void *a, const void *b)
{
	const struct bt_sample *x = *(const struct bt_sample *const *)a, *y = *(const struct bt_sample *const *)b;
	int c = bt_key_cmp(x->key, x->keyn, y->key, y->keyn);
	if (c)
		return c;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static uint64_t clamp(int64_t v)
{
	return v < 0 ? 0 : (uint64_t)v;
}

int bt_samples_new(const struct bt_sample *in, size_t n, int64_t fetched_ms, struct bt_samples **out)
{
	const struct bt_sample **v = NULL;
	struct bt_samples *s;
	size_t total = 0, m = 0;
	uint64_t prev = 0, gap = 0;

	if (n > BT_SAMPLES_MAX)
		return -EIO;
	for (size_t i = 0; i < n; i++) {
		if (in[i].keyn > BT_SAMPLES_MAX_KEYS - total)
			return -EIO;
		total += in[i].keyn;
	}
	if (!(s = mem_calloc(1, sizeof(*s))) || !(s->at = mem_malloc((n + 1) * sizeof(*s->at))) ||
	    (n && (!(s->off = mem_malloc(n * sizeof(*s->off))) || !(v = mem_malloc(n * sizeof(*v))))) ||
	    !(s->keys = mem_malloc(total ? total : 1)))
		goto nomem;
	s->refs = 1;
	s->fetched_ms = fetched_ms;
	for (size_t i = 0; i < n; i++)
		v[i] = &in[i];
	if (n)
		qsort(v, n, sizeof(*v), sample_cmp);
	s->at[0] = 0;
	for (size_t i = 0; i < n; i++) {
		const struct bt_sample *x = v[i];
		if (!x->keyn) { /* the end marker: after every key, whatever the sort says */
			if (!s->has_end || clamp(x->offset) > s->end)
				s->end = clamp(x->offset);
			s->has_end = true;
			continue;
		}
		if (m && !bt_key_cmp(x->key, x->keyn, s->keys + s->at[m - 1], s->at[m] - s->at[m - 1]))
			continue; /* (sorted by offset too: the first of equal keys has the smallest) */
		memcpy(s->keys + s->at[m], x->key, x->keyn);
		s->at[m + 1] = s->at[m] + x->keyn;
		s->off[m] = clamp(x->offset) > prev ? clamp(x->offset) : prev;
		if (s->off[m] - prev > gap)
			gap = s->off[m] - prev;
		prev = s->off[m++];
	}
	s->n = m;
	if (s->has_end && s->end < prev)
		s->end = prev;
	s->tail = gap > BT_SAMPLES_TAIL_MIN ? gap : BT_SAMPLES_TAIL_MIN;
	free(v);
	*out = s;
	return 0;
nomem:
	free(v);
	if (s) {
		s->refs = 1;
		bt_samples_put(s);
	}
	return -ENOMEM;
}

struct bt_samples *bt_samples_ref(struct bt_samples *s)
{
	__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
	return s;
}

void bt_samples_put(struct bt_samples *s)
{
	if (!s || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL))
		return;
	free(s->off);
	free(s->at);
	free(s->keys);
	free(s);
}

/* The number of samples whose key is < KEY (OR_EQUAL false) or <= KEY (true). */
static size_t count_below(const struct bt_samples *s, const void *key, size_t n, bool or_equal)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = bt_key_cmp(s->keys + s->at[mid], s->at[mid + 1] - s->at[mid], key, n);
		if (c < 0 || (c == 0 && or_equal))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int bt_samples_bound(const struct bt_samples *s, const void *lo, size_t lon, const void *hi, size_t hin,
		     uint64_t *bytes)
{
	uint64_t start = 0, end;
	size_t i;

	*bytes = 0;
	if (hi && !hin)
		hi = NULL; /* an empty end key is no end, as in Bigtable's RowRange */
	if (hi && lon && bt_key_cmp(lo, lon, hi, hin) >= 0)
		return 0;
	if (lon && (i = count_below(s, lo, lon, true)))
		start = s->off[i - 1]; /* the last sample at or before LO */
	if (hi && (i = count_below(s, hi, hin, false)) < s->n)
		end = s->off[i]; /* the first sample at or after HI */
	else if (s->has_end)
		end = s->end;
	else
		end = s->n ? s->off[s->n - 1] + s->tail : 0;
	*bytes = end > start ? end - start : 0;
	return 0;
}

size_t bt_samples_count(const struct bt_samples *s)
{
	return s->n;
}

const uint8_t *bt_samples_key(const struct bt_samples *s, size_t i, size_t *n)
{
	*n = s->at[i + 1] - s->at[i];
	return s->keys + s->at[i];
}

uint64_t bt_samples_offset(const struct bt_samples *s, size_t i)
{
	return s->off[i];
}

bool bt_samples_has_end(const struct bt_samples *s)
{
	return s->has_end;
}

uint64_t bt_samples_size(const struct bt_samples *s)
{
	return s->has_end ? s->end : 0;
}

int64_t bt_samples_fetched_ms(const struct bt_samples *s)
{
	return s->fetched_ms;
}

#ifndef BT_SAMPLES_LIST_ONLY
/* ---- the cache and the call ------------------------------------------------------------------------- */

#include "bigtable.pb-c.h"
#include "bt_internal.h"

#define SAMPLE_ROW_KEYS "/google.bigtable.v2.Bigtable/SampleRowKeys"

/* The lists of the tables asked about. GEN counts bt_samples_forget calls: a list fetched across one is
 * not kept (it may describe the table before it was deleted or made again). */
struct bt_samples_cache {
	pthread_mutex_t lock;
	uint64_t gen;
	size_t n, cap;
	struct slot {
		char *table;
		struct bt_samples *s;
	} *v;
};

int bt_samples_cache_new(struct bt_samples_cache **out)
{
	struct bt_samples_cache *c = mem_calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	*out = c;
	return 0;
}

void bt_samples_cache_free(struct bt_samples_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].table);
		bt_samples_put(c->v[i].s);
	}
	free(c->v);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* One SampleRowKeys stream of the table at TO: its list in *OUT, or an error (bt_fail'd). */
static int fetch(bt_store *st, const struct bt_target *to, struct bt_samples **out)
{
	Google__Bigtable__V2__SampleRowKeysRequest req = GOOGLE__BIGTABLE__V2__SAMPLE_ROW_KEYS_REQUEST__INIT;
	Google__Bigtable__V2__SampleRowKeysResponse **msg = NULL;
	struct bt_sample *in = NULL;
	size_t n = 0, cap = 0, keys = 0;
	btr_stream *s = NULL;
	int rc;

	req.table_name = (char *)to->name;
	req.app_profile_id = (char *)btr_app_profile(st->c);
	if ((rc = btr_stream_open(st->c, BTR_DATA, SAMPLE_ROW_KEYS, &req.base, to->routing, &s))) {
		rc = bt_fail(rc, NULL, "SampleRowKeys: the call could not be started");
		goto out;
	}
	for (;;) {
		ProtobufCMessage *m;
		rc = btr_stream_next(s, &google__bigtable__v2__sample_row_keys_response__descriptor, &m);
		if (rc < 0) {
			rc = bt_fail(rc, btr_stream_status(s), NULL);
			goto out;
		}
		if (rc == 0)
			break;
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			void *p = n < BT_SAMPLES_MAX ? mem_realloc(msg, ncap * sizeof(*msg)) : NULL;
			if (!p) {
				protobuf_c_message_free_unpacked(m, NULL);
				rc = n < BT_SAMPLES_MAX ? -ENOMEM
							: bt_fail(-EIO, NULL, "SampleRowKeys: the server sent more samples "
									      "than any table has");
				goto out;
			}
			msg = p;
			cap = ncap;
		}
		msg[n++] = (Google__Bigtable__V2__SampleRowKeysResponse *)m;
		if ((keys += msg[n - 1]->row_key.len) > BT_SAMPLES_MAX_KEYS) {
			rc = bt_fail(-EIO, NULL, "SampleRowKeys: the server sent more bytes of keys than any table has");
			goto out;
		}
	}
	if (n && !(in = mem_malloc(n * sizeof(*in)))) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		in[i] = (struct bt_sample){ msg[i]->row_key.data, msg[i]->row_key.len, msg[i]->offset_bytes };
	rc = bt_samples_new(in, n, bt_mono_ms(), out); /* (within its limits: checked above) */
out:
	btr_stream_close(s);
	for (size_t i = 0; i < n; i++)
		protobuf_c_message_free_unpacked(&msg[i]->base, NULL);
	free(msg);
	free(in);
	return rc;
}

int bt_samples_get(bt_store *st, const char *table, struct bt_samples **out)
{
	struct bt_samples_cache *c = st->samples;
	struct bt_samples *s = NULL;
	struct bt_target to;
	int64_t now = bt_mono_ms();
	uint64_t gen;
	int rc;

	*out = NULL;
	if (!strcmp(table, BT_META_TABLE))
		return -ENOENT;
	if ((rc = bt_target(st, table, &to)))
		return rc;
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].table, table)) {
			if (now - bt_samples_fetched_ms(c->v[i].s) < BT_SAMPLES_TTL_MS)
				s = bt_samples_ref(c->v[i].s);
			break;
		}
	gen = c->gen;
	pthread_mutex_unlock(&c->lock);
	if (s) {
		*out = s;
		return 0;
	}
	if ((rc = fetch(st, &to, &s)))
		return rc;
	pthread_mutex_lock(&c->lock);
	if (c->gen == gen) {
		size_t i;
		for (i = 0; i < c->n && strcmp(c->v[i].table, table); i++)
			;
		if (i == c->n && c->n == c->cap) {
			size_t cap = c->cap ? 2 * c->cap : 8;
			struct slot *v = mem_realloc(c->v, cap * sizeof(*v));
			if (v)
				c->v = v, c->cap = cap;
		}
		if (i < c->n) {
			bt_samples_put(c->v[i].s);
			c->v[i].s = bt_samples_ref(s);
		} else if (i < c->cap && (c->v[i].table = mem_strdup(table))) {
			c->v[i].s = bt_samples_ref(s);
			c->n++;
		} /* (else not kept: memory is short) */
	}
	pthread_mutex_unlock(&c->lock);
	*out = s;
	return 0;
}

void bt_samples_forget(bt_store *st, const char *table)
{
	struct bt_samples_cache *c = st->samples;
	pthread_mutex_lock(&c->lock);
	c->gen++;
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].table, table)) {
			free(c->v[i].table);
			bt_samples_put(c->v[i].s);
			c->v[i] = c->v[--c->n];
			break;
		}
	pthread_mutex_unlock(&c->lock);
}
#endif
