/* schema.c — tables and column families: names, GC policies, delimiters, table ids. A table's record
 * holds its whole schema; it is read once per transaction and cached, and parsed again only when its
 * bytes have changed since a transaction before (spares, below). Deleting a table or a family is
 * O(1): the data is left invisible (unknown table id, or cells older than the family) for lm_gc(). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "schema.h"
#include "aggregate.h"
#include "codec.h"
#include "heat.h"
#include "keys.h"
#include "mem.h"
#include "lm.h"

/* Record versions: 1 has no creation time; 2 has one; 3 adds a value type per family; 4 is 3 followed
 * by a varint of table flags (TF_*). A table is written as 4 only when a flag is set, else as 3 only
 * when a family has a value type, else as 2; all four are read. */
#define REC_VERSION 2
#define REC_VERSION_TYPED 3
#define REC_VERSION_FLAGS 4
#define TF_HEAT_OFF 1u /* the Key Visualizer records nothing of the table */
static const char META_NEXT_ID[] = "Mnextid";

static void family_release(struct sch_family *f)
{
	free(f->name);
	free(f->gc);
	gcp_free(f->policy);
}

static void drops_free(struct sch_table *t)
{
	for (size_t i = 0; i < t->ndrop_list; i++) {
		free(t->drops[i].start);
		free(t->drops[i].end);
		free(t->drops[i].xkey);
	}
	free(t->drops);
	t->drops = NULL;
	t->ndrop_list = 0;
	t->drops_loaded = false;
}

static void table_free(struct sch_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nfam; i++)
		family_release(&t->fam[i]);
	free(t->fam);
	drops_free(t);
	free(t->name);
	free(t->rec);
	free(t);
}

/* ---- spares: parsed tables kept between transactions ----
 * Every transaction of the mount reads a table's record and would parse it again: its families, their
 * policies, each an allocation or more. A transaction's tables go to the store's spares when it ends
 * (sch_cache_release), each with the record it was parsed from; sch_table_get() takes one back when it
 * reads the very same bytes. Drop lists are read again (their records change without the table's). */
#define SPARES_MAX 16

void sch_spares_init(struct sch_spares *sp)
{
	pthread_mutex_init(&sp->lock, NULL);
	sp->list = NULL;
	sp->n = 0;
}

void sch_spares_release(struct sch_spares *sp)
{
	while (sp->list) {
		struct sch_table *n = sp->list->next;
		table_free(sp->list);
		sp->list = n;
	}
	sp->n = 0;
	pthread_mutex_destroy(&sp->lock);
}

void sch_cache_release(lm_txn *txn, bool keep)
{
	struct sch_spares *sp = &txn->st->spares;
	while (txn->tables) {
		struct sch_table *t = txn->tables, *old = NULL;
		txn->tables = t->next;
		if (!keep || !t->rec) {
			table_free(t);
			continue;
		}
		pthread_mutex_lock(&sp->lock);
		t->next = sp->list;
		sp->list = t;
		if (++sp->n > SPARES_MAX) { /* the oldest goes */
			struct sch_table **pp = &sp->list;
			while ((*pp)->next)
				pp = &(*pp)->next;
			old = *pp;
			*pp = NULL;
			sp->n--;
		}
		pthread_mutex_unlock(&sp->lock);
		table_free(old);
	}
}

/* The spare parsed from record V (VN bytes) of table NAME, taken out of SP; NULL if none. */
static struct sch_table *spare_take(struct sch_spares *sp, const char *name, const void *v, size_t vn)
{
	struct sch_table *t, **pp;
	pthread_mutex_lock(&sp->lock);
	for (pp = &sp->list; (t = *pp); pp = &t->next)
		if (t->recn == vn && !strcmp(t->name, name) && !memcmp(t->rec, v, vn)) {
			*pp = t->next;
			sp->n--;
			break;
		}
	pthread_mutex_unlock(&sp->lock);
	if (t) {
		t->next = NULL;
		drops_free(t); /* read again when a scan needs them */
	}
	return t;
}

static size_t table_key(uint8_t *out, const char *name)
{
	size_t n = strlen(name);
	out[0] = KEY_TABLE;
	memcpy(out + 1, name, n);
	return n + 1;
}

