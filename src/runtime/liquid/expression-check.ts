import { Tokenizer, TypeGuards, type Liquid } from './liquidjs.js';

/** What is wrong with a boolean expression, and how to write it instead. */
export interface ExpressionProblem {
  message: string;
  hint: string;
}

/** Where the expression is checked: bot conditions and scenario asserts say different things. */
export interface ExpressionWhere {
  /** How to compute a value first, in this kind of file (`set:` a variable, an `all:` list…). */
  computeFirst: string;
  /** How to split `a and b` / `a or b` into separate conditions, in this kind of file. */
  split: string;
}

const COMPARISONS = new Set(['==', '!=', '<', '>', '<=', '>=', 'contains']);
const ORDERINGS = new Set(['<', '>', '<=', '>=']);
const NUMBER = /^-?\d+(\.\d+)?$/;

/**
 * The grammar of a Liquid boolean expression (a bot's `liquid:` condition, a scenario's
 * `assert:` and `if:`, a template's `{% if %}`), refusing every form liquidjs reads without an
 * error but not as written:
 *
 * - an operator without its operands (`event.amount >`: always false), two values without one
 *   (`event.amount gt 5`);
 * - filters after a comparison: Liquid applies them to the **result** of the whole expression,
 *   not to the last value (`event.amount < vars.limit | default: 20` is `20`, true for any amount);
 * - two comparisons in a row (`a == b == c` is `a == (b == c)`);
 * - `and` before `or`: Liquid groups from the right (`a and b or c` is `a and (b or c)`);
 * - a number in quotes after `<`, `>`, `<=`, `>=` (text is compared as text: `"25" > "5"` is false).
 *
 * Returns what is wrong, with the way to write it; undefined when the expression is fine.
 *
 * @example expressionProblem(liquid, 'event.amount < vars.limit | default: 20', where)?.message
 */
export function expressionProblem(liquid: Liquid, expr: string, where: ExpressionWhere): ExpressionProblem | undefined {
  const t = new Tokenizer(expr, liquid.options.operators);
  let tokens;
  let filterAt = -1;
  let filters: unknown[] = [];
  try {
    tokens = [...t.readExpressionTokens()];
    t.skipBlank();
    if (t.peek() === '|') {
      filterAt = t.p;
      filters = t.readFilters();
    }
    t.skipBlank();
  } catch (err) {
    return { message: (err as Error).message.replace(/, line:\d+, col:\d+$/, ''), hint: GRAMMAR };
  }
  if (tokens.length === 0) return { message: 'the expression is empty', hint: GRAMMAR };
  if (!t.end())
    return {
      message: `unexpected "${expr.slice(t.p)}"`,
      hint: `${GRAMMAR}; Liquid has no parentheses (only ranges like (1..5))`,
    };
  const text = (tok: { begin: number; end: number }) => expr.slice(tok.begin, tok.end);
  let wantOperand = true;
  let lastJoin: string | undefined;
  let comparisons = 0;
  let operators = 0;
  for (const [i, tok] of tokens.entries()) {
    const isOp = TypeGuards.isOperatorToken(tok);
    const word = text(tok);
    if (wantOperand) {
      if (isOp && word === 'not') continue; // a prefix: `not vars.open`
      if (isOp) return { message: `expected a value before "${word}"`, hint: GRAMMAR };
      wantOperand = false;
      continue;
    }
    if (!isOp)
      return {
        message: `expected an operator (==, !=, <, >, <=, >=, contains, and, or) before "${word}"`,
        hint: GRAMMAR,
      };
    operators++;
    wantOperand = true;
    if (COMPARISONS.has(word)) {
      if (++comparisons > 1)
        return {
          message:
            `two comparisons in a row ("${expr.slice(tokens[0]!.begin, tok.end)} …"): ` +
            `Liquid reads a == b == c as a == (b == c)`,
          hint: `join comparisons with and / or: a == b and b == c`,
        };
      const next = tokens[i + 1];
      if (ORDERINGS.has(word) && next && TypeGuards.isQuotedToken(next) && NUMBER.test(next.content)) {
        return {
          message:
            `"${word} ${text(next)}" compares with the text ${text(next)}, and text is ` +
            `compared letter by letter ("25" < "5")`,
          hint: `write the number without quotes: ${word} ${next.content}`,
        };
      }
    } else if (word === 'and' || word === 'or') {
      comparisons = 0;
      if (word === 'or' && lastJoin === 'and') {
        return {
          message: `"and" before "or": Liquid groups from the right, so a and b or c means a and (b or c)`,
          hint: `put the or first (c or a and b means c or (a and b)), or ${where.split}`,
        };
      }
      lastJoin = word;
    }
  }
  if (wantOperand)
    return { message: `the expression ends after the operator "${text(tokens.at(-1)!)}"`, hint: GRAMMAR };
  if (filterAt !== -1 && filters.length === 0)
    return {
      message: `"|" with no filter after it`,
      hint: 'remove the "|", or name a filter: event.content | downcase',
    };
  if (filterAt !== -1 && operators > 0) {
    const shown = expr.slice(filterAt).trim();
    return {
      message:
        `a filter after a comparison ("${shown}") applies to the result of the whole ` +
        `expression, not to the value before it: Liquid reads it as ` +
        `(${expr.slice(0, filterAt).trim()}) ${shown}, which is not what it says`,
      hint: `a condition takes no filter after an operator: ${where.computeFirst}`,
    };
  }
  return undefined;
}

