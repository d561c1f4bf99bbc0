/* jsonout.c — JSON string literals, base64, and the "X" / "X_b64" convention for byte fields. */
#include "jsonout.h"

#include <stdint.h>

/* The length of the valid UTF-8 sequence at P (N > 0 bytes left), or 0 if there is none. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	unsigned char c = p[0];
	size_t len;
	uint32_t r;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		len = 2, r = c & 0x1F;
	else if (c >= 0xE0 && c <= 0xEF)
		len = 3, r = c & 0x0F;
	else if (c >= 0xF0 && c <= 0xF4)
		len = 4, r = c & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		r = r << 6 | (p[i] & 0x3F);
	}
	if ((len == 3 && (r < 0x800 || (r >= 0xD800 && r <= 0xDFFF))) || (len == 4 && (r < 0x10000 || r > 0x10FFFF)))
		return 0;
	return len;
}

bool jo_utf8(const void *p, size_t n)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < n;) {
		size_t k = utf8_len(s + i, n - i);
		if (!k)
			return false;
		i += k;
	}
	return true;
}

void jo_str(FILE *f, const void *p, size_t n)
{
	const unsigned char *s = p;

	putc('"', f);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t k;

		switch (c) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\b': fputs("\\b", f); break;
		case '\f': fputs("\\f", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (c < 0x20 || c == 0x7F) {
				fprintf(f, "\\u%04x", c);
			} else if ((k = utf8_len(s + i, n - i)) != 0) {
				fwrite(s + i, 1, k, f);
				i += k;
				continue;
			} else {
				fputs("\\ufffd", f);
			}
		}
		i++;
	}
	putc('"', f);
}

void jo_b64(FILE *f, const void *p, size_t n)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *s = p;
	size_t i;

	putc('"', f);
	for (i = 0; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
		putc(abc[v >> 18], f);
		putc(abc[(v >> 12) & 63], f);
		putc(abc[(v >> 6) & 63], f);
		putc(abc[v & 63], f);
	}
	if (n - i == 1) {
		uint32_t v = (uint32_t)s[i] << 16;
		putc(abc[v >> 18], f);
		putc(abc[(v >> 12) & 63], f);
		fputs("==", f);
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;
		putc(abc[v >> 18], f);
		putc(abc[(v >> 12) & 63], f);
		putc(abc[(v >> 6) & 63], f);
		putc('=', f);
	}
	putc('"', f);
}

void jo_bytes_field(FILE *f, const char *key, const void *p, size_t n)
{
	if (jo_utf8(p, n)) {
		fprintf(f, "\"%s\":", key);
		jo_str(f, p, n);
	} else {
		fprintf(f, "\"%s_b64\":", key);
		jo_b64(f, p, n);
	}
}
