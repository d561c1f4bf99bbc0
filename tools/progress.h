/* progress.h — a one-line progress display on stderr for long cellctl commands (cells, rate, percent,
 * ETA), redrawn a few times a second. Silent when stderr is not a terminal or when asked to be quiet, so
 * scripts and tests never see it. */
#ifndef CELLFS_PROGRESS_H
#define CELLFS_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct progress {
	const char *what;
	bool on, drawn;
	uint64_t total_bytes, total_cells; /* 0: unknown */
	uint64_t calls;
	double t0, last;
};

/* Start showing WHAT; TOTAL_CELLS (if known) gives the percentage and ETA, else TOTAL_BYTES does. */
void progress_init(struct progress *p, const char *what, bool quiet, uint64_t total_bytes, uint64_t total_cells);
/* CELLS done, BYTES of the input read. Cheap: looks at the clock only now and then. */
void progress_update(struct progress *p, uint64_t cells, uint64_t bytes);
/* Finish: with SUMMARY, a last line "WHAT: CELLS cells in S s (R cells/s)"; else erase the line (an
 * error message or the next phase follows). */
void progress_done(struct progress *p, uint64_t cells, bool summary);

#endif
