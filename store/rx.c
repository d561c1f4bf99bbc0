/* rx.c — cbt's regular expressions (cellstore.h, "Regular expressions") on PCRE2.
 *
 * The parser is Go's regexp/syntax parser (the one in the Bigtable emulator, rsc.io/binaryregexp) step
 * by step, so that a pattern is refused where Go refuses it, with Go's words, and first for the same
 * reason. It builds a tree whose leaves are sets of bytes (a character class, a literal, '.', \C, with
 * case folding and Unicode classes already resolved to bytes 0-255), which is written out as a PCRE2
 * pattern using only \xHH, [...] of \xHH, groups, | and quantifiers, so nothing of PCRE2's own syntax,
 * locale tables or flags decides what matches. Groups are "(" with PCRE2_NO_AUTO_CAPTURE (nested
 * "(?:" count against a fixed PCRE2 limit of a few hundred). Matching is PCRE2's DFA matcher, anchored
 * at both ends.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "cellstore.h"
#include "mem.h"

/* Go's error words (regexp/syntax ErrorCode). */
#define E_MISSING_BRACKET "missing closing ]"
#define E_MISSING_PAREN "missing closing )"
#define E_UNEXPECTED_PAREN "unexpected )"
#define E_INVALID_ESCAPE "invalid escape sequence"
#define E_TRAILING_BACKSLASH "trailing backslash at end of expression"
#define E_CHAR_RANGE "invalid character class range"
#define E_NAMED_CAPTURE "invalid named capture"
#define E_PERL_OP "invalid or unsupported Perl syntax"
#define E_REPEAT_OP "invalid nested repetition operator"
#define E_REPEAT_ARG "missing argument to repetition operator"
#define E_REPEAT_SIZE "invalid repeat count"
#define E_NESTING "expression nests too deeply"
#define E_LARGE "expression too large"

enum { MAX_REPEAT = 1000, MAX_NEST = 1000, MAX_RUNE = 0x10FFFF, NONE = -1 };

/* Parse flags (Go's, with OneLine turned round as "multi-line"). */
enum { F_FOLD = 1, F_MULTI = 2, F_DOTNL = 4, F_UNGREEDY = 8 };

enum op {
	OP_SET,      /* one byte of a set */
	OP_EMPTY,    /* the empty string */
	OP_BOT,      /* \A, ^ */
	OP_EOT,      /* \z, $ */
	OP_BOL,      /* (?m)^ */
	OP_EOL,      /* (?m)$ */
	OP_WB,       /* \b */
	OP_NWB,      /* \B */
	OP_CAT,
	OP_ALT,
	OP_REP,      /* sub{min,max}, max < 0: unbounded */
	OP_PSEUDO,   /* parse stack markers from here on */
	OP_LPAREN = OP_PSEUDO,
	OP_VBAR,
};

typedef struct node {
	enum op op;
	bool counted;      /* OP_REP written {n,m} (Go's OpRepeat), not * + ? */
	int min, max;
	unsigned flags;    /* OP_LPAREN: the flags to restore at its ')' */
	uint8_t set[32];   /* OP_SET: bit b = byte b */
	struct node **sub;
	size_t nsub;
} node;

typedef struct parser {
	const char *s;
	size_t n;
	unsigned flags;
	node **stack;
	size_t nstack, capstack;
	node **all; /* every node, freed at the end */
	size_t nall, capall;
	int depth;  /* open parentheses */
	cs_regex_error *err;
} parser;

#define RX_BACKTRACK_STEPS 100000 /* steps of the backtracking matcher before the DFA matcher decides */

struct cs_regex {
	pcre2_general_context *gc;
	pcre2_code *code;
	pcre2_match_data *md;
	pcre2_match_context *mc;  /* the DFA matcher's: no limits */
	pcre2_match_context *bmc; /* the backtracking matcher's: a bounded number of steps */
	int *ws;
	size_t wsn;
};

/* ---- Byte sets -------------------------------------------------------------------------------------- */

static void set_add(uint8_t *set, unsigned b)
{
	set[b >> 3] |= (uint8_t)(1u << (b & 7));
}

static bool set_has(const uint8_t *set, unsigned b)
{
	return set[b >> 3] >> (b & 7) & 1;
}

static void set_not(uint8_t *set)
{
	for (int i = 0; i < 32; i++)
		set[i] = (uint8_t)~set[i];
}

static void set_or(uint8_t *dst, const uint8_t *src)
{
	for (int i = 0; i < 32; i++)
		dst[i] |= src[i];
}

/* The other bytes R is equivalent to under Go's simple case folding (unicode.SimpleFold's orbit),
 * for any rune R: ASCII and Latin-1 letters pair by 0x20; runes above 0xFF whose orbit holds a byte. */
static void fold_partners(uint8_t *set, long r)
{
	static const struct { long r; uint8_t b[2]; } high[] = {
		{ 0x178, { 0xFF, 0xFF } }, { 0x17F, { 's', 'S' } }, { 0x39C, { 0xB5, 0xB5 } },
		{ 0x3BC, { 0xB5, 0xB5 } }, { 0x1E9E, { 0xDF, 0xDF } }, { 0x212A, { 'k', 'K' } },
		{ 0x212B, { 0xE5, 0xC5 } },
	};
	if ((r >= 'A' && r <= 'Z') || (r >= 0xC0 && r <= 0xDE && r != 0xD7))
		set_add(set, (unsigned)r + 0x20);
	else if ((r >= 'a' && r <= 'z') || (r >= 0xE0 && r <= 0xFE && r != 0xF7))
		set_add(set, (unsigned)r - 0x20);
	for (size_t i = 0; i < sizeof high / sizeof *high; i++)
		if (high[i].r == r) {
			set_add(set, high[i].b[0]);
			set_add(set, high[i].b[1]);
		}
}

