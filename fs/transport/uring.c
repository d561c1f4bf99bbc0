/* uring.c — FUSE over io_uring: the kernel puts each request in an entry of the ring of the CPU that made
 * it, the daemon answers in that entry, and the answer and the fetch of the next request are one
 * submission (FUSE_IO_URING_CMD_COMMIT_AND_FETCH). libfuse 3.14 knows nothing of it: its reads and
 * writes of /dev/fuse come here (fuse_session_custom_io), a ring request is handed to it rebuilt in
 * /dev/fuse's format (fuse_session_process_buf), and its reply, matched by the request's unique, is
 * copied into the entry instead of written. /dev/fuse stays for INIT, FORGET, INTERRUPT and the
 * daemon's notifications (loop.c serves it), and is the whole transport when the rings cannot be had.
 *
 * Threads, as loop.c's: on each queue one thread at a time waits for the ring and answers what it took
 * itself; the supervisor (uring_tick) lets another thread of that queue wait when a request has been in
 * progress for a whole tick, so a request blocked on the store's writer lock never stops the requests
 * that come after it on the same CPU (each queue has DEPTH entries). */
#include "uring.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#if CELLFS_URING
#include <linux/fuse.h>
#include <liburing.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <time.h>

/* The kernel's FUSE io_uring protocol (include/uapi/linux/fuse.h, 7.42), which Debian 12's linux/fuse.h
 * (7.38) predates: same names, sizes and numbers. */
#ifndef FUSE_OVER_IO_URING
#define FUSE_OVER_IO_URING (1ULL << 41)
#endif
#ifndef FUSE_URING_IN_OUT_HEADER_SZ
#define FUSE_URING_IN_OUT_HEADER_SZ 128
#define FUSE_URING_OP_IN_OUT_SZ 128

struct fuse_uring_ent_in_out {
	uint64_t flags;
	uint64_t commit_id; /* the request's unique: names the entry in the commit */
	uint32_t payload_sz; /* bytes in the payload buffer, both ways */
	uint32_t padding;
	uint64_t reserved;
};

struct fuse_uring_req_header {
	char in_out[FUSE_URING_IN_OUT_HEADER_SZ]; /* fuse_in_header, then our fuse_out_header */
	char op_in[FUSE_URING_OP_IN_OUT_SZ];      /* the request's first argument (its op header) */
	struct fuse_uring_ent_in_out ring_ent_in_out;
};

enum fuse_uring_cmd {
	FUSE_IO_URING_CMD_INVALID = 0,
	FUSE_IO_URING_CMD_REGISTER = 1,
	FUSE_IO_URING_CMD_COMMIT_AND_FETCH = 2,
};

struct fuse_uring_cmd_req { /* in the SQE's command area (IORING_SETUP_SQE128) */
	uint64_t flags;
	uint64_t commit_id;
	uint16_t qid;
	uint8_t padding[6];
};
#endif

#define DEPTH 8          /* entries per queue: requests of one CPU in progress at once */
#define MAX_PER_QUEUE 8  /* threads per queue, at most */
#define ROOM 4096        /* before each payload: the rebuilt fuse_in_header and op header */
#define MIN_PAYLOAD 8192 /* the kernel's FUSE_MIN_READ_BUFFER */

struct uring_ent {
	struct uring_queue *q;
	struct fuse_uring_req_header *hdr; /* (at the start of the entry's mapping) */
	char *payload;                     /* payload_len bytes, ROOM after hdr */
	struct iovec iov[2];               /* header and payload, as REGISTER gives them */
	uint64_t commit_id;
	bool fetched;                      /* a request ever came: REGISTER was accepted */
};

struct uring_queue {
	struct uring *u;
	unsigned qid;
	struct io_uring ring;
	bool ring_ok;
	pthread_mutex_t sq_lock;   /* the submission queue: whichever thread answers submits */
	struct uring_ent ent[DEPTH];
	/* under u->lock */
	pthread_cond_t park;
	pthread_t reaper;          /* the thread waiting for the ring, when one is */
	unsigned reaping;          /* 0 or 1 */
	unsigned busy, parked, threads;
	unsigned long seq, seen;   /* requests taken; seq at the supervisor's last look */
	bool stuck;                /* a thread was let in at the last look and has not begun yet */
};