/* ---- record encoding ---- */

static int get_str(const uint8_t **p, const uint8_t *end, char **out)
{
	uint64_t n;
	int a = codec_get_varint(*p, (size_t)(end - *p), &n);
	if (a < 0 || n > (uint64_t)(end - *p - a))
		return -EIO;
	*p += a;
	if (!(*out = mem_strndup((const char *)*p, n)))
		return -ENOMEM;
	*p += n;
	return 0;
}

static int parse_record(const char *name, const uint8_t *v, size_t vn, struct sch_table **out)
{
	const uint8_t *p = v, *end = v + vn;
	struct sch_table *t;
	uint64_t nfam;
	int a, rc = -EIO;

	size_t hdr = vn && v[0] == 1 ? 10 : 18;
	bool flagged = vn && v[0] == REC_VERSION_FLAGS;
	bool typed = vn && (v[0] == REC_VERSION_TYPED || flagged);

	if (vn < hdr || (v[0] != 1 && v[0] != REC_VERSION && !typed))
		return -EIO;
	if (!(t = mem_calloc(1, sizeof(*t))) || !(t->name = mem_strdup(name))) {
		free(t);
		return -ENOMEM;
	}
	t->id = key_get_u32(p + 1);
	t->delim = (char)p[5];
	t->ndrops = key_get_u32(p + 6);
	if (hdr == 18)
		t->created = (int64_t)key_get_u64(p + 10);
	p += hdr;
	if ((a = codec_get_varint(p, (size_t)(end - p), &nfam)) < 0 || nfam > 100000)
		goto fail;
	p += a;
	if (nfam && !(t->fam = mem_calloc(nfam, sizeof(*t->fam)))) {
		rc = -ENOMEM;
		goto fail;
	}
	for (t->nfam = 0; t->nfam < nfam; t->nfam++) {
		struct sch_family *f = &t->fam[t->nfam];
		if ((rc = get_str(&p, end, &f->name)) || (rc = get_str(&p, end, &f->gc)))
			goto fail_fam;
		if ((a = codec_get_varint(p, (size_t)(end - p), &f->since)) < 0) {
			rc = -EIO;
			goto fail_fam;
		}
		p += a;
		if (typed) {
			uint64_t type;
			if ((a = codec_get_varint(p, (size_t)(end - p), &type)) < 0 || !agg_type_valid(type)) {
				rc = -EIO;
				goto fail_fam;
			}
			f->type = (cs_value_type)type;
			p += a;
		}
		if ((rc = gcp_parse(f->gc, &f->policy, NULL))) {
			if (rc != -ENOMEM)
				rc = -EIO; /* a stored policy that does not parse is a damaged record */
			goto fail_fam;
		}
		continue;
fail_fam:
		t->nfam++; /* free what this entry holds too */
		goto fail;
	}
	if (flagged) {
		uint64_t flags;
		if ((a = codec_get_varint(p, (size_t)(end - p), &flags)) < 0 || flags & ~(uint64_t)TF_HEAT_OFF) {
			rc = -EIO;
			goto fail;
		}
		t->heat_off = flags & TF_HEAT_OFF;
		p += a;
	}
	if (p != end) {
		rc = -EIO; /* trailing bytes (rc is 0 after a good last family) */
		goto fail;
	}
	*out = t;
	return 0;
fail:
	table_free(t);
	return rc;
}