/* Add the runes LO..HI (and, folding, what they fold to) to SET. Runes above 0xFF match no byte. */
static void add_range(uint8_t *set, long lo, long hi, bool fold)
{
	static const long high[] = { 0x178, 0x17F, 0x39C, 0x3BC, 0x1E9E, 0x212A, 0x212B };

	for (long r = lo; r <= hi && r <= 0xFF; r++) {
		set_add(set, (unsigned)r);
		if (fold)
			fold_partners(set, r);
	}
	if (fold)
		for (size_t i = 0; i < sizeof high / sizeof *high; i++)
			if (high[i] >= lo && high[i] <= hi)
				fold_partners(set, high[i]);
}

/* ---- Go's named classes, restricted to bytes -------------------------------------------------------- */

struct group {
	const char *name;
	int sign;
	const char *ranges; /* pairs lo, hi */
};

static const struct group perl_groups[] = {
	{ "\\d", 1, "09" }, { "\\D", -1, "09" },
	{ "\\s", 1, "\t\n\f\r  " }, { "\\S", -1, "\t\n\f\r  " },
	{ "\\w", 1, "09AZ__az" }, { "\\W", -1, "09AZ__az" },
};

static const struct { const char *name; const char *ranges; } posix_groups[] = {
	{ "alnum", "09AZaz" }, { "alpha", "AZaz" }, { "ascii", "\x01\x7f" }, { "blank", "\t\t  " },
	{ "cntrl", "\x01\x1f\x7f\x7f" }, { "digit", "09" }, { "graph", "!~" }, { "lower", "az" },
	{ "print", " ~" }, { "punct", "!/:@[`{~" }, { "space", "\t\r  " }, { "upper", "AZ" },
	{ "word", "09AZ__az" }, { "xdigit", "09AFaf" },
};

/* Add a group's ranges (a string of lo, hi pairs; NUL is implied where a class starts at \x01 and
 * includes it: ascii, cntrl) to SET, folded and negated as Go's appendGroup does. */
static void add_group(uint8_t *set, const char *ranges, int sign, unsigned flags)
{
	uint8_t g[32] = { 0 };

	for (const char *r = ranges; *r; r += 2)
		add_range(g, r[0] == 1 ? 0 : (unsigned char)r[0], (unsigned char)r[1], flags & F_FOLD);
	if (sign < 0)
		set_not(g);
	set_or(set, g);
}

/* The general category of each byte (Unicode, as Go's tables have it), as runs. */
static const struct { uint8_t lo, hi; char cat[3]; } byte_cats[] = {
	{ 0, 31, "Cc" }, { 32, 32, "Zs" }, { 33, 35, "Po" }, { 36, 36, "Sc" }, { 37, 39, "Po" },
	{ 40, 40, "Ps" }, { 41, 41, "Pe" }, { 42, 42, "Po" }, { 43, 43, "Sm" }, { 44, 44, "Po" },
	{ 45, 45, "Pd" }, { 46, 47, "Po" }, { 48, 57, "Nd" }, { 58, 59, "Po" }, { 60, 62, "Sm" },
	{ 63, 64, "Po" }, { 65, 90, "Lu" }, { 91, 91, "Ps" }, { 92, 92, "Po" }, { 93, 93, "Pe" },
	{ 94, 94, "Sk" }, { 95, 95, "Pc" }, { 96, 96, "Sk" }, { 97, 122, "Ll" }, { 123, 123, "Ps" },
	{ 124, 124, "Sm" }, { 125, 125, "Pe" }, { 126, 126, "Sm" }, { 127, 159, "Cc" }, { 160, 160, "Zs" },
	{ 161, 161, "Po" }, { 162, 165, "Sc" }, { 166, 166, "So" }, { 167, 167, "Po" }, { 168, 168, "Sk" },
	{ 169, 169, "So" }, { 170, 170, "Lo" }, { 171, 171, "Pi" }, { 172, 172, "Sm" }, { 173, 173, "Cf" },
	{ 174, 174, "So" }, { 175, 175, "Sk" }, { 176, 176, "So" }, { 177, 177, "Sm" }, { 178, 179, "No" },
	{ 180, 180, "Sk" }, { 181, 181, "Ll" }, { 182, 183, "Po" }, { 184, 184, "Sk" }, { 185, 185, "No" },
	{ 186, 186, "Lo" }, { 187, 187, "Pf" }, { 188, 190, "No" }, { 191, 191, "Po" }, { 192, 214, "Lu" },
	{ 215, 215, "Sm" }, { 216, 222, "Lu" }, { 223, 246, "Ll" }, { 247, 247, "Sm" }, { 248, 255, "Ll" },
};

