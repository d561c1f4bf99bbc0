/* rx_set.c — the classes of Go's regexp/syntax (\d, [:alpha:], \pL, case folding) as sets of bytes
 * (rx_set.h): Go's Unicode tables restricted to the runes 0-255, so that a pattern's classes are resolved
 * to bytes before PCRE2 sees them. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "rx_set.h"

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
		rx_set_add(set, (unsigned)r + 0x20);
	else if ((r >= 'a' && r <= 'z') || (r >= 0xE0 && r <= 0xFE && r != 0xF7))
		rx_set_add(set, (unsigned)r - 0x20);
	for (size_t i = 0; i < sizeof high / sizeof *high; i++)
		if (high[i].r == r) {
			rx_set_add(set, high[i].b[0]);
			rx_set_add(set, high[i].b[1]);
		}
}

void rx_set_range(uint8_t *set, long lo, long hi, bool fold)
{
	static const long high[] = { 0x178, 0x17F, 0x39C, 0x3BC, 0x1E9E, 0x212A, 0x212B };

	for (long r = lo; r <= hi && r <= 0xFF; r++) {
		rx_set_add(set, (unsigned)r);
		if (fold)
			fold_partners(set, r);
	}
	if (fold)
		for (size_t i = 0; i < sizeof high / sizeof *high; i++)
			if (high[i] >= lo && high[i] <= hi)
				fold_partners(set, high[i]);
}

/* ---- Go's named classes ----------------------------------------------------------------------------- */

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
static void add_group(uint8_t *set, const char *ranges, int sign, bool fold)
{
	uint8_t g[32] = { 0 };

	for (const char *r = ranges; *r; r += 2)
		rx_set_range(g, r[0] == 1 ? 0 : (unsigned char)r[0], (unsigned char)r[1], fold);
	if (sign < 0)
		rx_set_not(g);
	rx_set_or(set, g);
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

/* Go's unicodeTable(), with its fold table when folding. */
bool rx_set_unicode(uint8_t *set, const char *name, size_t n, bool fold)
{
	bool cat = false, script = false;

	memset(set, 0, 32);
	if (name_is(name, n, "Any")) {
		rx_set_not(set);
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
			rx_set_add(set, b);
	}
	if (fold) { /* Go's FoldCategory and FoldScript, where they hold bytes */
		if (name_is(name, n, "Lu") || name_is(name, n, "Ll")) {
			uint8_t other[32];
			rx_set_unicode(other, name_is(name, n, "Lu") ? "Ll" : "Lu", 2, false);
			rx_set_or(set, other);
		} else if (name_is(name, n, "Greek")) {
			rx_set_add(set, 0xB5);
		}
	}
	return true;
}

bool rx_set_perl(uint8_t *set, char c, bool fold)
{
	for (size_t k = 0; k < sizeof perl_groups / sizeof *perl_groups; k++)
		if (c == perl_groups[k].name[1]) {
			add_group(set, perl_groups[k].ranges, perl_groups[k].sign, fold);
			return true;
		}
	return false;
}

bool rx_set_posix(uint8_t *set, const char *name, size_t n, int sign, bool fold)
{
	for (size_t k = 0; k < sizeof posix_groups / sizeof *posix_groups; k++)
		if (name_is(name, n, posix_groups[k].name)) {
			add_group(set, posix_groups[k].ranges, sign, fold);
			return true;
		}
	return false;
}