int sch_table_put(lm_txn *txn, struct sch_table *t)
{
	size_t cap = 24, n = 18;
	uint8_t *v, *k = txn->kbuf2;
	bool typed = false;
	int rc;

	for (size_t i = 0; i < t->nfam; i++) {
		cap += 40 + strlen(t->fam[i].name) + strlen(t->fam[i].gc);
		typed |= t->fam[i].type != CS_TYPE_BYTES;
	}
	typed |= t->heat_off;
	if (!(v = mem_malloc(cap + 10)))
		return lm_txn_fail(txn, -ENOMEM);
	v[0] = t->heat_off ? REC_VERSION_FLAGS : typed ? REC_VERSION_TYPED : REC_VERSION;
	key_put_u32(v + 1, t->id);
	v[5] = (uint8_t)t->delim;
	key_put_u32(v + 6, t->ndrops);
	key_put_u64(v + 10, (uint64_t)t->created);
	n += codec_put_varint(v + n, t->nfam);
	for (size_t i = 0; i < t->nfam; i++) {
		size_t a = strlen(t->fam[i].name), b = strlen(t->fam[i].gc);
		n += codec_put_varint(v + n, a);
		memcpy(v + n, t->fam[i].name, a);
		n += a;
		n += codec_put_varint(v + n, b);
		memcpy(v + n, t->fam[i].gc, b);
		n += b;
		n += codec_put_varint(v + n, t->fam[i].since);
		if (typed)
			n += codec_put_varint(v + n, t->fam[i].type);
	}
	if (t->heat_off)
		n += codec_put_varint(v + n, TF_HEAT_OFF);
	rc = kv_put(txn->kv, k, table_key(k, t->name), v, n);
	free(v);
	free(t->rec); /* changed: never a spare (an abort would leave it unlike its record) */
	t->rec = NULL;
	return lm_txn_fail(txn, rc);
}

int sch_table_get(lm_txn *txn, const char *name, struct sch_table **out)
{
	struct sch_table *t;
	const void *v;
	size_t vn;
	int rc;

	if (cs_check_table_name(name))
		return -ENOENT;
	for (t = txn->tables; t; t = t->next)
		if (!strcmp(t->name, name)) {
			*out = t;
			return 0;
		}
	rc = kv_get(txn->kv, txn->kbuf2, table_key(txn->kbuf2, name), &v, &vn);
	if (rc)
		return rc;
	if (!(t = spare_take(&txn->st->spares, name, v, vn))) {
		if ((rc = parse_record(name, v, vn, &t)))
			return rc;
		if ((t->rec = mem_malloc(vn ? vn : 1))) { /* (without it, only not kept) */
			memcpy(t->rec, v, vn);
			t->recn = vn;
		}
	}
	t->next = txn->tables;
	txn->tables = t;
	*out = t;
	return 0;
}