/* Go's unicode.Categories (Go 1.24: no Cn, no LC, no long names) and unicode.Scripts (Unicode 15.0). */
static const char *const categories[] = {
	"C", "Cc", "Cf", "Co", "Cs", "L", "Ll", "Lm", "Lo", "Lt", "Lu", "M", "Mc", "Me", "Mn", "N", "Nd",
	"Nl", "No", "P", "Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps", "S", "Sc", "Sk", "Sm", "So", "Z", "Zl",
	"Zp", "Zs",
};
static const char *const scripts[] = {
	"Adlam", "Ahom", "Anatolian_Hieroglyphs", "Arabic", "Armenian", "Avestan", "Balinese", "Bamum",
	"Bassa_Vah", "Batak", "Bengali", "Bhaiksuki", "Bopomofo", "Brahmi", "Braille", "Buginese", "Buhid",
	"Canadian_Aboriginal", "Carian", "Caucasian_Albanian", "Chakma", "Cham", "Cherokee", "Chorasmian",
	"Common", "Coptic", "Cuneiform", "Cypriot", "Cypro_Minoan", "Cyrillic", "Deseret", "Devanagari",
	"Dives_Akuru", "Dogra", "Duployan", "Egyptian_Hieroglyphs", "Elbasan", "Elymaic", "Ethiopic",
	"Georgian", "Glagolitic", "Gothic", "Grantha", "Greek", "Gujarati", "Gunjala_Gondi", "Gurmukhi", "Han",
	"Hangul", "Hanifi_Rohingya", "Hanunoo", "Hatran", "Hebrew", "Hiragana", "Imperial_Aramaic",
	"Inherited", "Inscriptional_Pahlavi", "Inscriptional_Parthian", "Javanese", "Kaithi", "Kannada",
	"Katakana", "Kawi", "Kayah_Li", "Kharoshthi", "Khitan_Small_Script", "Khmer", "Khojki", "Khudawadi",
	"Lao", "Latin", "Lepcha", "Limbu", "Linear_A", "Linear_B", "Lisu", "Lycian", "Lydian", "Mahajani",
	"Makasar", "Malayalam", "Mandaic", "Manichaean", "Marchen", "Masaram_Gondi", "Medefaidrin",
	"Meetei_Mayek", "Mende_Kikakui", "Meroitic_Cursive", "Meroitic_Hieroglyphs", "Miao", "Modi",
	"Mongolian", "Mro", "Multani", "Myanmar", "Nabataean", "Nag_Mundari", "Nandinagari", "New_Tai_Lue",
	"Newa", "Nko", "Nushu", "Nyiakeng_Puachue_Hmong", "Ogham", "Ol_Chiki", "Old_Hungarian", "Old_Italic",
	"Old_North_Arabian", "Old_Permic", "Old_Persian", "Old_Sogdian", "Old_South_Arabian", "Old_Turkic",
	"Old_Uyghur", "Oriya", "Osage", "Osmanya", "Pahawh_Hmong", "Palmyrene", "Pau_Cin_Hau", "Phags_Pa",
	"Phoenician", "Psalter_Pahlavi", "Rejang", "Runic", "Samaritan", "Saurashtra", "Sharada", "Shavian",
	"Siddham", "SignWriting", "Sinhala", "Sogdian", "Sora_Sompeng", "Soyombo", "Sundanese",
	"Syloti_Nagri", "Syriac", "Tagalog", "Tagbanwa", "Tai_Le", "Tai_Tham", "Tai_Viet", "Takri", "Tamil",
	"Tangsa", "Tangut", "Telugu", "Thaana", "Thai", "Tibetan", "Tifinagh", "Tirhuta", "Toto", "Ugaritic",
	"Vai", "Vithkuqi", "Wancho", "Warang_Citi", "Yezidi", "Yi", "Zanabazar_Square",
};

static bool name_is(const char *name, size_t n, const char *s)
{
	return strlen(s) == n && !memcmp(name, s, n);
}

/* The bytes of \p{NAME} (Go's unicodeTable(), with its fold table when folding). False: no such name. */
static bool unicode_class(const char *name, size_t n, bool fold, uint8_t *set)
{
	bool cat = false, script = false;

	memset(set, 0, 32);
	if (name_is(name, n, "Any")) {
		set_not(set);
		return true;
	}
	for (size_t i = 0; i < sizeof categories / sizeof *categories; i++)
		cat |= name_is(name, n, categories[i]);
	for (size_t i = 0; !cat && i < sizeof scripts / sizeof *scripts; i++)
		script |= name_is(name, n, scripts[i]);
	if (!cat && !script)
		return false;
	for (size_t i = 0; i < sizeof byte_cats / sizeof *byte_cats; i++) {
		const char *c = byte_cats[i].cat;
		bool in;

		if (cat)
			in = n == 1 ? c[0] == name[0] : !memcmp(c, name, 2);
		else if (name_is(name, n, "Latin"))
			in = c[0] == 'L' && byte_cats[i].lo != 0xB5; /* µ is Common */
		else
			in = name_is(name, n, "Common") && (c[0] != 'L' || byte_cats[i].lo == 0xB5);
		for (unsigned b = byte_cats[i].lo; in && b <= byte_cats[i].hi; b++)
			set_add(set, b);
	}
	if (fold) { /* Go's FoldCategory and FoldScript, where they hold bytes */
		if (name_is(name, n, "Lu") || name_is(name, n, "Ll")) {
			uint8_t other[32];
			unicode_class(name_is(name, n, "Lu") ? "Ll" : "Lu", 2, false, other);
			set_or(set, other);
		} else if (name_is(name, n, "Greek")) {
			set_add(set, 0xB5);
		}
	}
	return true;
}

/* ---- The parser ------------------------------------------------------------------------------------- */

static int fail(parser *p, const char *what, size_t off, size_t len)
{
	p->err->what = what;
	p->err->off = off;
	p->err->len = len;
	return -EINVAL;
}

static node *new_node(parser *p, enum op op)
{
	node *nd;

	if (p->nall == p->capall) {
		size_t cap = p->capall ? 2 * p->capall : 32;
		node **a = mem_realloc(p->all, cap * sizeof *a);
		if (!a)
			return NULL;
		p->all = a;
		p->capall = cap;
	}
	if (!(nd = mem_calloc(1, sizeof *nd)))
		return NULL;
	nd->op = op;
	nd->flags = p->flags;
	p->all[p->nall++] = nd;
	return nd;
}