const GRAMMAR =
  'write values joined by operators, like event.amount > 5 and vars.open (==, !=, <, ' +
  '>, <=, >=, contains, and, or, not)';

/** How bot files compute a value before comparing it, or split a condition. */
export const BOT_EXPRESSIONS: ExpressionWhere = {
  computeFirst:
    'give a missing variable its value in vars: (vars: { limit: 20 }) and compare it ' +
    'as it is (event.amount < vars.limit); use .size, .first, .last without a filter ' +
    '(event.content.size > 3); or set: the computed value in a step and compare it in ' +
    'a choose: branch',
  split: 'write the parts as separate conditions (if: [ … ] all hold; any: [ … ] for or)',
};

/** The tags whose argument is a boolean expression. */
const CONDITION_TAGS = new Set(['if', 'elsif', 'unless']);

/**
 * The problems of the `{% if %}`, `{% elsif %}`, `{% unless %}` and `{% assign %}` expressions
 * of a template, in `{% liquid %}` blocks too
 * (see {@link expressionProblem}), each with the tag as written and its place in the template.
 * The template must already parse.
 */
export function tagExpressionProblems(
  liquid: Liquid,
  text: string,
  where: ExpressionWhere,
): Array<ExpressionProblem & { tag: string; line: number; col: number }> {
  const out: Array<ExpressionProblem & { tag: string; line: number; col: number }> = [];
  let tokens;
  try {
    tokens = new Tokenizer(text, liquid.options.operators).readTopLevelTokens(liquid.options);
  } catch {
    return out; // the parser reports it
  }
  for (const tok of tokens) {
    if (!TypeGuards.isTagToken(tok)) continue;
    // {% liquid %} holds one tag a line: `if a > b`, `assign x = …`
    const tags =
      tok.name === 'liquid'
        ? tok.args
            .split('\n')
            .map((l) => /^\s*(\w+)\s*([\s\S]*)$/.exec(l))
            .filter((m) => m !== null)
            .map((m) => ({ name: m[1]!, args: m[2]! }))
        : [{ name: tok.name, args: tok.args }];
    for (const t of tags) {
      // `assign x = a > b | …` computes a boolean the same way an if does
      const expr = CONDITION_TAGS.has(t.name)
        ? t.args
        : t.name === 'assign'
          ? /^[^=]*=([\s\S]*)$/.exec(t.args)?.[1]
          : undefined;
      if (expr === undefined) continue;
      const bad = expressionProblem(liquid, expr, where);
      if (!bad) continue;
      const [line, col] = tok.getPosition();
      out.push({
        ...bad,
        tag: tok.name === 'liquid' ? `${t.name} ${t.args.trim()}` : tok.getText(),
        line: line ?? 1,
        col: col ?? 1,
      });
    }
  }
  return out;
}
