/**
 * Hugging Face tokenizers compile a `Split` pre-tokenizer's pattern with Oniguruma. JavaScript reads most
 * such patterns as they are (with the `u` flag: `\p{L}`, `\p{N}`, look-ahead), and this translates the rest:
 *
 * - `(?i:…)`, the case-insensitive group of GPT-4-style patterns (`(?i:'s|'t|'re|…)`), which Node 20 lacks:
 *   each letter in it becomes the class of the letters it matches under Unicode case folding ('s' → [sSſ],
 *   'k' → [kKK]), as Oniguruma and JavaScript's /iu match them;
 * - `\A`, `\z` and `\x{…}`; escaped punctuation the `u` flag refuses (`\#`, `\'`, …).
 *
 * What JavaScript cannot do (possessive quantifiers, atomic groups, `\G`, `\K`, `\R`, a class inside a
 * case-insensitive group) is an error naming the pattern. Known difference kept: `\s` is JavaScript's, which
 * takes U+FEFF and not U+0085 where Oniguruma does the reverse (as every JavaScript port of these tokenizers).
 */

/** Characters whose case folding reaches an ASCII letter besides its own two cases. */
const FOLD_EXTRAS = ['\u017f', '\u212a', '\u212b', '\u1e9e', '\u2126'];
const SYNTAX = new Set([...'^$\\.*+?()[]{}|/']);
const JS_ESCAPES = new Set([...'dDwWsSbBpPnrtfv0123456789cuk']);

/** The class of every character `ch` matches case-insensitively. */
function foldClass(ch: string): string {
  const re = new RegExp(`^${ch}$`, 'iu');
  const same = new Set([ch, ch.toLowerCase(), ch.toUpperCase(), ...FOLD_EXTRAS].filter((c) => re.test(c)));
  return same.size === 1 ? ch : `[${[...same].join('')}]`;
}

/** A global, Unicode RegExp for a tokenizer.json Split pattern; `where` names it in errors. */
export function hfPattern(source: string, where: string): RegExp {
  const fail = (why: string): never => {
    throw new Error(`${where}: the pattern ${JSON.stringify(source)} ${why}`);
  };
  let out = '';
  let inClass = false;
  const groups: boolean[] = []; // per open group: case-insensitive?
  const insensitive = () => groups.length > 0 && groups[groups.length - 1];
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      const next = source[i + 1];
      if (next === undefined) fail('ends with a lone backslash');
      i++;
      if (next === 'A' && !inClass) out += '^';
      else if (next === 'z' && !inClass) out += '$';
      else if (next === 'x' && source[i + 1] === '{') {
        const end = source.indexOf('}', i);
        if (end < 0) fail('has an unterminated \\x{');
        out += `\\u{${source.slice(i + 2, end)}}`;
        i = end;
      } else if ((next === 'p' || next === 'P' || next === 'u') && source[i + 1] === '{') {
        const end = source.indexOf('}', i);
        if (end < 0) fail(`has an unterminated \\${next}{`);
        out += `\\${source.slice(i, end + 1)}`;
        i = end;
      } else if (/[A-Za-z0-9]/.test(next)) {
        if (!JS_ESCAPES.has(next) && next !== 'x')
          fail(`uses \\${next}, which JavaScript has no equivalent of`);
        out += `\\${next}`;
      } else if (SYNTAX.has(next) || (inClass && next === '-')) out += `\\${next}`;
      else out += next;
      continue;
    }
    if (inClass) {
      if (c === '[') fail('nests a character class, which JavaScript cannot');
      if (c === ']') inClass = false;
      out += c;
      continue;
    }
    if (c === '[') {
      if (insensitive()) fail('has a character class inside a case-insensitive group (not supported)');
      inClass = true;
      out += c;
      if (source[i + 1] === ']') {
        out += '\\]';
        i++;
      }
      continue;
    }
    if (c === '(') {
      if (source.startsWith('(?i:', i)) {
        groups.push(true);
        out += '(?:';
        i += 3;
        continue;
      }
      if (source.startsWith('(?>', i)) fail('has an atomic group (?>…), which JavaScript cannot do');
      if (/^\(\?[a-z-]*[:)]/.test(source.slice(i)) && !source.startsWith('(?:', i))
        fail(`sets flags inline (${source.slice(i, source.indexOf(')', i) + 1)}), which JavaScript cannot`);
      groups.push(insensitive());
      out += c;
      continue;
    }
    if (c === ')') {
      groups.pop();
      out += c;
      continue;
    }
    if ((c === '*' || c === '+' || c === '?' || c === '}') && source[i + 1] === '+')
      fail(`has a possessive quantifier (${c}+), which JavaScript cannot do`);
    out += insensitive() && /\p{L}/u.test(c) ? foldClass(c) : c;
  }
  try {
    return new RegExp(out, 'gu');
  } catch (err) {
    return fail(`cannot be compiled as a JavaScript regular expression: ${(err as Error).message}`);
  }
}
