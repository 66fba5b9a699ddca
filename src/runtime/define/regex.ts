import { RE2JS } from 're2js';

/**
 * Regular expressions of bot files (`matches:`), run by a linear-time engine (re2js, a pure
 * JavaScript port of RE2): matching costs time proportional to the text whatever the pattern,
 * so a pattern like `^([A-Za-z]+\s?)*$` cannot stall the process the way a backtracking engine
 * does. The price is RE2's syntax: no backreferences and no lookaround.
 */
export interface BotRegex {
  /** True when the pattern matches somewhere in `text` (like `RegExp.prototype.test`). */
  test(text: string): boolean;
  /** The named groups of the first match (`(?<item>…)`), `{}` without any; undefined when it does not match. */
  groups(text: string): Record<string, string> | undefined;
}

/** Why a pattern cannot be used, with what to do. */
export interface RegexProblem {
  message: string;
  hint: string;
}

const FLAG_BITS: Record<string, number> = {
  i: RE2JS.CASE_INSENSITIVE,
  m: RE2JS.MULTILINE,
  s: RE2JS.DOTALL,
  u: 0, // RE2 always reads text as Unicode code points
};

const UNSUPPORTED_HINT =
  'rewrite the pattern without it (e.g. match both spellings with an alternation), or ' +
  'test the text with a liquid: condition';

/**
 * JavaScript's `\uXXXX` and `\u{X…}` escapes in RE2's spelling (`\x{XXXX}`); everything else is
 * left as written. Internal.
 */
function toRe2Syntax(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const rest = pattern.slice(i + 1);
    const fixed = /^u([0-9A-Fa-f]{4})/.exec(rest) ?? /^u\{([0-9A-Fa-f]{1,6})\}/.exec(rest);
    if (fixed) {
      out += `\\x{${fixed[1]}}`;
      i += fixed[0].length;
    } else {
      out += c + (pattern[i + 1] ?? '');
      i++;
    }
  }
  return out;
}

/** The first construct a linear-time engine cannot run (outside character classes). Internal. */
function unsupported(pattern: string): string | undefined {
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const next = pattern[i + 1] ?? '';
      if (!inClass && /[1-9]/.test(next)) return `a backreference (\\${next})`;
      if (!inClass && next === 'k' && pattern[i + 2] === '<') return 'a named backreference (\\k<…>)';
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '(' && pattern[i + 1] === '?') {
      const kind = pattern.slice(i + 2, i + 4);
      if (kind.startsWith('=')) return 'a lookahead ((?=…))';
      if (kind.startsWith('!')) return 'a negative lookahead ((?!…))';
      if (kind === '<=') return 'a lookbehind ((?<=…))';
      if (kind === '<!') return 'a negative lookbehind ((?<!…))';
    }
  }
  return undefined;
}

function flagBits(flags: string): number {
  let bits = 0;
  for (const f of flags) {
    const bit = FLAG_BITS[f];
    if (bit === undefined) throw new Error(`unknown regular expression flag "${f}"`);
    bits |= bit;
  }
  return bits;
}

/**
 * What is wrong with a `matches:` pattern (and its flags), or undefined when the linear-time
 * engine runs it.
 *
 * @example regexProblem('(a)\\1') // { message: 'the pattern uses a backreference (\\1), …', hint }
 */
export function regexProblem(pattern: string, flags = ''): RegexProblem | undefined {
  const construct = unsupported(pattern);
  if (construct)
    return {
      message: `the pattern uses ${construct}, which the linear-time regular expression engine cannot run`,
      hint: UNSUPPORTED_HINT,
    };
  try {
    RE2JS.compile(toRe2Syntax(pattern), flagBits(flags));
    return undefined;
  } catch (err) {
    const reason = String((err as Error).message).replace(/^error parsing regexp: /, '');
    return {
      message: `invalid regular expression: ${reason}`,
      hint:
        "bots use RE2 syntax (JavaScript's, less backreferences and lookaround); see " +
        'docs/bots.md "Regular expressions"',
    };
  }
}

/**
 * Compiles a `matches:` pattern for the linear-time engine; throws when `regexProblem` has one.
 *
 * @example compileRegex('\\bhours\\b', 'i').test('Opening HOURS?') // true
 */
export function compileRegex(pattern: string, flags = ''): BotRegex {
  const problem = regexProblem(pattern, flags);
  if (problem) throw new Error(`${problem.message} — ${problem.hint}`);
  const re = RE2JS.compile(toRe2Syntax(pattern), flagBits(flags));
  const names = Object.keys(re.namedGroups() ?? {});
  return {
    test: (text) => re.test(text),
    groups(text) {
      if (names.length === 0) return re.test(text) ? {} : undefined;
      const m = re.matcher(text);
      if (!m.find()) return undefined;
      const out: Record<string, string> = {};
      for (const n of names) {
        const g = m.group(n);
        if (g !== null && g !== undefined) out[n] = g;
      }
      return out;
    },
  };
}