static int push(parser *p, node *nd)
{
	if (!nd)
		return -ENOMEM;
	if (p->nstack == p->capstack) {
		size_t cap = p->capstack ? 2 * p->capstack : 16;
		node **s = mem_realloc(p->stack, cap * sizeof *s);
		if (!s)
			return -ENOMEM;
		p->stack = s;
		p->capstack = cap;
	}
	p->stack[p->nstack++] = nd;
	return 0;
}

static int push_op(parser *p, enum op op)
{
	return push(p, new_node(p, op));
}

static int push_set(parser *p, const uint8_t *set)
{
	node *nd = new_node(p, OP_SET);

	if (nd)
		memcpy(nd->set, set, 32);
	return push(p, nd);
}

static int literal(parser *p, long r)
{
	uint8_t set[32] = { 0 };

	add_range(set, r, r, p->flags & F_FOLD);
	return push_set(p, set);
}

/* Replace the nodes above the topmost marker by one node OP of them (Go's concat() and alternate()). */
static int collapse(parser *p, enum op op)
{
	size_t i = p->nstack;
	node *nd;

	while (i > 0 && p->stack[i - 1]->op < OP_PSEUDO)
		i--;
	if (p->nstack - i == 1)
		return 0;
	if (p->nstack == i) /* an empty concatenation matches the empty string (no alternation is empty) */
		return push_op(p, OP_EMPTY);
	if (!(nd = new_node(p, op)) || !(nd->sub = mem_malloc((p->nstack - i) * sizeof *nd->sub)))
		return -ENOMEM;
	nd->nsub = p->nstack - i;
	memcpy(nd->sub, p->stack + i, nd->nsub * sizeof *nd->sub);
	p->nstack = i;
	return push(p, nd);
}

/* Go's swapVerticalBar(): if a '|' is below the top, move the top below it. */
static bool swap_vbar(parser *p)
{
	size_t n = p->nstack;

	if (n >= 2 && p->stack[n - 2]->op == OP_VBAR) {
		node *t = p->stack[n - 1];
		p->stack[n - 1] = p->stack[n - 2];
		p->stack[n - 2] = t;
		return true;
	}
	return false;
}

static int vertical_bar(parser *p)
{
	int rc = collapse(p, OP_CAT);

	if (rc == 0 && !swap_vbar(p))
		rc = push_op(p, OP_VBAR);
	return rc;
}

/* Close the alternation above the topmost marker: at a ')' and at the end. */
static int close_alt(parser *p)
{
	int rc = collapse(p, OP_CAT);

	if (rc)
		return rc;
	if (swap_vbar(p))
		p->nstack--;
	return collapse(p, OP_ALT);
}

static int right_paren(parser *p)
{
	int rc = close_alt(p);
	node *top;

	if (rc)
		return rc;
	if (p->nstack < 2 || p->stack[p->nstack - 2]->op != OP_LPAREN)
		return fail(p, E_UNEXPECTED_PAREN, 0, p->n);
	top = p->stack[--p->nstack];
	p->flags = p->stack[--p->nstack]->flags;
	p->depth--;
	return push(p, top);
}

static int left_paren(parser *p)
{
	if (++p->depth > MAX_NEST)
		return fail(p, E_NESTING, 0, p->n);
	return push_op(p, OP_LPAREN); /* remembers the flags to restore */
}

/* Go's repeatIsValid(): nested counted repetitions make at most N copies of anything. */
static bool repeat_valid(const node *nd, int n)
{
	if (nd->op == OP_REP && nd->counted) {
		int m = nd->max;
		if (m == 0)
			return true;
		if (m < 0)
			m = nd->min;
		if (m > n)
			return false;
		if (m > 0)
			n /= m;
	}
	for (size_t i = 0; i < nd->nsub; i++)
		if (!repeat_valid(nd->sub[i], n))
			return false;
	return true;
}

/* Apply a repetition (Go's parser.repeat()): BEFORE is where its operator starts, *AFTER just past it. */
static int repeat(parser *p, bool counted, int min, int max, size_t before, size_t *after, long last_repeat)
{
	node *nd, *sub;

	if (*after < p->n && p->s[*after] == '?')
		(*after)++; /* non-greedy: the same strings match */
	if (last_repeat != NONE)
		return fail(p, E_REPEAT_OP, (size_t)last_repeat, *after - (size_t)last_repeat);
	if (p->nstack == 0 || p->stack[p->nstack - 1]->op >= OP_PSEUDO)
		return fail(p, E_REPEAT_ARG, before, *after - before);
	sub = p->stack[p->nstack - 1];
	if (!(nd = new_node(p, OP_REP)) || !(nd->sub = mem_malloc(sizeof *nd->sub)))
		return -ENOMEM;
	nd->sub[0] = sub;
	nd->nsub = 1;
	nd->counted = counted;
	nd->min = min;
	nd->max = max;
	p->stack[p->nstack - 1] = nd;
	if (counted && (min >= 2 || max >= 2) && !repeat_valid(nd, MAX_REPEAT))
		return fail(p, E_REPEAT_SIZE, before, *after - before);
	return 0;
}

/* Go's parseInt(): a decimal without leading zeros; -1 if it is 10^8 or more. */
static bool parse_int(parser *p, size_t *i, int *v)
{
	size_t t = *i;

	if (t >= p->n || p->s[t] < '0' || p->s[t] > '9')
		return false;
	if (p->n - t >= 2 && p->s[t] == '0' && p->s[t + 1] >= '0' && p->s[t + 1] <= '9')
		return false;
	*v = 0;
	for (; t < p->n && p->s[t] >= '0' && p->s[t] <= '9'; t++)
		if (*v >= 0)
			*v = *v >= 100000000 ? -1 : *v * 10 + (p->s[t] - '0');
	*i = t;
	return true;
}

