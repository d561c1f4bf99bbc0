/* jsonout.c — JSON string literals, the UTF-8 check that decides between "X" and "X_b64", base64. */
#include "jsonout.h"

#include <stdint.h>

bool jo_utf8(const void *p, size_t n)
{
	const uint8_t *s = p;
	size_t i = 0;

	while (i < n) {
		uint8_t c = s[i];
		size_t len;
		uint32_t cp;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xC2 && c <= 0xDF) {
			len = 2;
			cp = c & 0x1F;
		} else if (c >= 0xE0 && c <= 0xEF) {
			len = 3;
			cp = c & 0x0F;
		} else if (c >= 0xF0 && c <= 0xF4) {
			len = 4;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (n - i < len)
			return false;
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xC0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3F);
		}
		if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
		    (cp >= 0xD800 && cp <= 0xDFFF))
			return false;
		i += len;
	}
	return true;
}

void jo_str(FILE *f, const void *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *s = p;

	putc('"', f);
	for (size_t i = 0; i < n; i++) {
		uint8_t c = s[i];

		switch (c) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		case '\b': fputs("\\b", f); break;
		case '\f': fputs("\\f", f); break;
		default:
			if (c < 0x20 || c == 0x7F) {
				fputs("\\u00", f);
				putc(hex[c >> 4], f);
				putc(hex[c & 15], f);
			} else {
				putc(c, f);
			}
		}
	}
	putc('"', f);
}

void jo_b64(FILE *f, const void *p, size_t n)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const uint8_t *s = p;
	size_t i = 0;

	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
		putc(tab[v >> 18], f);
		putc(tab[(v >> 12) & 63], f);
		putc(tab[(v >> 6) & 63], f);
		putc(tab[v & 63], f);
	}
	if (n - i == 1) {
		uint32_t v = (uint32_t)s[i] << 16;
		putc(tab[v >> 18], f);
		putc(tab[(v >> 12) & 63], f);
		fputs("==", f);
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;
		putc(tab[v >> 18], f);
		putc(tab[(v >> 12) & 63], f);
		putc(tab[(v >> 6) & 63], f);
		putc('=', f);
	}
}

void jo_bytes_field(FILE *f, const char *key, const void *p, size_t n)
{
	if (jo_utf8(p, n)) {
		putc('"', f);
		fputs(key, f);
		putc('"', f);
		putc(':', f);
		jo_str(f, p, n);
		return;
	}
	putc('"', f);
	fputs(key, f);
	fputs("_b64\":\"", f);
	jo_b64(f, p, n);
	putc('"', f);
}