/* A notification from a thread serving a ring request is written by the notifier thread while the
 * server waits on a condition variable: a /dev/fuse notification can wait uninterruptibly (for a page
 * that a reader holds locked while its read waits in a ring entry), and the kernel hands the next
 * request of an entry to the thread that committed it, as task work, which a thread in such a wait
 * never runs. */
struct notice {
	struct iovec *iov;
	int count;
	ssize_t res;
	int err;
	bool posted, done;
};

struct uring {
	struct fuse_session *se;
	int fd;
	unsigned nq;                 /* queues: the kernel's possible CPUs */
	size_t payload_len;
	size_t map_len;              /* of each entry's mapping */
	struct uring_queue *q;
	pthread_mutex_t lock;
	pthread_cond_t done;
	pthread_t *tid;              /* every thread started, joined at the end */
	unsigned spawned, threads;
	int sig;                     /* interrupts a thread's wait for its ring at the end */
	_Atomic int reg_err;         /* a REGISTER the kernel refused (negative errno) */
	bool exit;
	bool serving;                /* requests come on the rings */
	cpu_set_t cpus;              /* the daemon's affinity when it started */
	_Atomic uint64_t init_unique; /* INIT's, until it is answered */
	bool offered;                /* the kernel's INIT offered FUSE_OVER_IO_URING */
	/* the notifier (struct notice) */
	pthread_mutex_t nlock;
	pthread_cond_t ncond;
	struct notice *notice;
	pthread_t notifier;
	bool notifier_started;
};

/* libfuse's custom io hands us the session's userdata (the daemon's), not ours: one session per process. */
static struct uring *the_uring;

/* What this thread answers. Per thread, not per entry: once answered, the entry is the kernel's again,
 * and its next request may be taken by another thread while this one finishes the handler. */
static __thread struct {
	struct uring_ent *e; /* NULL: no ring request */
	uint64_t unique;
	bool answered;
	bool cannot_block; /* the notification being written never waits for a request (uring_inval_dir) */
} serving;

bool uring_built(void)
{
	return true;
}

/* Submit command CMD for entry E of queue Q, naming queue QID (Q's own but in init_reply's last resort).
 * WAIT: in the same io_uring_enter, wait for a completion (the caller is Q's reaper); the submission
 * queue's lock is not held while waiting, so the command is put in the ring under it and the kernel
 * takes it in whichever thread's io_uring_enter comes first. */
static int submit_to(struct uring_queue *q, struct uring_ent *e, unsigned cmd, unsigned qid, bool wait)
{
	struct io_uring_sqe *sqe;
	struct fuse_uring_cmd_req *req;
	int rc;

	pthread_mutex_lock(&q->sq_lock);
	if (!(sqe = io_uring_get_sqe(&q->ring))) { /* (DEPTH entries, DEPTH slots: never) */
		pthread_mutex_unlock(&q->sq_lock);
		return -EBUSY;
	}
	memset(sqe, 0, 2 * sizeof(*sqe)); /* (SQE128) */
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = q->u->fd;
	sqe->cmd_op = cmd;
	sqe->addr = (uintptr_t)e->iov;
	sqe->len = 2;
	io_uring_sqe_set_data(sqe, e);
	req = (struct fuse_uring_cmd_req *)sqe->cmd;
	req->qid = (uint16_t)qid;
	req->commit_id = e->commit_id;
	if (!wait) {
		rc = io_uring_submit(&q->ring);
		pthread_mutex_unlock(&q->sq_lock);
		return rc < 0 ? rc : 0;
	}
	__atomic_store_n(q->ring.sq.ktail, q->ring.sq.sqe_tail, __ATOMIC_RELEASE);
	q->ring.sq.sqe_head = q->ring.sq.sqe_tail;
	pthread_mutex_unlock(&q->sq_lock);
	rc = io_uring_enter((unsigned)q->ring.ring_fd, 1, 1, IORING_ENTER_GETEVENTS, NULL);
	return rc < 0 ? -errno : 0;
}

