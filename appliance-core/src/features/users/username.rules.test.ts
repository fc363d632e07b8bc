import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  identityKey,
  isHighlyRestrictive,
  normalizeUsername,
  USERNAME_BLANK_MESSAGE,
  USERNAME_INVISIBLE_MESSAGE,
  USERNAME_MIXED_SCRIPTS_MESSAGE,
  usernameProblem,
} from './username.rules.js';

const SEED = 20_251_107;
const charsOf = (text: string) => [...text];
const nameOf = (alphabet: string, min = 1, max = 12) =>
  fc
    .array(fc.constantFrom(...charsOf(alphabet)), { minLength: min, maxLength: max })
    .map((a) => a.join(''));

const LATIN = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZéèüößñçł';
const DIGITS_AND_MARKS = '0123456789._-@';
const HAN = '山田中村東京大小林森川本';
const HIRAGANA = 'あいうえおかきくけこたろう';
const KATAKANA = 'アイウエオカキクケコタロウー';
const HANGUL = '가나다라마바사김박이';
const BOPOMOFO = 'ㄅㄆㄇㄈㄉㄊ';
/** Cyrillic and Greek letters that look like Latin ones. */
const CONFUSABLE = 'аеорсухАВЕКМНОРСТХαορνΑΒΕΖΗΙΚΜΝΟΡΤΥΧ';
const INVISIBLES = [
  '\u200B', // zero width space
  '\u200C', // zero width non-joiner
  '\u200D', // zero width joiner
  '\u2060', // word joiner
  '\uFEFF', // zero width no-break space
  '\u00AD', // soft hyphen
  '\u202E', // right-to-left override
  '\u202A', // left-to-right embedding
  '\u2066', // left-to-right isolate
  '\u200F', // right-to-left mark
  '\u061C', // Arabic letter mark
  '\u180E', // Mongolian vowel separator
  '\uFE0F', // variation selector 16
  '\u3164', // Hangul filler
  '\u0007', // bell
  '\u2028', // line separator
  '\uE000', // private use
];

describe('normalizeUsername and identityKey', () => {
  it('NFKC folds compatibility forms: full width, ligatures, superscripts', () => {
    expect(normalizeUsername('ａｄｍｉｎ')).toBe('admin');
    expect(normalizeUsername('ﬁnance')).toBe('finance');
    expect(normalizeUsername('user²')).toBe('user2');
  });

  it('compares case-insensitively, beyond ASCII (ß meets ss, Ä meets ä)', () => {
    expect(identityKey('Admin@Appliance.Local')).toBe(identityKey('admin@appliance.local'));
    expect(identityKey('STRASSE')).toBe(identityKey('straße'));
    expect(identityKey('Ärger')).toBe(identityKey('ärger'));
    expect(identityKey('ＡＤＭＩＮ')).toBe('admin');
    expect(identityKey('admin')).not.toBe(identityKey('аdmin'));
  });

  it('is idempotent and case-blind for any text (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (text) => {
        const normalized = normalizeUsername(text);
        expect(normalizeUsername(normalized)).toBe(normalized);
        expect(identityKey(identityKey(text))).toBe(identityKey(text));
        expect(identityKey(text.toUpperCase())).toBe(identityKey(text.toLowerCase()));
      }),
      { seed: SEED, numRuns: 500 },
    );
  });
});

