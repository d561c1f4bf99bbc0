/* rx_parse.h — a regular expression in cbt's dialect (cellstore.h, "Regular expressions") parsed as Go's
 * regexp/syntax parses it, into a tree whose leaves are sets of bytes (rx_parse.c). rx.c writes the tree
 * out as a PCRE2 pattern. Internal to rx*.c. */
#ifndef CELLFS_RX_PARSE_H
#define CELLFS_RX_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cellstore.h"

#define RX_MAX_NEST 1000                  /* parentheses nested deeper are refused */
#define RX_E_LARGE "expression too large" /* Go's words for a pattern too large to compile */

enum rx_op {
	RX_OP_SET,      /* one byte of a set */
	RX_OP_EMPTY,    /* the empty string */
	RX_OP_BOT,      /* \A, ^ */
	RX_OP_EOT,      /* \z, $ */
	RX_OP_BOL,      /* (?m)^ */
	RX_OP_EOL,      /* (?m)$ */
	RX_OP_WB,       /* \b */
	RX_OP_NWB,      /* \B */
	RX_OP_CAT,
	RX_OP_ALT,
	RX_OP_REP,      /* sub{min,max}, max < 0: unbounded */
	RX_OP_PSEUDO,   /* parse stack markers from here on: never in a finished tree */
	RX_OP_LPAREN = RX_OP_PSEUDO,
	RX_OP_VBAR,
};

typedef struct rx_node {
	enum rx_op op;
	bool counted;      /* RX_OP_REP written {n,m} (Go's OpRepeat), not * + ? */
	int min, max;
	unsigned flags;    /* RX_OP_LPAREN: the flags to restore at its ')' */
	uint8_t set[32];   /* RX_OP_SET: bit b = byte b (rx_set.h) */
	struct rx_node **sub;
	size_t nsub;
} rx_node;

/* A parsed pattern: the tree at ROOT, and every node of it (ALL, N of them). */
typedef struct rx_parsed {
	rx_node *root;
	rx_node **all;
	size_t n;
} rx_parsed;

/* Parse PATTERN (NUL-terminated) into *OUT; free it with rx_parse_free(). Errors: -EINVAL (refused as Go
 * refuses it: *ERR says why), -ENOMEM. On error *OUT holds nothing. */
int rx_parse(const char *pattern, rx_parsed *out, cs_regex_error *err);

/* Free what T holds (not T). */
void rx_parse_free(rx_parsed *t);

#endif