static int submit(struct uring_ent *e, unsigned cmd)
{
	return submit_to(e->q, e, cmd, e->q->qid, false);
}

/* Copy libfuse's reply (IOV[0] the fuse_out_header) into E; the worker commits it once the handler has
 * returned (so that nothing of the request is reused under it), fetching the next request. */
static ssize_t answer(struct uring_ent *e, const struct iovec *iov, int count)
{
	struct fuse_out_header out;
	size_t n = 0, total = iov[0].iov_len;

	memcpy(&out, iov[0].iov_base, sizeof(out));
	for (int i = 1; i < count; i++) {
		total += iov[i].iov_len;
		if (n + iov[i].iov_len > e->q->u->payload_len) { /* (cannot happen: the kernel sized it) */
			out.error = -EIO;
			n = 0;
			break;
		}
		memcpy(e->payload + n, iov[i].iov_base, iov[i].iov_len);
		n += iov[i].iov_len;
	}
	if (out.error)
		n = 0;
	memcpy(e->hdr->in_out, &out, sizeof(out));
	e->hdr->ring_ent_in_out.payload_sz = (uint32_t)n;
	return (ssize_t)total;
}

/* Hand a request taken from E to libfuse, and make sure the entry is committed whatever happens. */
static void serve(struct uring *u, struct uring_ent *e)
{
	const struct fuse_in_header *in = (const void *)e->hdr->in_out;
	uint32_t payload_sz = e->hdr->ring_ent_in_out.payload_sz;
	size_t op_len;
	char *start;

	e->commit_id = e->hdr->ring_ent_in_out.commit_id;
	/* in->len counts the request as /dev/fuse would give it: header, op header, payload */
	if (in->len < sizeof(*in) + (size_t)payload_sz || payload_sz > u->payload_len ||
	    (op_len = in->len - sizeof(*in) - payload_sz) > FUSE_URING_OP_IN_OUT_SZ) {
		struct fuse_out_header out = { .len = sizeof(out), .error = -EIO, .unique = in->unique };
		struct iovec iov = { &out, sizeof(out) };
		fuse_log(FUSE_LOG_ERR, "cellfs: io_uring: a request of %u bytes with a payload of %u\n", in->len,
			 payload_sz);
		answer(e, &iov, 1);
		return;
	}
	start = e->payload - sizeof(*in) - op_len;
	memcpy(start + sizeof(*in), e->hdr->op_in, op_len);
	memcpy(start, in, sizeof(*in));
	serving.e = e;
	serving.unique = in->unique;
	serving.answered = false;
	fuse_session_process_buf(u->se, &(struct fuse_buf){ .mem = start, .size = in->len });
	serving.e = NULL;
	if (!serving.answered) { /* (libfuse answers every request but FORGET, which never comes here) */
		struct fuse_out_header out = { .len = sizeof(out), .error = -EIO, .unique = serving.unique };
		struct iovec iov = { &out, sizeof(out) };
		answer(e, &iov, 1);
	}
}