/* Go's parseRepeat() at the '{' at *I: {n}, {n,} or {n,m}. False: not a repetition ('{' is a literal). */
static bool parse_repeat(parser *p, size_t *i, int *min, int *max)
{
	size_t t = *i + 1;

	if (!parse_int(p, &t, min) || t >= p->n)
		return false;
	if (p->s[t] != ',') {
		*max = *min;
	} else {
		if (++t >= p->n)
			return false;
		if (p->s[t] == '}')
			*max = -1;
		else if (!parse_int(p, &t, max))
			return false;
		else if (*max < 0)
			*min = -1;
	}
	if (t >= p->n || p->s[t] != '}')
		return false;
	*i = t + 1;
	return true;
}

static int unhex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool is_alnum(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/* Go's parseEscape() at the '\' at *I: the rune it stands for. */
static int parse_escape(parser *p, size_t *i, long *r)
{
	size_t t = *i + 1;
	int c;

	if (t >= p->n)
		return fail(p, E_TRAILING_BACKSLASH, p->n, 0);
	c = (unsigned char)p->s[t++];
	switch (c) {
	case '1': case '2': case '3': case '4': case '5': case '6': case '7':
		if (t >= p->n || p->s[t] < '0' || p->s[t] > '7')
			break; /* a backreference: not supported */
		/* fall through */
	case '0':
		*r = c - '0';
		for (int k = 1; k < 3 && t < p->n && p->s[t] >= '0' && p->s[t] <= '7'; k++)
			*r = *r * 8 + (p->s[t++] - '0');
		*i = t;
		return 0;
	case 'x':
		if (t >= p->n)
			break;
		c = (unsigned char)p->s[t++];
		if (c == '{') {
			int nhex = 0;
			long v = 0;
			for (;;) {
				if (t >= p->n)
					goto bad;
				c = (unsigned char)p->s[t++];
				if (c == '}')
					break;
				if (unhex(c) < 0 || (v = v * 16 + unhex(c)) > MAX_RUNE)
					goto bad;
				nhex++;
			}
			if (nhex == 0)
				break;
			*r = v;
			*i = t;
			return 0;
		} else {
			int x = unhex(c), y = t < p->n ? unhex((unsigned char)p->s[t++]) : -1;
			if (x < 0 || y < 0)
				break;
			*r = x * 16 + y;
			*i = t;
			return 0;
		}
	case 'a': *r = '\a'; *i = t; return 0;
	case 'f': *r = '\f'; *i = t; return 0;
	case 'n': *r = '\n'; *i = t; return 0;
	case 'r': *r = '\r'; *i = t; return 0;
	case 't': *r = '\t'; *i = t; return 0;
	case 'v': *r = '\v'; *i = t; return 0;
	default:
		if (c < 0x80 && !is_alnum(c)) { /* escaped punctuation is itself (a byte >= 0x80 is not) */
			*r = c;
			*i = t;
			return 0;
		}
	}
bad:
	return fail(p, E_INVALID_ESCAPE, *i, t - *i);
}

/* Go's parseUnicodeClass() at the '\' of \pN, \p{Name}, \PN, \P{^Name} at *I. */
static int unicode_escape(parser *p, size_t *i, uint8_t *set)
{
	size_t t = *i + 2, name, namen, seqn;
	int sign = p->s[*i + 1] == 'P' ? -1 : 1;
	uint8_t g[32];

	if (t < p->n && p->s[t] == '{') {
		const char *end = memchr(p->s + *i, '}', p->n - *i);
		if (!end)
			return fail(p, E_CHAR_RANGE, *i, p->n - *i);
		seqn = (size_t)(end - p->s) + 1 - *i;
		name = *i + 3;
		namen = (size_t)(end - p->s) - name;
	} else {
		if (t < p->n)
			t++;
		seqn = t - *i;
		name = *i + 2;
		namen = t - name;
	}
	if (namen && p->s[name] == '^') {
		sign = -sign;
		name++;
		namen--;
	}
	if (!unicode_class(p->s + name, namen, p->flags & F_FOLD, g))
		return fail(p, E_CHAR_RANGE, *i, seqn);
	if (sign < 0)
		set_not(g);
	set_or(set, g);
	*i += seqn;
	return 0;
}

/* \d \D \s \S \w \W at *I: true (and added to SET) if that is what is there. */
static bool perl_escape(parser *p, size_t *i, uint8_t *set)
{
	if (p->n - *i < 2 || p->s[*i] != '\\')
		return false;
	for (size_t k = 0; k < sizeof perl_groups / sizeof *perl_groups; k++)
		if (p->s[*i + 1] == perl_groups[k].name[1]) {
			add_group(set, perl_groups[k].ranges, perl_groups[k].sign, p->flags);
			*i += 2;
			return true;
		}
	return false;
}

/* Go's parseClass() at the '[' at *I. */
/* One character of a class at *T (escaped or not) into *R; START is where the class began, for the error
 * of a class left open. */
static int class_char(parser *p, size_t *t, size_t start, long *r)
{
	if (*t >= p->n)
		return fail(p, E_MISSING_BRACKET, start, p->n - start);
	if (p->s[*t] == '\\')
		return parse_escape(p, t, r);
	*r = (unsigned char)p->s[(*t)++];
	return 0;
}

static int parse_class(parser *p, size_t *i)
{
	size_t start = *i, t = *i + 1;
	uint8_t set[32] = { 0 };
	bool negated = false, first = true;
	int rc;

	if (t < p->n && p->s[t] == '^') {
		negated = true;
		t++;
	}
	while (t >= p->n || p->s[t] != ']' || first) {
		size_t rng = t;
		long lo, hi;

		first = false;
		if (p->n - t > 2 && p->s[t] == '[' && p->s[t + 1] == ':') { /* [:alpha:], [:^alpha:] */
			const char *end = memmem(p->s + t + 2, p->n - t - 2, ":]", 2);
			if (end) {
				size_t nn = (size_t)(end - p->s) + 2 - t;
				const char *nm = p->s + t + 2;
				size_t k, len = nn - 4;
				int sign = 1;
				if (len && *nm == '^') {
					sign = -1;
					nm++;
					len--;
				}
				for (k = 0; k < sizeof posix_groups / sizeof *posix_groups; k++)
					if (name_is(nm, len, posix_groups[k].name))
						break;
				if (k == sizeof posix_groups / sizeof *posix_groups)
					return fail(p, E_CHAR_RANGE, t, nn);
				add_group(set, posix_groups[k].ranges, sign, p->flags);
				t += nn;
				continue;
			}
		}
		if (p->n - t >= 2 && p->s[t] == '\\' && (p->s[t + 1] == 'p' || p->s[t + 1] == 'P')) {
			if ((rc = unicode_escape(p, &t, set)))
				return rc;
			continue;
		}
		if (perl_escape(p, &t, set))
			continue;
		if ((rc = class_char(p, &t, start, &lo)))
			return rc;
		hi = lo;
		if (p->n - t >= 2 && p->s[t] == '-' && p->s[t + 1] != ']') {
			t++;
			if ((rc = class_char(p, &t, start, &hi)))
				return rc;
			if (hi < lo)
				return fail(p, E_CHAR_RANGE, rng, t - rng);
		}
		add_range(set, lo, hi, p->flags & F_FOLD);
	}
	if (negated)
		set_not(set);
	*i = t + 1;
	return push_set(p, set);
}

/* Go's parsePerlFlags() at the "(?" at *I: (?P<name>, (?flags), (?flags:. */
static int perl_flags(parser *p, size_t *i)
{
	size_t t = *i;
	unsigned set = 0, clear = 0;
	int sign = 1;
	bool saw = false;

	if (p->n - t > 4 && p->s[t + 2] == 'P' && p->s[t + 3] == '<') {
		const char *end = memchr(p->s + t, '>', p->n - t);
		size_t e;
		int rc;
		if (!end)
			return fail(p, E_NAMED_CAPTURE, t, p->n - t);
		e = (size_t)(end - p->s);
		for (size_t k = t + 4; k <= e; k++)
			if (k == e ? k == t + 4 : !is_alnum((unsigned char)p->s[k]) && p->s[k] != '_')
				return fail(p, E_NAMED_CAPTURE, t, e + 1 - t);
		if ((rc = left_paren(p)))
			return rc;
		*i = e + 1;
		return 0;
	}
	for (t += 2; t < p->n;) {
		unsigned f = 0;
		int c = (unsigned char)p->s[t++];

		switch (c) {
		case 'i': f = F_FOLD; break;
		case 'm': f = F_MULTI; break;
		case 's': f = F_DOTNL; break;
		case 'U': f = F_UNGREEDY; break;
		case '-':
			if (sign < 0)
				goto bad;
			sign = -1;
			saw = false;
			continue;
		case ':':
		case ')':
			if (sign < 0 && !saw)
				goto bad;
			if (c == ':') {
				int rc = left_paren(p);
				if (rc)
					return rc;
			}
			p->flags = (p->flags | set) & ~clear;
			*i = t;
			return 0;
		default:
			goto bad;
		}
		if (sign > 0)
			set |= f;
		else
			clear |= f;
		saw = true;
	}
bad:
	return fail(p, E_PERL_OP, *i, t - *i);
}

/* Go's Parse() with the Perl flags: the tree of P->s, or an error in P->err. */
static int parse(parser *p, node **root)
{
	size_t i = 0;
	long last_repeat = NONE;
	int rc = 0;

	while (i < p->n && rc == 0) {
		long rep = NONE;
		unsigned char c = (unsigned char)p->s[i];
		uint8_t set[32] = { 0 };
		size_t before = i, after;
		int min, max;
		long r;

		switch (c) {
		case '(':
			if (i + 1 < p->n && p->s[i + 1] == '?') {
				rc = perl_flags(p, &i);
			} else {
				rc = left_paren(p);
				i++;
			}
			break;
		case '|':
			rc = vertical_bar(p);
			i++;
			break;
		case ')':
			rc = right_paren(p);
			i++;
			break;
		case '^':
			rc = push_op(p, p->flags & F_MULTI ? OP_BOL : OP_BOT);
			i++;
			break;
		case '$':
			rc = push_op(p, p->flags & F_MULTI ? OP_EOL : OP_EOT);
			i++;
			break;
		case '.':
			set_not(set);
			if (!(p->flags & F_DOTNL))
				set[1] &= (uint8_t)~(1u << 2); /* not '\n' */
			rc = push_set(p, set);
			i++;
			break;
		case '[':
			rc = parse_class(p, &i);
			break;
		case '*':
		case '+':
		case '?':
			after = i + 1;
			rc = repeat(p, false, c == '+', c == '?' ? 1 : -1, before, &after, last_repeat);
			rep = (long)before;
			i = after;
			break;
		case '{':
			after = i;
			if (!parse_repeat(p, &after, &min, &max)) {
				rc = literal(p, '{');
				i++;
				break;
			}
			if (min < 0 || min > MAX_REPEAT || max > MAX_REPEAT || (max >= 0 && min > max)) {
				rc = fail(p, E_REPEAT_SIZE, before, after - before);
				break;
			}
			rc = repeat(p, true, min, max, before, &after, last_repeat);
			rep = (long)before;
			i = after;
			break;
		case '\\':
			if (i + 1 < p->n) {
				const char *e;
				switch (p->s[i + 1]) {
				case 'A': rc = push_op(p, OP_BOT); i += 2; goto next;
				case 'z': rc = push_op(p, OP_EOT); i += 2; goto next;
				case 'b': rc = push_op(p, OP_WB); i += 2; goto next;
				case 'B': rc = push_op(p, OP_NWB); i += 2; goto next;
				case 'C':
					set_not(set);
					rc = push_set(p, set);
					i += 2;
					goto next;
				case 'Q': /* \Q...\E: literal bytes */
					e = memmem(p->s + i, p->n - i, "\\E", 2);
					for (size_t k = i + 2; rc == 0 && k < (e ? (size_t)(e - p->s) : p->n); k++)
						rc = literal(p, (unsigned char)p->s[k]);
					i = e ? (size_t)(e - p->s) + 2 : p->n;
					goto next;
				case 'p':
				case 'P':
					if ((rc = unicode_escape(p, &i, set)) == 0)
						rc = push_set(p, set);
					goto next;
				}
				if (perl_escape(p, &i, set)) {
					rc = push_set(p, set);
					break;
				}
			}
			if ((rc = parse_escape(p, &i, &r)) == 0)
				rc = literal(p, r);
			break;
		default:
			rc = literal(p, c);
			i++;
		}
next:
		last_repeat = rep;
	}
	if (rc)
		return rc;
	if ((rc = close_alt(p)))
		return rc;
	if (p->nstack != 1)
		return fail(p, E_MISSING_PAREN, 0, p->n);
	*root = p->stack[0];
	return 0;
}

/* ---- The PCRE2 pattern ------------------------------------------------------------------------------ */

typedef struct buf {
	char *p;
	size_t n, cap;
	bool oom;
} buf;

static void put(buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		char *q;
		while (cap < b->n + n + 1)
			cap *= 2;
		if (!(q = mem_realloc(b->p, cap))) {
			b->oom = true;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

static void puts_(buf *b, const char *s)
{
	put(b, s, strlen(s));
}

static void put_byte(buf *b, unsigned c)
{
	char x[5];

	if (is_alnum((int)c)) {
		x[0] = (char)c;
		put(b, x, 1);
		return;
	}
	x[0] = '\\';
	x[1] = 'x';
	x[2] = "0123456789abcdef"[c >> 4];
	x[3] = "0123456789abcdef"[c & 15];
	put(b, x, 4);
}

static void put_set(buf *b, const uint8_t *set)
{
	uint8_t s[32];
	unsigned count = 0;

	for (unsigned c = 0; c < 256; c++)
		count += set_has(set, c);
	if (count == 0) {
		puts_(b, "[^\\x00-\\xff]"); /* matches no byte */
		return;
	}
	if (count == 256) {
		puts_(b, "(?s:.)");
		return;
	}
	memcpy(s, set, 32);
	if (count == 1) {
		for (unsigned c = 0; c < 256; c++)
			if (set_has(s, c))
				put_byte(b, c);
		return;
	}
	puts_(b, count > 128 ? "[^" : "[");
	if (count > 128)
		set_not(s);
	for (unsigned c = 0; c < 256; c++) {
		unsigned e = c;
		if (!set_has(s, c))
			continue;
		while (e + 1 < 256 && set_has(s, e + 1))
			e++;
		put_byte(b, c);
		if (e > c) {
			if (e > c + 1)
				puts_(b, "-");
			put_byte(b, e);
		}
		c = e;
	}
	puts_(b, "]");
}

#define WORD "[0-9A-Za-z_]"

static void emit(buf *b, const node *nd)
{
	char q[32];

	switch (nd->op) {
	case OP_SET: put_set(b, nd->set); break;
	case OP_EMPTY: break;
	case OP_BOT: puts_(b, "\\A"); break;
	case OP_EOT: puts_(b, "\\z"); break;
	case OP_BOL: puts_(b, "(?m:^)"); break; /* PCRE2_ALT_CIRCUMFLEX: also after a final '\n', as Go */
	case OP_EOL: puts_(b, "(?m:$)"); break;
	case OP_WB:
		puts_(b, "((?<=" WORD ")(?!" WORD ")|(?<!" WORD ")(?=" WORD "))");
		break;
	case OP_NWB:
		puts_(b, "((?<=" WORD ")(?=" WORD ")|(?<!" WORD ")(?!" WORD "))");
		break;
	case OP_CAT:
		for (size_t i = 0; i < nd->nsub; i++)
			emit(b, nd->sub[i]);
		break;
	case OP_ALT:
		puts_(b, "(");
		for (size_t i = 0; i < nd->nsub; i++) {
			if (i)
				puts_(b, "|");
			emit(b, nd->sub[i]);
		}
		puts_(b, ")");
		break;
	case OP_REP:
		if (nd->sub[0]->op == OP_SET) {
			emit(b, nd->sub[0]);
		} else {
			puts_(b, "(");
			emit(b, nd->sub[0]);
			puts_(b, ")");
		}
		if (!nd->counted)
			puts_(b, nd->min ? "+" : nd->max == 1 ? "?" : "*");
		else if (nd->max == nd->min)
			snprintf(q, sizeof q, "{%d}", nd->min), puts_(b, q);
		else if (nd->max < 0)
			snprintf(q, sizeof q, "{%d,}", nd->min), puts_(b, q);
		else
			snprintf(q, sizeof q, "{%d,%d}", nd->min, nd->max), puts_(b, q);
		break;
	default: /* markers never reach the tree */
		break;
	}
}

/* ---- The API ---------------------------------------------------------------------------------------- */

static void *pcre_alloc(PCRE2_SIZE n, void *data)
{
	(void)data;
	return mem_malloc(n);
}

static void pcre_free(void *p, void *data)
{
	(void)data;
	free(p);
}

void cs_regex_free(cs_regex *re)
{
	if (!re)
		return;
	pcre2_match_data_free(re->md);
	pcre2_match_context_free(re->mc);
	pcre2_match_context_free(re->bmc);
	pcre2_code_free(re->code);
	pcre2_general_context_free(re->gc);
	free(re->ws);
	free(re);
}

int cs_regex_compile(const char *pattern, cs_regex **out, cs_regex_error *err)
{
	cs_regex_error spare;
	parser p = { .s = pattern, .n = strlen(pattern), .err = err ? err : &spare };
	pcre2_compile_context *cc = NULL;
	buf b = { 0 };
	node *root;
	cs_regex *re;
	int rc, e;
	PCRE2_SIZE eoff;

	*out = NULL;
	if (!(re = mem_calloc(1, sizeof *re)))
		return -ENOMEM;
	if ((rc = parse(&p, &root)))
		goto out;
	/* Not PCRE2_ENDANCHORED: PCRE2 10.42's DFA matcher applies it to lookaheads too ((?=a)ab fails). */
	puts_(&b, "(");
	emit(&b, root);
	puts_(&b, ")\\z");
	rc = -ENOMEM;
	if (b.oom || !(re->gc = pcre2_general_context_create(pcre_alloc, pcre_free, NULL)) ||
	    !(cc = pcre2_compile_context_create(re->gc)) || !(re->mc = pcre2_match_context_create(re->gc)) ||
	    !(re->md = pcre2_match_data_create(1, re->gc)) || !(re->bmc = pcre2_match_context_create(re->gc)))
		goto out;
	pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
	pcre2_set_parens_nest_limit(cc, 4 * MAX_NEST + 16);
	/* A key is at most a few KiB: what the DFA matcher does is bounded by that, not by these limits. */
	pcre2_set_match_limit(re->mc, UINT32_MAX);
	pcre2_set_depth_limit(re->mc, UINT32_MAX);
	pcre2_set_heap_limit(re->mc, UINT32_MAX);
	pcre2_set_match_limit(re->bmc, RX_BACKTRACK_STEPS);
	pcre2_set_heap_limit(re->bmc, 1024); /* KiB */
	re->code = pcre2_compile((PCRE2_SPTR)b.p, b.n, PCRE2_ANCHORED | PCRE2_ALT_CIRCUMFLEX | PCRE2_NO_AUTO_CAPTURE |
				 PCRE2_NEVER_UTF | PCRE2_NEVER_UCP | PCRE2_NO_UTF_CHECK, &e, &eoff, cc);
	if (!re->code) {
		if (e == PCRE2_ERROR_NOMEMORY || e == PCRE2_ERROR_HEAP_FAILED)
			rc = -ENOMEM;
		else
			rc = fail(&p, E_LARGE, 0, p.n); /* our syntax is PCRE2's: only its limits are left */
		goto out;
	}
	re->wsn = 1000;
	if (!(re->ws = mem_malloc(re->wsn * sizeof *re->ws)))
		goto out;
	*out = re;
	re = NULL;
	rc = 0;
out:
	for (size_t i = 0; i < p.nall; i++) {
		free(p.all[i]->sub);
		free(p.all[i]);
	}
	free(p.all);
	free(p.stack);
	free(b.p);
	pcre2_compile_context_free(cc);
	cs_regex_free(re);
	return rc;
}

int cs_regex_match(cs_regex *re, const void *p, size_t n)
{
	/* The backtracking matcher first: it answers most patterns in a few steps where the DFA matcher, which
	 * keeps every state a counted repeat can be in, takes seconds on a 4 KiB key (a*[a-z]{0,1000}). Past
	 * its step limit (a pattern it would take exponential time on), the DFA matcher decides: both match
	 * the same anchored pattern, so they agree. */
	int rc = pcre2_match(re->code, n ? p : (const void *)"", n, 0, 0, re->md, re->bmc);

	if (rc >= 0)
		return 1;
	if (rc == PCRE2_ERROR_NOMATCH)
		return 0;
	if (rc == PCRE2_ERROR_NOMEMORY)
		return -ENOMEM;
	for (;;) { /* PCRE2_ERROR_MATCHLIMIT, _DEPTHLIMIT, _HEAPLIMIT */
		int *ws;

		rc = pcre2_dfa_match(re->code, n ? p : (const void *)"", n, 0, 0, re->md, re->mc, re->ws, re->wsn);

		if (rc >= 0) /* 0: more matches than the match data holds */
			return 1;
		if (rc == PCRE2_ERROR_NOMATCH)
			return 0;
		if (rc != PCRE2_ERROR_DFA_WSSIZE || re->wsn >= (1u << 26))
			return -ENOMEM;
		if (!(ws = mem_realloc(re->ws, 2 * re->wsn * sizeof *ws)))
			return -ENOMEM;
		re->ws = ws;
		re->wsn *= 2;
	}
}
