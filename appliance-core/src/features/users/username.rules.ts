/**
 * The pure rules of account names: how a username is normalised, when two names are "the same"
 * (usernames and emails share one namespace), and which new usernames are refused. No I/O.
 *
 * - Normalisation is NFKC (UAX #15): full-width, ligature and compatibility forms become their
 *   plain letters, so `ａｄｍｉｎ` is stored, compared and signed in as `admin`.
 * - The comparison key is NFKC, then a full case fold (upper then lower case, so `ß` meets `ss`),
 *   then NFKC again: what a person reads as the same name is the same key.
 * - A new username is refused when it holds invisible characters (controls, format characters
 *   such as zero-width and bidirectional controls, other default-ignorables, line and paragraph
 *   separators, private-use, unassigned or lone surrogates), or when its letters mix scripts
 *   beyond UTS #39's "highly restrictive" level (§5.2): one script, or Latin with the scripts of
 *   one CJK writing system (Han+Hiragana+Katakana, Han+Bopomofo, Han+Hangul). `аdmin` with a
 *   Cyrillic `а` is refused; `山田たろう` and `Tanaka田中タロウ` are not.
 *
 * Script sets are read from the engine's own Unicode data (`\p{Script_Extensions=...}`), so they
 * follow Node's Unicode version; characters of the Common and Inherited scripts (digits,
 * punctuation, combining marks) go with any script, as UTS #39 says.
 */

/** ISO 15924 codes of the Unicode scripts (Scripts.txt up to Unicode 16), Common and Inherited apart. */
const SCRIPT_CODES = (
  'Adlm Aghb Ahom Arab Armi Armn Avst Bali Bamu Bass Batk Beng Bhks Bopo Brah Brai Bugi Buhd ' +
  'Cakm Cans Cari Cham Cher Chrs Copt Cpmn Cprt Cyrl Deva Diak Dogr Dsrt Dupl Egyp Elba Elym ' +
  'Ethi Gara Geor Glag Gong Gonm Goth Gran Grek Gujr Gukh Guru Hang Hani Hano Hatr Hebr Hira ' +
  'Hluw Hmng Hmnp Hung Ital Java Kali Kana Kawi Khar Khmr Khoj Kits Knda Krai Kthi Lana Laoo ' +
  'Latn Lepc Limb Lina Linb Lisu Lyci Lydi Mahj Maka Mand Mani Marc Medf Mend Merc Mero Mlym ' +
  'Modi Mong Mroo Mtei Mult Mymr Nagm Nand Narb Nbat Newa Nkoo Nshu Ogam Olck Onao Orkh Orya ' +
  'Osge Osma Ougr Palm Pauc Perm Phag Phli Phlp Phnx Plrd Prti Rjng Rohg Runr Samr Sarb Saur ' +
  'Sgnw Shaw Shrd Sidd Sind Sinh Sogd Sogo Sora Soyo Sund Sunu Sylo Syrc Tagb Takr Tale Talu ' +
  'Taml Tang Tavt Telu Tfng Tglg Thaa Thai Tibt Tirh Tnsa Todr Toto Tutg Ugar Vaii Vith Wara ' +
  'Wcho Xpeo Xsux Yezi Yiii Zanb'
).split(' ');

/** The scripts this engine knows (an older Node lacks the newest ones: their letters are unassigned there). */
const SCRIPTS: readonly { code: string; test: RegExp }[] = SCRIPT_CODES.flatMap((code) => {
  try {
    return [{ code, test: new RegExp(`^\\p{Script_Extensions=${code}}$`, 'u') }];
  } catch {
    return [];
  }
});

const ASCII = /^[^\u0080-\uFFFF]*$/;
const PRINTABLE_ASCII = /^[\x20-\x7E]*$/;
const COMMON_OR_INHERITED = /^[\p{Script_Extensions=Zyyy}\p{Script_Extensions=Zinh}]$/u;