static void *worker(void *arg)
{
	struct uring_queue *q = arg;
	struct uring *u = q->u;
	struct uring_ent *answered = NULL; /* answered, to commit */

	pthread_mutex_lock(&u->lock);
	for (;;) {
		struct io_uring_cqe *cqe;
		struct uring_ent *e = NULL;
		int rc, res = 0;

		if (answered && (q->reaping || u->exit)) { /* commit alone: another thread waits */
			pthread_mutex_unlock(&u->lock);
			if ((rc = submit(answered, FUSE_IO_URING_CMD_COMMIT_AND_FETCH)))
				fuse_log(FUSE_LOG_ERR, "cellfs: io_uring queue %u: commit: %s\n", q->qid, strerror(-rc));
			answered = NULL;
			pthread_mutex_lock(&u->lock);
		}
		while (!u->exit && q->reaping) {
			q->parked++;
			pthread_cond_wait(&q->park, &u->lock);
			q->parked--;
		}
		if (u->exit)
			break;
		q->reaping = 1;
		q->reaper = pthread_self();
		q->stuck = false;
		pthread_mutex_unlock(&u->lock);
		if (answered) { /* commit and wait in one io_uring_enter */
			if ((rc = submit_to(q, answered, FUSE_IO_URING_CMD_COMMIT_AND_FETCH, q->qid, true)) && rc != -EINTR)
				fuse_log(FUSE_LOG_ERR, "cellfs: io_uring queue %u: commit: %s\n", q->qid, strerror(-rc));
			answered = NULL;
		}
		rc = io_uring_wait_cqe(&q->ring, &cqe); /* (there already, after a commit and wait) */
		if (!rc) {
			e = io_uring_cqe_get_data(cqe);
			res = cqe->res;
			if (res < 0 && !e->fetched) /* (said before the CQE goes: init_reply looks for either) */
				atomic_store(&u->reg_err, res);
			if (res >= 0)
				e->fetched = true;
			io_uring_cqe_seen(&q->ring, cqe);
		}
		pthread_mutex_lock(&u->lock);
		q->reaping = 0;
		if (rc == -EINTR || rc == -EAGAIN)
			continue;
		if (rc < 0 || res < 0) {
			/* The entry is gone: -ENOTCONN when the mount ends, else a failed registration or send. */
			if (rc < 0 || (res != -ENOTCONN && res != -ECANCELED && !u->exit && e->fetched))
				fuse_log(FUSE_LOG_ERR, "cellfs: io_uring queue %u: %s\n", q->qid, strerror(rc < 0 ? -rc : -res));
			if (rc < 0)
				break;
			continue;
		}
		q->busy++;
		q->seq++;
		pthread_mutex_unlock(&u->lock);
		serve(u, e);
		answered = e;
		pthread_mutex_lock(&u->lock);
		q->busy--;
	}
	if (answered) { /* (the mount is ending) */
		pthread_mutex_unlock(&u->lock);
		submit(answered, FUSE_IO_URING_CMD_COMMIT_AND_FETCH);
		pthread_mutex_lock(&u->lock);
	}
	q->threads--;
	u->threads--;
	pthread_cond_signal(&u->done);
	pthread_mutex_unlock(&u->lock);
	return NULL;
}

/* A thread for Q (NULL: the notifier), on Q's CPU when the daemon may run there, with every signal
 * blocked but WAKE_SIG's, SIGSEGV and SIGBUS (as loop.c's). Called with u->lock held. */
static void *notify_main(void *arg);
static int spawn(struct uring *u, struct uring_queue *q, int sig)
{
	pthread_attr_t attr;
	sigset_t mask, old;
	pthread_t *tid;
	int rc;

	if (q && q->threads == MAX_PER_QUEUE)
		return -EAGAIN;
	if (!(tid = realloc(u->tid, (u->spawned + 1) * sizeof(*tid))))
		return -ENOMEM;
	u->tid = tid;
	pthread_attr_init(&attr);
	if (q && CPU_ISSET(q->qid, &u->cpus)) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(q->qid, &one);
		pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
	}
	sigfillset(&mask);
	sigdelset(&mask, sig);
	sigdelset(&mask, SIGSEGV);
	sigdelset(&mask, SIGBUS);
	pthread_sigmask(SIG_SETMASK, &mask, &old);
	rc = q ? pthread_create(&u->tid[u->spawned], &attr, worker, q) :
		 pthread_create(&u->notifier, &attr, notify_main, u);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc)
		return -rc;
	if (q) {
		u->spawned++;
		u->threads++;
		q->threads++;
	}
	return 0;
}

static void *notify_main(void *arg)
{
	struct uring *u = arg;

	pthread_mutex_lock(&u->nlock);
	for (;;) {
		while (!u->exit && (!u->notice || u->notice->done))
			pthread_cond_wait(&u->ncond, &u->nlock);
		if (!u->notice || u->notice->done)
			break;
		struct notice *n = u->notice;
		pthread_mutex_unlock(&u->nlock);
		n->res = writev(u->fd, n->iov, n->count);
		n->err = errno;
		pthread_mutex_lock(&u->nlock);
		n->done = true;
		pthread_cond_broadcast(&u->ncond);
	}
	pthread_mutex_unlock(&u->nlock);
	return NULL;
}