struct sch_family *sch_family_find(const struct sch_table *t, const char *name)
{
	size_t lo = 0, hi = t->nfam;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(t->fam[mid].name, name);
		if (!c)
			return &t->fam[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* ---- tables ---- */

static int next_table_id(lm_txn *txn, uint32_t *id)
{
	const void *v;
	size_t vn;
	uint8_t nv[4];
	int rc = kv_get(txn->kv, META_NEXT_ID, sizeof(META_NEXT_ID) - 1, &v, &vn);

	if (rc && rc != -ENOENT)
		return rc;
	if (!rc && vn != 4)
		return -EIO;
	*id = rc ? 1 : key_get_u32(v);
	if (*id == UINT32_MAX)
		return -ENOSPC;
	key_put_u32(nv, *id + 1);
	return kv_put(txn->kv, META_NEXT_ID, sizeof(META_NEXT_ID) - 1, nv, 4);
}

int sch_new_table_id(lm_txn *txn, uint32_t *id)
{
	return lm_txn_fail(txn, next_table_id(txn, id));
}

/* INFO's families as a schema's: names and value types checked, policies parsed, sorted by name. Each
 * counts from sequence 0, as a restore's: the table's id is fresh, so no cell was ever written under it.
 * Errors: -EINVAL (a bad name, policy or type, or a family given twice), -ENOMEM. */
static int families_from_info(const cs_table_info *info, struct sch_table *t)
{
	int rc;

	if (info->nfamilies && !(t->fam = mem_calloc(info->nfamilies, sizeof(*t->fam))))
		return -ENOMEM;
	for (size_t n = 0; n < info->nfamilies; n++) {
		const cs_family_info *fi = &info->families[n];
		struct sch_family nf = { .type = fi->type };
		size_t i;

		if (cs_check_family_name(fi->name) || !agg_type_valid(fi->type))
			return -EINVAL;
		for (i = t->nfam; i > 0 && strcmp(t->fam[i - 1].name, fi->name) >= 0; i--)
			if (!strcmp(t->fam[i - 1].name, fi->name))
				return -EINVAL;
		if ((rc = sch_policy_parse(fi->gc, &nf.policy, &nf.gc)))
			return rc;
		if (!(nf.name = mem_strdup(fi->name))) {
			family_release(&nf);
			return -ENOMEM;
		}
		memmove(&t->fam[i + 1], &t->fam[i], (t->nfam - i) * sizeof(*t->fam));
		t->fam[i] = nf;
		t->nfam++;
	}
	return 0;
}

int lm_table_create_as(void *txn_, const cs_table_info *info)
{
	lm_txn *txn = txn_;
	struct sch_table *t, *old;
	int rc = lm_txn_write_check(txn);

	if (rc)
		return rc;
	if (cs_check_table_name(info->name))
		return -EINVAL;
	if (!(t = mem_calloc(1, sizeof(*t))) || !(t->name = mem_strdup(info->name))) {
		free(t);
		return lm_txn_fail(txn, -ENOMEM);
	}
	if ((rc = families_from_info(info, t))) {
		table_free(t);
		return rc == -ENOMEM ? lm_txn_fail(txn, rc) : rc;
	}
	if ((rc = sch_table_get(txn, info->name, &old)) != -ENOENT) {
		table_free(t);
		return !rc ? -EEXIST : lm_txn_fail(txn, rc);
	}
	t->delim = info->delim ? info->delim : CS_DEFAULT_DELIM;
	t->created = info->created ? info->created : cs_now_us();
	t->heat_off = info->keyviz_off;
	if ((rc = sch_new_table_id(txn, &t->id)) || (rc = sch_table_put(txn, t))) {
		table_free(t);
		return rc;
	}
	t->next = txn->tables;
	txn->tables = t;
	return 0;
}

int lm_table_delete(void *txn_, const char *name)
{
	lm_txn *txn = txn_;
	struct sch_table *t, **pp;
	int rc = lm_txn_write_check(txn);

	if (rc)
		return rc;
	if ((rc = sch_table_get(txn, name, &t)))
		return rc == -ENOENT ? rc : lm_txn_fail(txn, rc);
	if ((rc = kv_del(txn->kv, txn->kbuf2, table_key(txn->kbuf2, name))))
		return lm_txn_fail(txn, rc);
	for (pp = &txn->tables; *pp != t; pp = &(*pp)->next)
		;
	*pp = t->next;
	table_free(t);
	return 0;
}

/* Renaming rewrites only the 'T' record: cells ('d') and drop records ('X') are keyed by the table id,
 * which the table keeps. The schema cache entry (the one index of tables by name) is renamed in place,
 * so scans already open in TXN go on, and the old name misses the cache and the store alike. */
int lm_table_rename(void *txn_, const char *from, const char *to)
{
	lm_txn *txn = txn_;
	struct sch_table *t, *u;
	char *name;
	int rc = lm_txn_write_check(txn);

	if (rc)
		return rc;
	if ((rc = sch_table_get(txn, from, &t)))
		return rc == -ENOENT ? rc : lm_txn_fail(txn, rc);
	if (cs_check_table_name(to))
		return -EINVAL;
	rc = sch_table_get(txn, to, &u);
	if (!rc)
		return -EEXIST;
	if (rc != -ENOENT)
		return lm_txn_fail(txn, rc);
	if (!(name = mem_strdup(to)))
		return lm_txn_fail(txn, -ENOMEM);
	if ((rc = kv_del(txn->kv, txn->kbuf2, table_key(txn->kbuf2, t->name)))) {
		free(name);
		return lm_txn_fail(txn, rc);
	}
	free(t->name);
	t->name = name;
	return sch_table_put(txn, t);
}

int lm_table_list(void *txn_, char ***names, size_t *n)
{
	lm_txn *txn = txn_;
	kv_cursor *c;
	char **v = NULL;
	size_t cnt = 0, cap = 0;
	uint8_t start = KEY_TABLE;
	int rc;

	if ((rc = kv_cursor_open(txn->kv, &c)))
		return rc;
	for (rc = kv_seek(c, &start, 1); !rc; rc = kv_next(c)) {
		const uint8_t *k;
		size_t kn;
		kv_key(c, (const void **)&k, &kn);
		if (k[0] != KEY_TABLE)
			break;
		if (cnt == cap) {
			char **nv = mem_realloc(v, (cap = cap ? 2 * cap : 16) * sizeof(*v));
			if (!nv) {
				rc = -ENOMEM;
				break;
			}
			v = nv;
		}
		if (!(v[cnt] = mem_strndup((const char *)k + 1, kn - 1))) {
			rc = -ENOMEM;
			break;
		}
		cnt++;
	}
	kv_cursor_close(c);
	if (rc && rc != -ENOENT) {
		cs_strv_free(v, cnt);
		return rc;
	}
	*names = v;
	*n = cnt;
	return 0;
}

int lm_table_info_get(void *txn_, const char *name, cs_table_info **out)
{
	lm_txn *txn = txn_;
	struct sch_table *t;
	cs_table_info *info;
	int rc = sch_table_get(txn, name, &t);

	if (rc)
		return rc;
	if (!(info = mem_calloc(1, sizeof(*info))))
		return -ENOMEM;
	info->delim = t->delim;
	info->created = t->created;
	info->keyviz_off = t->heat_off;
	if (!(info->name = mem_strdup(name)) || (t->nfam && !(info->families = mem_calloc(t->nfam, sizeof(cs_family_info)))))
		goto nomem;
	info->nfamilies = t->nfam; /* only now: cs_table_info_free() walks the families */
	for (size_t i = 0; i < t->nfam; i++) {
		cs_family_info *f = &info->families[i];
		f->type = t->fam[i].type;
		if (!(f->name = mem_strdup(t->fam[i].name)) || !(f->gc = mem_strdup(t->fam[i].gc)) ||
		    !(f->gc_cbt = gcp_format_cbt(t->fam[i].policy)))
			goto nomem;
	}
	*out = info;
	return 0;
nomem:
	cs_table_info_free(info);
	return -ENOMEM;
}

int lm_table_set_keyviz(void *txn_, const char *table, bool on)
{
	lm_txn *txn = txn_;
	struct sch_table *t;
	int rc;

	if ((rc = lm_txn_write_check(txn)))
		return rc;
	if ((rc = sch_table_get(txn, table, &t)))
		return rc == -ENOENT ? rc : lm_txn_fail(txn, rc);
	if (t->heat_off == !on)
		return 0;
	t->heat_off = !on;
	if (!on) /* (what this handle counted of it is dropped now: it would reach the spool before the commit) */
		heat_forget(txn->st->heat, t->name);
	return sch_table_put(txn, t);
}

/* ---- families ---- */

int sch_policy_parse(const char *gc, gcp **p, char **canon)
{
	int rc = gcp_parse(gc ? gc : "never", p, NULL);
	if (rc)
		return rc;
	if (!(*canon = gcp_format(*p))) {
		gcp_free(*p);
		return -ENOMEM;
	}
	return 0;
}

int lm_family_create_typed(void *txn_, const char *table, const char *family, const char *gc,
			   cs_value_type type)
{
	lm_txn *txn = txn_;
	struct sch_table *t;
	struct sch_family nf = { 0 }, *fam;
	size_t i;
	int rc = lm_txn_write_check(txn);

	if (rc)
		return rc;
	if (cs_check_family_name(family) || !agg_type_valid(type))
		return -EINVAL;
	if ((rc = sch_table_get(txn, table, &t)))
		return rc == -ENOENT ? rc : lm_txn_fail(txn, rc);
	if (sch_family_find(t, family))
		return -EEXIST;
	if ((rc = sch_policy_parse(gc, &nf.policy, &nf.gc)))
		return rc == -ENOMEM ? lm_txn_fail(txn, rc) : rc;
	nf.type = type;
	if (!(nf.name = mem_strdup(family)) || !(fam = mem_realloc(t->fam, (t->nfam + 1) * sizeof(*fam)))) {
		family_release(&nf);
		return lm_txn_fail(txn, -ENOMEM);
	}
	t->fam = fam;
	/* Cells left by an earlier family of this name are older than this sequence. */
	if ((rc = lm_txn_seq_bump(txn, &nf.since))) {
		family_release(&nf);
		return lm_txn_fail(txn, rc);
	}
	for (i = t->nfam; i > 0 && strcmp(t->fam[i - 1].name, family) > 0; i--)
		t->fam[i] = t->fam[i - 1];
	t->fam[i] = nf;
	t->nfam++;
	return sch_table_put(txn, t);
}

int sch_family_get(lm_txn *txn, const char *table, const char *family, struct sch_table **t,
		   struct sch_family **f)
{
	int rc = lm_txn_write_check(txn);

	if (rc)
		return rc;
	if ((rc = sch_table_get(txn, table, t)))
		return rc == -ENOENT ? rc : lm_txn_fail(txn, rc);
	return (*f = sch_family_find(*t, family)) ? 0 : -ENOENT;
}

int lm_family_delete(void *txn_, const char *table, const char *family)
{
	lm_txn *txn = txn_;
	struct sch_table *t;
	struct sch_family *f;
	int rc = sch_family_get(txn, table, family, &t, &f);

	if (rc)
		return rc;
	family_release(f);
	memmove(f, f + 1, (size_t)(t->fam + t->nfam - (f + 1)) * sizeof(*f));
	t->nfam--;
	return sch_table_put(txn, t);
}

int sch_family_set_policy(lm_txn *txn, struct sch_table *t, struct sch_family *f, gcp *p, char *canon)
{
	gcp_free(f->policy);
	free(f->gc);
	f->policy = p;
	f->gc = canon;
	return sch_table_put(txn, t);
}

/* ---- dropped ranges ---- */

static int drop_parse(const uint8_t *k, size_t kn, const uint8_t *v, size_t vn, struct sch_drop *d)
{
	size_t sn;
	int a;

	memset(d, 0, sizeof(*d));
	if (kn < KEY_TABLE_PREFIX + 2 + 8 || vn < 1)
		return -EIO;
	a = key_dec(k + KEY_TABLE_PREFIX, kn - KEY_TABLE_PREFIX - 8, NULL, &sn);
	if (a < 0 || (size_t)a != kn - KEY_TABLE_PREFIX - 8)
		return -EIO;
	if (!(d->start = mem_malloc(sn + 1)) || !(d->end = mem_malloc(vn)) || !(d->xkey = mem_malloc(kn)))
		return -ENOMEM;
	key_dec(k + KEY_TABLE_PREFIX, kn - KEY_TABLE_PREFIX - 8, d->start, &d->startn);
	d->seq = key_get_u64(k + kn - 8);
	d->has_end = v[0] & 1;
	d->dirty = v[0] & 2;
	d->endn = vn - 1;
	memcpy(d->end, v + 1, vn - 1);
	memcpy(d->xkey, k, kn);
	d->xkeyn = kn;
	return 0;
}

int sch_drops_load(lm_txn *txn, struct sch_table *t)
{
	kv_cursor *c;
	uint8_t pfx[KEY_TABLE_PREFIX];
	int rc;

	if (t->drops_loaded)
		return 0;
	drops_free(t);
	t->drops_loaded = true;
	if (!t->ndrops)
		return 0;
	pfx[0] = KEY_DROP;
	key_put_u32(pfx + 1, t->id);
	if ((rc = kv_cursor_open(txn->kv, &c)))
		return rc;
	for (rc = kv_seek(c, pfx, KEY_TABLE_PREFIX); !rc; rc = kv_next(c)) {
		const uint8_t *k, *v;
		size_t kn, vn, cap = t->ndrop_list;
		struct sch_drop *nd;

		kv_key(c, (const void **)&k, &kn);
		if (kn < KEY_TABLE_PREFIX || memcmp(k, pfx, KEY_TABLE_PREFIX))
			break;
		if ((rc = kv_value(c, (const void **)&v, &vn)))
			break;
		if (!(nd = mem_realloc(t->drops, (cap + 1) * sizeof(*nd)))) {
			rc = -ENOMEM;
			break;
		}
		t->drops = nd;
		t->ndrop_list++;
		if ((rc = drop_parse(k, kn, v, vn, &nd[cap])))
			break;
	}
	kv_cursor_close(c);
	if (rc && rc != -ENOENT) {
		drops_free(t);
		return rc;
	}
	return 0;
}
