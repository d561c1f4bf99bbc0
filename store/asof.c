/* asof.c — the store's clock (cs_now_us()) and as-of views (CS_OPEN_ASOF): the time they are of, parsed
 * from what users type (RFC 3339 or µs since the epoch), and the one place a read's timestamp range is
 * narrowed to it. Every scan of an as-of store goes through asof_read_opts() (called by the seam,
 * store.c, for every backend), so no reader of the store (the mount's many paths, cellctl's commands,
 * dumps) can see past the time. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "asof.h"

/* N decimal digits at *P into *V (advancing *P); false if they are not all digits. */
static bool digits(const char **p, int n, int *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		char c = (*p)[i];
		if (c < '0' || c > '9')
			return false;
		*v = *v * 10 + (c - '0');
	}
	*p += n;
	return true;
}

static bool is_leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Days from 1970-01-01 to Y-M-D (proleptic Gregorian; negative before), Howard Hinnant's days_from_civil. */
static int64_t days_from_civil(int y, int m, int d)
{
	int64_t era, yoe, doy, doe;
	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* A decimal integer of µs: only digits, at most INT64_MAX. */
static int parse_micros(const char *s, int64_t *us, const char **why)
{
	int64_t v = 0;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9') {
			*why = "not RFC 3339 (YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM)) nor microseconds since the epoch";
			return -EINVAL;
		}
		if (v > (INT64_MAX - (*p - '0')) / 10) {
			*why = "microseconds out of range (at most 9223372036854775807)";
			return -EINVAL;
		}
		v = v * 10 + (*p - '0');
	}
	*us = v;
	return 0;
}