static ssize_t notify(struct uring *u, struct iovec *iov, int count)
{
	struct notice n = { .iov = iov, .count = count };

	pthread_mutex_lock(&u->nlock);
	while (u->notice && !u->exit)
		pthread_cond_wait(&u->ncond, &u->nlock);
	if (u->exit) {
		pthread_mutex_unlock(&u->nlock);
		return writev(u->fd, iov, count);
	}
	u->notice = &n;
	pthread_cond_broadcast(&u->ncond);
	while (!n.done)
		pthread_cond_wait(&u->ncond, &u->nlock);
	u->notice = NULL;
	pthread_cond_broadcast(&u->ncond);
	pthread_mutex_unlock(&u->nlock);
	errno = n.err;
	return n.res;
}

int uring_inval_dir(struct fuse_session *se, fuse_ino_t ino)
{
	int rc;

	serving.cannot_block = true;
	rc = fuse_lowlevel_notify_inval_inode(se, ino, 0, 0);
	serving.cannot_block = false;
	return rc;
}

static void say_fallback(const char *why)
{
	fuse_log(FUSE_LOG_NOTICE, "cellfs: transport: /dev/fuse (io_uring: %s)\n", why);
}

/* INIT's reply: ask for io_uring when the kernel offers it and the entries and threads are ready, write
 * it, then register every entry (the kernel holds requests back until every queue has one). */
static ssize_t init_reply(struct uring *u, int fd, struct iovec *iov, int count)
{
	struct fuse_init_out out;
	struct iovec patched[2];
	size_t pages, need;
	ssize_t res;
	int rc = 0;

	atomic_store(&u->init_unique, 0);
	if (!u->offered) {
		res = writev(fd, iov, count);
		say_fallback("the kernel does not offer it; as root: echo 1 > /sys/module/fuse/parameters/enable_uring");
		return res;
	}
	if (count != 2 || iov[1].iov_len != sizeof(out)) {
		res = writev(fd, iov, count);
		say_fallback("libfuse's INIT reply is not the size this build knows");
		return res;
	}
	memcpy(&out, iov[1].iov_base, sizeof(out));
	pages = (out.flags & FUSE_MAX_PAGES) && out.max_pages ? out.max_pages : 32; /* (FUSE_DEFAULT_MAX_PAGES_PER_REQ) */
	need = pages * (size_t)sysconf(_SC_PAGESIZE);
	need = need > out.max_write ? need : out.max_write;
	u->payload_len = need > MIN_PAYLOAD ? need : MIN_PAYLOAD;
	u->map_len = ROOM + u->payload_len;
	for (unsigned i = 0; i < u->nq && !rc; i++) {
		for (unsigned j = 0; j < DEPTH && !rc; j++) {
			struct uring_ent *e = &u->q[i].ent[j];
			char *m = mmap(NULL, u->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (m == MAP_FAILED) {
				rc = -errno;
				break;
			}
			e->q = &u->q[i];
			e->hdr = (void *)m;
			e->payload = m + ROOM;
			e->iov[0] = (struct iovec){ e->hdr, sizeof(*e->hdr) };
			e->iov[1] = (struct iovec){ e->payload, u->payload_len };
		}
	}
	pthread_mutex_lock(&u->lock);
	for (unsigned i = 0; i < u->nq && !rc; i++)
		rc = spawn(u, &u->q[i], u->sig);
	if (!rc && !(rc = spawn(u, NULL, u->sig)))
		u->notifier_started = true;
	pthread_mutex_unlock(&u->lock);
	if (rc) {
		res = writev(fd, iov, count);
		say_fallback(strerror(-rc));
		return res;
	}
	out.flags |= FUSE_INIT_EXT;
	out.flags2 |= (uint32_t)(FUSE_OVER_IO_URING >> 32);
	patched[0] = iov[0];
	patched[1] = (struct iovec){ &out, sizeof(out) };
	if ((res = writev(fd, patched, 2)) < 0)
		return res;
	/* INIT is done (the kernel processed the reply in that write): register */
	for (unsigned i = 0; i < u->nq && !rc; i++)
		for (unsigned j = 0; j < DEPTH && !rc; j++)
			rc = submit(&u->q[i].ent[j], FUSE_IO_URING_CMD_REGISTER);
	if (rc) {
		/* Not even submitted: the kernel would hold requests back for a ring that never comes. A
		 * REGISTER it refuses (a queue it does not have) makes it give up io_uring for /dev/fuse. */
		submit_to(&u->q[0], &u->q[0].ent[0], FUSE_IO_URING_CMD_REGISTER, UINT16_MAX, false);
		say_fallback(strerror(-rc));
		return res;
	}
	/* A refused REGISTER completes within the submission (the kernel has gone back to /dev/fuse): its
	 * CQE is there, or a worker took it and said so in reg_err. */
	for (unsigned i = 0; i < u->nq && !rc; i++) {
		struct io_uring_cqe *cqe;
		if (!io_uring_peek_cqe(&u->q[i].ring, &cqe) && cqe->res < 0)
			rc = cqe->res;
	}
	if (!rc)
		rc = atomic_load(&u->reg_err);
	if (rc) {
		say_fallback(strerror(-rc));
		return res;
	}
	u->serving = true;
	fuse_log(FUSE_LOG_NOTICE, "cellfs: transport: io_uring (%u queues of %u entries)\n", u->nq, DEPTH);
	return res;
}

static ssize_t io_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	struct uring *u = the_uring;
	struct uring_ent *e = serving.e;
	const struct fuse_out_header *out = iov[0].iov_base;
	uint64_t init = atomic_load(&u->init_unique);

	(void)userdata;
	if (e && !serving.answered && out->unique == serving.unique) {
		serving.answered = true;
		return answer(e, iov, count);
	}
	if (e && !out->unique && !serving.cannot_block)
		return notify(u, iov, count);
	if (init && out->unique == init)
		return init_reply(u, fd, iov, count);
	return writev(fd, iov, count);
}