describe('usernameProblem', () => {
  it('accepts plain names, Latin with accents, and names of one script', () => {
    for (const name of ['admin', 'jean.dupont', 'josé', 'Ørsted', 'ölçer', 'иван', 'Σωκράτης'])
      expect(usernameProblem(name), name).toBeNull();
  });

  it('accepts a name written wholly in Japanese (Han + Hiragana + Katakana), and Latin with it', () => {
    expect(usernameProblem('山田たろう')).toBeNull();
    expect(usernameProblem('山田タロー')).toBeNull();
    expect(usernameProblem('やまだ太郎カタカナ')).toBeNull();
    expect(usernameProblem('tanaka田中たろうタロウ')).toBeNull();
    expect(usernameProblem('kim김민수')).toBeNull();
    expect(usernameProblem('wang王ㄅㄆ')).toBeNull();
  });

  it('refuses confusable script mixing: Latin with Cyrillic or Greek, Japanese with Hangul', () => {
    expect(usernameProblem('аdmin')).toBe(USERNAME_MIXED_SCRIPTS_MESSAGE); // Cyrillic а
    expect(usernameProblem('pаypal')).toBe(USERNAME_MIXED_SCRIPTS_MESSAGE);
    expect(usernameProblem('αdmin')).toBe(USERNAME_MIXED_SCRIPTS_MESSAGE); // Greek α
    expect(usernameProblem('иванjohn')).toBe(USERNAME_MIXED_SCRIPTS_MESSAGE);
    expect(usernameProblem('たろう김')).toBe(USERNAME_MIXED_SCRIPTS_MESSAGE);
    expect(usernameProblem('abc山ㄅ김')).toBe(USERNAME_MIXED_SCRIPTS_MESSAGE);
  });

  it('refuses invisible characters anywhere in the name', () => {
    for (const invisible of INVISIBLES) {
      expect(usernameProblem(`ad${invisible}min`), invisible.codePointAt(0)?.toString(16)).toBe(
        USERNAME_INVISIBLE_MESSAGE,
      );
    }
  });

  it('refuses a blank name', () => {
    expect(usernameProblem('   ')).toBe(USERNAME_BLANK_MESSAGE);
  });

  it('accepts any name of one CJK writing system, with or without Latin (property)', () => {
    const japanese = nameOf(HAN + HIRAGANA + KATAKANA);
    const korean = nameOf(HAN + HANGUL);
    const chinese = nameOf(HAN + BOPOMOFO);
    const latin = nameOf(LATIN + DIGITS_AND_MARKS, 0, 8);
    fc.assert(
      fc.property(fc.oneof(japanese, korean, chinese), latin, fc.boolean(), (cjk, l, first) => {
        const name = first ? l + cjk : cjk + l;
        expect(usernameProblem(name)).toBeNull();
      }),
      { seed: SEED, numRuns: 400 },
    );
  });

  it('refuses any Latin name with one confusable Cyrillic or Greek letter in it (property)', () => {
    fc.assert(
      fc.property(
        nameOf(LATIN, 1, 12),
        fc.constantFrom(...charsOf(CONFUSABLE)),
        fc.nat(),
        (latin, foreign, at) => {
          const i = at % (latin.length + 1);
          const name = latin.slice(0, i) + foreign + latin.slice(i);
          expect(usernameProblem(normalizeUsername(name))).toBe(USERNAME_MIXED_SCRIPTS_MESSAGE);
        },
      ),
      { seed: SEED, numRuns: 400 },
    );
  });

  it('refuses any name with an invisible character inserted (property)', () => {
    fc.assert(
      fc.property(
        nameOf(LATIN + HAN + HIRAGANA + DIGITS_AND_MARKS, 1, 12),
        fc.constantFrom(...INVISIBLES),
        fc.nat(),
        (name, invisible, at) => {
          const i = at % (name.length + 1);
          expect(
            usernameProblem(normalizeUsername(name.slice(0, i) + invisible + name.slice(i))),
          ).toBe(USERNAME_INVISIBLE_MESSAGE);
        },
      ),
      { seed: SEED, numRuns: 400 },
    );
  });

  it('knows the scripts it tests (an unknown script name would silently match nothing)', () => {
    const bogus = ['Script_Extensions', 'Bogus'].join('=');
    expect(() => new RegExp(`\\p{${bogus}}`, 'u')).toThrow();
    expect(isHighlyRestrictive('abc')).toBe(true);
    expect(isHighlyRestrictive('абв')).toBe(true);
    expect(isHighlyRestrictive('aбв')).toBe(false);
  });
});
