/* kzclass.c — the row-key segment classifiers of cellctl keyviz (kzclass.h). */
#include "kzclass.h"

#include <string.h>

#include "jsonout.h"

#define EPOCH_2000 946684800LL  /* 2000-01-01T00:00:00Z, s */
#define EPOCH_2100 4102444800LL /* 2100-01-01T00:00:00Z, s */
#define LONG_MAX_JAVA 9223372036854775807ULL

const char *kzc_kind_name(enum kzc_kind k)
{
	static const char *const names[KZC_NKINDS] = {
		[KZC_EMPTY] = "empty",     [KZC_TIMESTAMP] = "timestamp", [KZC_REVTS] = "reversed-timestamp",
		[KZC_NUMBER] = "number",   [KZC_PADDED] = "padded-number", [KZC_HEX] = "hex",
		[KZC_BASE64] = "base64",   [KZC_DOMAIN] = "domain",        [KZC_RDOMAIN] = "reversed-domain",
		[KZC_TEXT] = "text",       [KZC_BINARY] = "binary",
	};
	return (unsigned)k < KZC_NKINDS ? names[k] : "?";
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static bool all_digits(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_digit(s[i]))
			return false;
	return n > 0;
}

bool kzc_digits(const void *p, size_t n, uint64_t *v)
{
	const unsigned char *s = p;
	uint64_t x = 0;

	if (n < 1 || n > 19)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!is_digit(s[i]))
			return false;
		x = x * 10 + (uint64_t)(s[i] - '0');
	}
	*v = x;
	return true;
}

/* Days since 1970-01-01 of the proleptic Gregorian date Y-M-D (Howard Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static unsigned num(const unsigned char *s, size_t n)
{
	unsigned x = 0;
	for (size_t i = 0; i < n; i++)
		x = x * 10 + (unsigned)(s[i] - '0');
	return x;
}

/* Y-M-D h:m:s.ms as µs since the epoch, or -1 if a field is out of range (years 1970..2099). */
static int64_t civil_us(unsigned y, unsigned mo, unsigned d, unsigned h, unsigned mi, unsigned s, unsigned ms)
{
	static const unsigned mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	if (y < 1970 || y > 2099 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap))
		return -1;
	if (h > 23 || mi > 59 || s > 60 || ms > 999)
		return -1;
	return ((days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s) * 1000 + ms) * 1000;
}

/* yyyymmdd[hh[mm[ss[SSS]]]]: 8, 10, 12, 14 or 17 digits. */
static int64_t compact_date(const unsigned char *s, size_t n)
{
	unsigned f[4] = { 0, 0, 0, 0 };

	if (n != 8 && n != 10 && n != 12 && n != 14 && n != 17)
		return -1;
	for (size_t i = 8, k = 0; i < n && k < 3; i += 2, k++)
		f[k] = num(s + i, 2);
	if (n == 17)
		f[3] = num(s + 14, 3);
	return civil_us(num(s, 4), num(s + 4, 2), num(s + 6, 2), f[0], f[1], f[2], f[3]);
}

/* 2015-03-01, then nothing or 'T'/' ' and a time of digits, ':', '.', 'Z', '+', '-'. */
static int64_t iso_date(const unsigned char *s, size_t n)
{
	unsigned h = 0, mi = 0, sec = 0;

	if (n < 10 || s[4] != '-' || s[7] != '-')
		return -1;
	for (size_t i = 0; i < 10; i++)
		if (i != 4 && i != 7 && !is_digit(s[i]))
			return -1;
	if (n > 10) {
		if ((s[10] != 'T' && s[10] != ' ') || n < 13 || !is_digit(s[11]) || !is_digit(s[12]))
			return -1;
		for (size_t i = 13; i < n; i++)
			if (!is_digit(s[i]) && (!s[i] || !strchr(":.Z+-", s[i])))
				return -1;
		h = num(s + 11, 2);
		if (n >= 16 && s[13] == ':' && is_digit(s[14]) && is_digit(s[15]))
			mi = num(s + 14, 2);
		if (n >= 19 && s[16] == ':' && is_digit(s[17]) && is_digit(s[18]))
			sec = num(s + 17, 2);
	}
	return civil_us(num(s, 4), num(s + 5, 2), num(s + 8, 2), h, mi, sec, 0);
}

/* V as a time since the epoch from 2000 to 2100 in s, ms, µs (or ns when NS): its µs and unit. */
static bool epoch(uint64_t v, bool ns, int64_t *us, const char **unit)
{
	static const struct {
		uint64_t mul;
		const char *name;
	} units[] = { { 1, "epoch s" }, { 1000, "epoch ms" }, { 1000000, "epoch us" }, { 1000000000, "epoch ns" } };

	for (size_t i = 0; i < (ns ? 4 : 3); i++) {
		uint64_t lo = (uint64_t)EPOCH_2000 * units[i].mul, hi = (uint64_t)EPOCH_2100 * units[i].mul;
		if (v >= lo && v <= hi) {
			if (us)
				*us = i < 2 ? (int64_t)(v * (1000000 / units[i].mul)) : (int64_t)(v / (units[i].mul / 1000000));
			if (unit)
				*unit = units[i].name;
			return true;
		}
	}
	return false;
}