static ssize_t io_read(int fd, void *buf, size_t len, void *userdata)
{
	struct uring *u = the_uring;
	ssize_t n = read(fd, buf, len);
	const struct fuse_in_header *in = buf;

	(void)userdata;
	if (n >= (ssize_t)sizeof(*in) && in->opcode == FUSE_INIT) {
		const struct fuse_init_in *arg = (const void *)(in + 1);
		if ((size_t)n >= sizeof(*in) + offsetof(struct fuse_init_in, unused))
			u->offered = (arg->flags & FUSE_INIT_EXT) && (arg->flags2 & (uint32_t)(FUSE_OVER_IO_URING >> 32));
		atomic_store(&u->init_unique, in->unique);
	}
	return n;
}

/* The kernel's possible CPUs (num_possible_cpus(): one queue each, every one must register): one more
 * than the highest in /sys/devices/system/cpu/possible ("0-1", "0,2-3"). */
static unsigned possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	char line[256], *p, *end;
	unsigned long n = 0, v;

	if (f && fgets(line, sizeof(line), f)) {
		for (p = line; *p >= '0' && *p <= '9'; p = end + (*end == ',' || *end == '-')) {
			v = strtoul(p, &end, 10);
			n = v + 1 > n ? v + 1 : n;
		}
	}
	if (f)
		fclose(f);
	return n && n <= 4096 ? (unsigned)n : (unsigned)get_nprocs_conf();
}