static int parse_rfc3339(const char *s, int64_t *us, const char **why)
{
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	const char *p = s;
	int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;
	int64_t frac = 0, t;
	int nfrac = 0;

	*why = "not RFC 3339 (YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM)) nor microseconds since the epoch";
	if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' || !digits(&p, 2, &d))
		return -EINVAL;
	if (!*p) {
		*why = "a date alone: RFC 3339 needs a time and a zone too (as T00:00:00Z)";
		return -EINVAL;
	}
	if (*p != 'T' && *p != 't' && *p != ' ')
		return -EINVAL;
	p++;
	if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi) || *p++ != ':' || !digits(&p, 2, &sec))
		return -EINVAL;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		for (; *p >= '0' && *p <= '9'; p++, nfrac++)
			if (nfrac < 6) /* finer than a µs: truncated (exact for "at or before") */
				frac = frac * 10 + (*p - '0');
		for (int i = nfrac; i < 6; i++)
			frac *= 10;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p++ == '-' ? -1 : 1;
		if (!digits(&p, 2, &oh) || *p++ != ':' || !digits(&p, 2, &om))
			return -EINVAL;
	} else {
		*why = *p ? "not RFC 3339 (YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM)) nor microseconds since the epoch"
			  : "no time zone: end it in Z or a numeric offset as +01:00";
		return -EINVAL;
	}
	if (*p)
		return -EINVAL; /* something after the zone */
	if (mo < 1 || mo > 12) {
		*why = "month out of range";
		return -EINVAL;
	}
	if (d < 1 || d > mdays[mo - 1] + (mo == 2 && is_leap(y))) {
		*why = "day out of range";
		return -EINVAL;
	}
	if (h > 23) {
		*why = "hour out of range";
		return -EINVAL;
	}
	if (mi > 59) {
		*why = "minute out of range";
		return -EINVAL;
	}
	if (sec > 59) {
		*why = sec == 60 ? "second 60 (a leap second) has no microsecond since the epoch" : "second out of range";
		return -EINVAL;
	}
	if (oh > 23 || om > 59) {
		*why = "time zone offset out of range";
		return -EINVAL;
	}
	t = ((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60 + sec; /* (years 0-9999: no overflow) */
	t -= sign * (oh * 3600 + om * 60);
	if (t < 0) {
		*why = "before the epoch (1970-01-01T00:00:00Z): no cell is older";
		return -EINVAL;
	}
	*us = t * 1000000 + frac;
	return 0;
}

int cs_time_parse(const char *text, int64_t *us, const char **why)
{
	const char *spare;
	const char *p = text;

	if (!why)
		why = &spare;
	if (!text || !*text) {
		*why = "empty";
		return -EINVAL;
	}
	if (*p == '-' && p[1] >= '0' && p[1] <= '9' && !p[strspn(p + 1, "0123456789") + 1]) {
		*why = "before the epoch (1970-01-01T00:00:00Z): no cell is older";
		return -EINVAL;
	}
	while (*p >= '0' && *p <= '9')
		p++;
	if (!*p)
		return parse_micros(text, us, why);
	return parse_rfc3339(text, us, why);
}

void asof_read_opts(int64_t asof_us, const cs_read_opts *o, cs_read_opts *out)
{
	static const cs_read_opts none;
	int64_t end;

	*out = o ? *o : none;
	if (out->ts_start == 0 && out->ts_end == 0)
		out->ts_end = CS_TS_MAX;
	end = asof_us == INT64_MAX ? CS_TS_MAX : asof_us + 1;
	if (out->ts_end > end)
		out->ts_end = end;
	/* ts_end >= 1 unless the caller's range was already empty ([S, 0) with S > 0): (0, 0) never results */
}

int cs_duration_parse(const char *text, unsigned *ms, const char **why)
{
	static const struct {
		const char *name;
		uint64_t ns;
	} units[] = { { "ns", 1 }, { "us", 1000 }, { "\xc2\xb5s", 1000 }, { "\xce\xbcs", 1000 }, { "ms", 1000000 },
		      { "s", 1000000000ull }, { "m", 60000000000ull }, { "h", 3600000000000ull } };
	const uint64_t max_ns = 86400000000000ull; /* 24 h */
	const char *spare, *p = text;
	uint64_t total = 0;

	if (!why)
		why = &spare;
	if (!p || !*p) {
		*why = "empty";
		return -EINVAL;
	}
	if (*p == '+')
		p++;
	else if (*p == '-') {
		*why = "negative: a deadline must be positive";
		return -EINVAL;
	}
	if (!strcmp(p, "0")) {
		*why = "zero: a deadline must be positive";
		return -EINVAL;
	}
	while (*p) {
		uint64_t whole = 0, frac = 0, scale = 1;
		bool digits = false;
		size_t best = 0, u = 0;

		for (; *p >= '0' && *p <= '9'; p++, digits = true) {
			if (whole > max_ns / 10) {
				*why = "over 24h";
				return -EINVAL;
			}
			whole = whole * 10 + (uint64_t)(*p - '0');
		}
		if (*p == '.') {
			for (p++; *p >= '0' && *p <= '9'; p++, digits = true)
				if (scale < 1000000000000000000ull / 10) { /* (finer digits cannot matter) */
					frac = frac * 10 + (uint64_t)(*p - '0');
					scale *= 10;
				}
		}
		if (!digits) {
			*why = "not a duration";
			return -EINVAL;
		}
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			size_t n = strlen(units[i].name);
			if (!strncmp(p, units[i].name, n) && n > best)
				best = n, u = i;
		}
		if (!best) {
			*why = *p ? "unknown unit (ns, us, ms, s, m or h)" : "a number needs a unit";
			return -EINVAL;
		}
		p += best;
		if (whole > max_ns / units[u].ns) {
			*why = "over 24h";
			return -EINVAL;
		}
		/* the fraction's nanoseconds, rounded up: frac / scale of a unit */
		uint64_t fns = (uint64_t)((frac * (long double)units[u].ns + (long double)scale - 1) / scale);
		total += whole * units[u].ns + fns;
		if (total > max_ns) {
			*why = "over 24h";
			return -EINVAL;
		}
	}
	if (!total) {
		*why = "zero: a deadline must be positive";
		return -EINVAL;
	}
	*ms = (unsigned)((total + 999999) / 1000000);
	return 0;
}

int64_t cs_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