bool kzc_timestamp(const void *p, size_t n, int64_t *us, const char **unit)
{
	const unsigned char *s = p;
	uint64_t v;
	int64_t t;

	if (kzc_digits(p, n, &v)) {
		/* 10 digits: seconds first (2001..2100), then yyyymmddhh */
		if (s[0] != '0' && epoch(v, true, us, unit))
			return true;
		if ((t = compact_date(s, n)) < 0)
			return false;
		if (us)
			*us = t;
		if (unit)
			*unit = n == 8 ? "yyyymmdd" : "yyyymmddhh...";
		return true;
	}
	if ((t = iso_date(s, n)) < 0)
		return false;
	if (us)
		*us = t;
	if (unit)
		*unit = "iso-8601";
	return true;
}

bool kzc_reversed_ts(const void *p, size_t n, int64_t *us, const char **unit)
{
	uint64_t v;

	if (n != 19 || !kzc_digits(p, n, &v) || v > LONG_MAX_JAVA)
		return false;
	return epoch(LONG_MAX_JAVA - v, false, us, unit);
}

bool kzc_hex(const void *p, size_t n)
{
	const unsigned char *s = p;
	bool lower = false, upper = false, digit = false;

	if (n < 6)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (is_digit(s[i]))
			digit = true;
		else if (s[i] >= 'a' && s[i] <= 'f')
			lower = true;
		else if (s[i] >= 'A' && s[i] <= 'F')
			upper = true;
		else
			return false;
	}
	return digit && lower != upper;
}

bool kzc_base64(const void *p, size_t n)
{
	const unsigned char *s = p;
	unsigned lower = 0, upper = 0, digit = 0;
	size_t end = n;

	while (end > 0 && n - end < 2 && s[end - 1] == '=')
		end--;
	if (end < 12)
		return false;
	for (size_t i = 0; i < end; i++) {
		unsigned char c = s[i];
		if (is_digit(c))
			digit++;
		else if (c >= 'a' && c <= 'z')
			lower++;
		else if (c >= 'A' && c <= 'Z')
			upper++;
		else if (!strchr("+/-_", c) || !c)
			return false;
	}
	return lower >= 2 && upper >= 2 && digit >= 2;
}

/* Whether the label L (N bytes) is a top-level domain: a generic one or two letters. */
static bool tld(const unsigned char *l, size_t n)
{
	static const char *const generic[] = { "com", "org", "net", "edu", "gov", "mil", "int", "io", "info",
					       "biz", "app", "dev", "cloud", NULL };
	char low[8];

	if (n < 2 || n > 5)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = l[i] | 0x20;
		if (c < 'a' || c > 'z')
			return false;
		low[i] = (char)c;
	}
	low[n] = 0;
	if (n == 2)
		return true;
	for (size_t i = 0; generic[i]; i++)
		if (!strcmp(low, generic[i]))
			return true;
	return false;
}

bool kzc_domain(const void *p, size_t n, bool *reversed)
{
	const unsigned char *s = p;
	size_t labels = 0, start = 0, first_end = 0;

	if (n < 5 || n > 253)
		return false;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '.') {
			unsigned char c = s[i] | 0x20;
			if (!((c >= 'a' && c <= 'z') || is_digit(s[i]) || s[i] == '-'))
				return false;
			continue;
		}
		if (i == start || s[start] == '-' || s[i - 1] == '-')
			return false; /* an empty label, or one beginning or ending with '-' */
		if (!labels)
			first_end = i;
		labels++;
		start = i + 1;
	}
	if (labels < 3)
		return false;
	/* the first label a generic TLD (com.google.maps) reads as reversed; else the last must be one */
	size_t last = n;
	while (last > 0 && s[last - 1] != '.')
		last--;
	if (tld(s, first_end) && first_end != 2) {
		*reversed = true;
		return true;
	}
	if (tld(s + last, n - last)) {
		*reversed = false;
		return true;
	}
	if (tld(s, first_end)) {
		*reversed = true;
		return true;
	}
	return false;
}

enum kzc_kind kzc_classify(const void *p, size_t n, const char **unit)
{
	const unsigned char *s = p;
	uint64_t v;
	bool rev;

	if (unit)
		*unit = "";
	if (n == 0)
		return KZC_EMPTY;
	if (kzc_reversed_ts(p, n, NULL, unit))
		return KZC_REVTS;
	if (kzc_timestamp(p, n, NULL, unit))
		return KZC_TIMESTAMP;
	if (kzc_digits(p, n, &v) || all_digits(s, n))
		return n > 1 && s[0] == '0' ? KZC_PADDED : KZC_NUMBER;
	if (kzc_hex(p, n))
		return KZC_HEX;
	if (kzc_domain(p, n, &rev))
		return rev ? KZC_RDOMAIN : KZC_DOMAIN;
	if (kzc_base64(p, n))
		return KZC_BASE64;
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] == 0x7f)
			return KZC_BINARY;
	return jo_utf8(p, n) ? KZC_TEXT : KZC_BINARY;
}