/** UTS #39 §5.1: the CJK scripts stand for the writing systems that use them. */
const AUGMENTED: Record<string, readonly string[]> = {
  Hani: ['Hanb', 'Jpan', 'Kore'],
  Hira: ['Jpan'],
  Kana: ['Jpan'],
  Hang: ['Kore'],
  Bopo: ['Hanb'],
};

/** UTS #39 §5.2 "highly restrictive": Latin may join the scripts of one of these writing systems. */
const LATIN_WITH_CJK: readonly (readonly string[])[] = [
  ['Latn', 'Hani', 'Hira', 'Kana'],
  ['Latn', 'Hani', 'Bopo'],
  ['Latn', 'Hani', 'Hang'],
];

/**
 * Invisible or unsafe in a name: controls (Cc), format characters (Cf: zero-width, bidi
 * controls, soft hyphen), other default-ignorables (variation selectors, Hangul fillers), line
 * and paragraph separators, private use, unassigned code points and lone surrogates.
 */
const INVISIBLE =
  /[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{Bidi_Control}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Cs}]/u;

export const USERNAME_INVISIBLE_MESSAGE =
  'The username must not contain invisible characters (zero-width, bidirectional controls or other format characters).';
export const USERNAME_MIXED_SCRIPTS_MESSAGE =
  'The username must not mix letters of different scripts (for example Latin with Cyrillic or Greek).';
export const USERNAME_BLANK_MESSAGE = 'The username field is required.';

export function normalizeUsername(name: string): string {
  return name.normalize('NFKC');
}

/** The key under which usernames and emails are compared with each other (see the header). */
export function identityKey(name: string): string {
  // ASCII is its own NFKC form and folds by lower-casing: the common case, five times faster.
  if (ASCII.test(name)) return name.toLowerCase();
  return name.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC');
}

/**
 * The augmented Script_Extensions of one character; null for Common and Inherited (any script).
 * A character of no script this engine knows gets a set of its own, which meets no other.
 */
function scriptsOf(ch: string): ReadonlySet<string> | null {
  if (COMMON_OR_INHERITED.test(ch)) return null;
  const found = new Set<string>();
  for (const { code, test } of SCRIPTS) {
    if (!test.test(ch)) continue;
    found.add(code);
    for (const extra of AUGMENTED[code] ?? []) found.add(extra);
  }
  if (found.size === 0) found.add(`unknown:${ch}`);
  return found;
}

/** UTS #39 §5.2: single script, or covered by Latin plus one CJK writing system. */
export function isHighlyRestrictive(text: string): boolean {
  if (PRINTABLE_ASCII.test(text)) return true; // Latin letters and Common characters only
  const perCharacter: ReadonlySet<string>[] = [];
  for (const ch of text) {
    const scripts = scriptsOf(ch);
    if (scripts) perCharacter.push(scripts);
  }
  if (perCharacter.length === 0) return true;
  // The resolved script set (§5.1): the intersection of every character's set.
  let resolved = new Set(perCharacter[0]);
  for (const scripts of perCharacter.slice(1)) {
    resolved = new Set([...resolved].filter((s) => scripts.has(s)));
    if (resolved.size === 0) break;
  }
  if (resolved.size > 0) return true;
  return LATIN_WITH_CJK.some((allowed) =>
    perCharacter.every((scripts) => allowed.some((s) => scripts.has(s))),
  );
}

/**
 * Why a new username (already normalised) is refused, or null when it is allowed. Names that
 * exist already are never re-checked: an account created before these rules still signs in.
 */
export function usernameProblem(normalized: string): string | null {
  if (normalized.trim() === '') return USERNAME_BLANK_MESSAGE;
  if (INVISIBLE.test(normalized)) return USERNAME_INVISIBLE_MESSAGE;
  if (!isHighlyRestrictive(normalized)) return USERNAME_MIXED_SCRIPTS_MESSAGE;
  return null;
}
