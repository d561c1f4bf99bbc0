/* loop.c — the request loop: one thread reads /dev/fuse and answers what it read, and more threads join
 * only when a request is slow.
 *
 * libfuse's multi-threaded loop keeps several workers blocked in read(); the kernel wakes them in turn,
 * so consecutive requests of one shell loop land on different threads, and each switch costs time
 * (tests/bench measures it). One thread alone, though, can deadlock: a request
 * that waits for something that waits for the daemon (the store's writer lock held by a cellctl reading
 * its input from this mount, a cache invalidation waiting on a page a reader holds locked) would wait
 * forever. So here exactly one thread reads at a time, and it answers each request itself; a supervisor
 * (the caller's thread) looks every TICK_MS, and when one request has been in progress for a whole tick
 * with nobody reading, it lets another thread read: a parked one, or a new one up to MAX_THREADS. A
 * thread that finishes while another reads parks; all end when the session does. Signals (SIGINT,
 * SIGTERM: libfuse's handlers end the session) reach only the supervisor, which then interrupts the
 * reader. With the io_uring transport (uring.c) the rings' threads work the same way, queue by queue,
 * and the supervisor's look covers them too; /dev/fuse then carries little more than FORGETs. */
#include "loop.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TICK_MS 10     /* a request this old with nobody reading lets another thread read */
#define IDLE_MS 200    /* the supervisor's look when nothing happened for a while */
#define IDLE_TICKS 100 /* ticks without a request before it looks only every IDLE_MS */
#define MAX_THREADS 16
#define WAKE_SIG LOOP_WAKE_SIG

struct loop {
	struct fuse_session *se;
	pthread_mutex_t lock;
	pthread_cond_t park;     /* parked threads wait here */
	pthread_cond_t done;     /* the supervisor waits here for the threads to end */
	pthread_t tid[MAX_THREADS];
	unsigned spawned;        /* threads started (not counting the supervisor), all joined at the end */
	unsigned threads;        /* of those, alive */
	unsigned reading;        /* in read(), or about to be: 0 or 1 but for a moment */
	unsigned busy;           /* answering a request */
	unsigned parked;
	unsigned long seq;       /* requests begun so far */
	pthread_t reader;        /* the thread reading, when reading */
	bool exit;
	int error;               /* the read error that ended the loop (negative errno), 0 at unmount */
};

static void *worker(void *arg)
{
	struct loop *l = arg;
	struct fuse_buf buf = { .mem = NULL };

	pthread_mutex_lock(&l->lock);
	for (;;) {
		while (!l->exit && l->reading) {
			l->parked++;
			pthread_cond_wait(&l->park, &l->lock);
			l->parked--;
		}
		if (l->exit)
			break;
		l->reading++;
		l->reader = pthread_self();
		pthread_mutex_unlock(&l->lock);
		int res = fuse_session_exited(l->se) ? 0 : fuse_session_receive_buf(l->se, &buf);
		pthread_mutex_lock(&l->lock);
		l->reading--;
		if (res == -EINTR && !fuse_session_exited(l->se))
			continue;
		if (res <= 0) { /* unmounted (0), ended by a signal, or a read error */
			if (!l->exit) {
				l->exit = true;
				l->error = res == -EINTR ? 0 : res;
				fuse_session_exit(l->se);
			}
			pthread_cond_broadcast(&l->park);
			break;
		}
		l->busy++;
		l->seq++;
		pthread_mutex_unlock(&l->lock);
		fuse_session_process_buf(l->se, &buf);
		pthread_mutex_lock(&l->lock);
		l->busy--;
	}
	l->threads--;
	pthread_cond_signal(&l->done);
	pthread_mutex_unlock(&l->lock);
	free(buf.mem);
	return NULL;
}

/* A new thread, with every signal blocked but WAKE_SIG (the others are the supervisor's). Called with
 * the lock held. */
static int spawn(struct loop *l)
{
	sigset_t mask, old;
	int rc;

	if (l->spawned == MAX_THREADS)
		return -EAGAIN;
	sigfillset(&mask);
	sigdelset(&mask, WAKE_SIG);
	sigdelset(&mask, SIGSEGV); /* a blocked fault kills the process: cs_store_catch_faults() must see it */
	sigdelset(&mask, SIGBUS);
	pthread_sigmask(SIG_SETMASK, &mask, &old);
	rc = pthread_create(&l->tid[l->spawned], NULL, worker, l);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return -rc;
	l->spawned++;
	l->threads++;
	return 0;
}

static void on_wake(int sig)
{
	(void)sig; /* only there so that the reader's read() returns EINTR */
}

static void deadline(struct timespec *ts, long ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_nsec += ms * 1000000L;
	ts->tv_sec += ts->tv_nsec / 1000000000L;
	ts->tv_nsec %= 1000000000L;
}

int loop_run(struct fuse_session *se, struct uring *u)
{
	struct loop l = { .se = se };
	struct sigaction sa = { .sa_handler = on_wake }, old_sa;
	pthread_condattr_t ca;
	unsigned long seen = 0;
	unsigned quiet = 0, rquiet = 0; /* ticks without a request on /dev/fuse, on the rings */
	int rc;

	pthread_mutex_init(&l.lock, NULL);
	pthread_cond_init(&l.park, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l.done, &ca);
	pthread_condattr_destroy(&ca);
	sigemptyset(&sa.sa_mask); /* no SA_RESTART: read() must return */
	sigaction(WAKE_SIG, &sa, &old_sa);

	pthread_mutex_lock(&l.lock);
	if ((rc = spawn(&l))) {
		pthread_mutex_unlock(&l.lock);
		goto out;
	}
	while (l.threads) {
		struct timespec ts;
		deadline(&ts, quiet >= IDLE_TICKS && rquiet >= IDLE_TICKS ? IDLE_MS : TICK_MS);
		pthread_cond_timedwait(&l.done, &l.lock, &ts);
		if (fuse_session_exited(se) && !l.exit) { /* a signal: end, and interrupt the reader */
			l.exit = true;
			pthread_cond_broadcast(&l.park);
		}
		if (l.exit) {
			if (l.reading)
				pthread_kill(l.reader, WAKE_SIG);
			continue;
		}
		if (u) { /* (the rings' threads take no lock of ours: uring_tick takes theirs) */
			pthread_mutex_unlock(&l.lock);
			bool began = uring_tick(u);
			pthread_mutex_lock(&l.lock);
			rquiet = began ? 0 : rquiet < IDLE_TICKS ? rquiet + 1 : rquiet;
		} else {
			rquiet = IDLE_TICKS;
		}
		if (l.seq != seen) {
			seen = l.seq;
			quiet = 0;
		} else if (quiet < IDLE_TICKS) {
			quiet++;
		}
		/* the same request in progress since the last look, and nobody reading: someone must */
		if (l.busy && !l.reading && l.seq == seen && quiet) {
			if (l.parked)
				pthread_cond_signal(&l.park);
			else
				spawn(&l); /* (if it cannot, the slow request still ends, and with it the wait) */
		}
	}
	rc = l.error;
	pthread_mutex_unlock(&l.lock);
	uring_stop(u);
	for (unsigned i = 0; i < l.spawned; i++) /* (their thread-local read transactions end here) */
		pthread_join(l.tid[i], NULL);
out:
	sigaction(WAKE_SIG, &old_sa, NULL);
	pthread_cond_destroy(&l.done);
	pthread_cond_destroy(&l.park);
	pthread_mutex_destroy(&l.lock);
	return rc;
}
