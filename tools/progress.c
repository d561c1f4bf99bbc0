/* progress.c — the progress line (see progress.h). */
#include "progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void progress_init(struct progress *p, const char *what, bool quiet, uint64_t total_bytes, uint64_t total_cells)
{
	*p = (struct progress){ .what = what, .on = !quiet && isatty(2), .total_bytes = total_bytes,
				.total_cells = total_cells };
	p->t0 = p->last = now_s();
}

static void draw(struct progress *p, uint64_t cells, uint64_t bytes, double t)
{
	double el = t - p->t0, frac = -1;
	double rate = el > 0 ? (double)cells / el : 0;

	if (p->total_cells)
		frac = (double)cells / (double)p->total_cells;
	else if (p->total_bytes)
		frac = (double)bytes / (double)p->total_bytes;
	fprintf(stderr, "\r%s: %llu cells, %.0f cells/s", p->what, (unsigned long long)cells, rate);
	if (frac >= 0 && frac <= 1) {
		fprintf(stderr, ", %.0f%%", frac * 100);
		if (frac > 0.001) {
			unsigned eta = (unsigned)(el / frac - el + 0.5);
			fprintf(stderr, ", ETA %u:%02u", eta / 60, eta % 60);
		}
	}
	fputs("\033[K", stderr);
	p->drawn = true;
}

void progress_update(struct progress *p, uint64_t cells, uint64_t bytes)
{
	double t;

	if (!p->on || (++p->calls & 255))
		return;
	t = now_s();
	if (t - p->last < 0.25)
		return;
	p->last = t;
	draw(p, cells, bytes, t);
}

void progress_done(struct progress *p, uint64_t cells, bool summary)
{
	double el;

	if (!p->on)
		return;
	if (p->drawn)
		fputs("\r\033[K", stderr);
	p->drawn = false;
	if (!summary)
		return;
	el = now_s() - p->t0;
	fprintf(stderr, "%s: %llu cells in %.1f s (%.0f cells/s)\n", p->what, (unsigned long long)cells, el,
		el > 0 ? (double)cells / el : 0.0);
}