int uring_new(struct fuse_session *se, int sig, struct uring **out)
{
	static const struct fuse_custom_io io = { .writev = io_writev, .read = io_read };
	struct uring *u;
	int rc = -ENOMEM;

	if (!(u = calloc(1, sizeof(*u))))
		return -ENOMEM;
	u->se = se;
	u->fd = fuse_session_fd(se);
	u->sig = sig;
	u->nq = possible_cpus();
	if (sched_getaffinity(0, sizeof(u->cpus), &u->cpus))
		CPU_ZERO(&u->cpus);
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->done, NULL);
	pthread_mutex_init(&u->nlock, NULL);
	pthread_cond_init(&u->ncond, NULL);
	if (!(u->q = calloc(u->nq, sizeof(*u->q))))
		goto fail;
	for (unsigned i = 0; i < u->nq; i++) {
		struct uring_queue *q = &u->q[i];
		q->u = u;
		q->qid = i;
		pthread_mutex_init(&q->sq_lock, NULL);
		pthread_cond_init(&q->park, NULL);
		/* No SQPOLL, COOP_TASKRUN or DEFER_TASKRUN: a request for an entry reaches the thread that
		 * committed it as task work, which must run even while that thread waits for a lock. */
		if ((rc = io_uring_queue_init(DEPTH, &q->ring, IORING_SETUP_SQE128)) < 0)
			goto fail;
		q->ring_ok = true;
	}
	the_uring = u;
	if ((rc = fuse_session_custom_io(se, &io, u->fd)) < 0) {
		the_uring = NULL;
		goto fail;
	}
	*out = u;
	return 0;
fail:
	uring_free(u);
	return rc;
}

bool uring_tick(struct uring *u)
{
	bool began = false;

	if (!u)
		return false;
	pthread_mutex_lock(&u->lock);
	for (unsigned i = 0; u->serving && !u->exit && i < u->nq; i++) {
		struct uring_queue *q = &u->q[i];
		if (q->seq != q->seen) {
			q->seen = q->seq;
			began = true;
			continue;
		}
		/* the same request in progress since the last look, and nobody waiting for the ring */
		if (q->busy && !q->reaping && !q->stuck) {
			q->stuck = true;
			if (q->parked)
				pthread_cond_signal(&q->park);
			else if (spawn(u, q, u->sig))
				q->stuck = false; /* (at the limit: the slow request still ends) */
		}
	}
	pthread_mutex_unlock(&u->lock);
	return began;
}

void uring_stop(struct uring *u)
{
	if (!u)
		return;
	pthread_mutex_lock(&u->lock);
	u->exit = true;
	for (unsigned i = 0; i < u->nq; i++)
		pthread_cond_broadcast(&u->q[i].park);
	while (u->threads) {
		struct timespec ts;
		for (unsigned i = 0; i < u->nq; i++)
			if (u->q[i].reaping)
				pthread_kill(u->q[i].reaper, u->sig);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 10000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&u->done, &u->lock, &ts);
	}
	pthread_mutex_unlock(&u->lock);
	for (unsigned i = 0; i < u->spawned; i++)
		pthread_join(u->tid[i], NULL);
	u->spawned = 0;
	if (u->notifier_started) {
		pthread_mutex_lock(&u->nlock);
		pthread_cond_broadcast(&u->ncond);
		pthread_mutex_unlock(&u->nlock);
		pthread_join(u->notifier, NULL);
		u->notifier_started = false;
	}
}

void uring_free(struct uring *u)
{
	if (!u)
		return;
	for (unsigned i = 0; u->q && i < u->nq; i++) {
		struct uring_queue *q = &u->q[i];
		if (q->ring_ok)
			io_uring_queue_exit(&q->ring);
		for (unsigned j = 0; j < DEPTH; j++)
			if (q->ent[j].hdr)
				munmap(q->ent[j].hdr, u->map_len);
		pthread_mutex_destroy(&q->sq_lock);
		pthread_cond_destroy(&q->park);
	}
	free(u->q);
	free(u->tid);
	pthread_mutex_destroy(&u->lock);
	pthread_cond_destroy(&u->done);
	pthread_mutex_destroy(&u->nlock);
	pthread_cond_destroy(&u->ncond);
	free(u);
}

#else /* built without liburing: /dev/fuse only */

int uring_inval_dir(struct fuse_session *se, fuse_ino_t ino)
{
	return fuse_lowlevel_notify_inval_inode(se, ino, 0, 0);
}

bool uring_built(void)
{
	return false;
}

int uring_new(struct fuse_session *se, int sig, struct uring **out)
{
	(void)se;
	(void)sig;
	*out = NULL;
	return -EOPNOTSUPP;
}

bool uring_tick(struct uring *u)
{
	(void)u;
	return false;
}

void uring_stop(struct uring *u)
{
	(void)u;
}

void uring_free(struct uring *u)
{
	(void)u;
}

#endif
