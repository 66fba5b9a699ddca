import type { ErrorObject } from 'ajv';
import { isNode, LineCounter, parseDocument, visit, type Document } from 'yaml';

/** A YAML document with the means to turn a data path into `line:col`. */
export interface LocatedYaml {
  file: string;
  /** The text the document was parsed from. */
  source: string;
  doc: Document.Parsed;
  lines: LineCounter;
}

/** A problem in a user-written file, with its position, what was expected and a hint. */
export interface FileProblem {
  file: string;
  line: number;
  col: number;
  path: string;
  message: string;
  hint?: string;
}

/** Formats a problem as `file:line:col: path: message (hint)`. */
export function formatProblem(p: FileProblem): string {
  const where = `${p.file}:${p.line}:${p.col}`;
  const path = p.path ? `${p.path}: ` : '';
  return `${where}: ${path}${p.message}${p.hint ? ` — ${p.hint}` : ''}`;
}

/**
 * Where an unclosed quoted string or flow collection starts: the YAML parser reports those where
 * it gave up (often the end of the file), which is not where the mistake is. Internal.
 */
function opening(text: string, open: string): { line: number; col: number } | undefined {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    // a value that starts with the opening character: after `key:`, `- `, or at the start
    const re =
      open === '"' || open === "'"
        ? new RegExp(`(^\\s*|:\\s+|-\\s+|[\\[{,]\\s*)${open}`, 'g')
        : new RegExp(`(:\\s+|-\\s+|^\\s*)\\${open}`, 'g');
    for (const m of line.matchAll(re)) {
      const at = m.index! + m[0].length - 1;
      const rest = line.slice(at + 1);
      const closed =
        open === '"' ? /(^|[^\\])"/.test(rest) : open === "'" ? /'/.test(rest) : balanced(line.slice(at), open);
      if (!closed) return { line: i + 1, col: at + 1 };
    }
  }
  return undefined;
}

/** Whether the `{`/`[` at the start of `s` is closed on the same line. Internal. */
function balanced(s: string, open: string): boolean {
  const close = open === '{' ? '}' : ']';
  let depth = 0;
  let quote = '';
  for (const ch of s) {
    if (quote) {
      if (ch === quote) quote = '';
      continue;
    }
    if (ch === '"' || ch === "'") quote = ch;
    else if (ch === open) depth++;
    else if (ch === close && --depth === 0) return true;
  }
  return false;
}

/**
 * An unquoted value holding `[`, `]`, `{` or `}` inside a `{ … }` mapping
 * (`save: { tx: transactions[0].id }`): YAML reads the bracket as the start or end of a
 * collection, and the parser reports a cascade of errors after it. The value, when the
 * character at `at` is such a bracket in the middle of a plain value. Internal.
 */
function bracketInPlainValue(text: string, at: number): string | undefined {
  const ch = text[at];
  if (!ch || !'[]{}'.includes(ch) || at === 0 || /[\s,[{:]/.test(text[at - 1]!)) return undefined;
  const lineStart = text.lastIndexOf('\n', at - 1) + 1;
  const before = text.slice(lineStart, at);
  if (!before.includes('{') && !before.includes('[')) return undefined;
  const start = lineStart + Math.max(before.lastIndexOf(' '), before.lastIndexOf(','), before.lastIndexOf('{')) + 1;
  let end = at;
  let depth = 0;
  for (; end < text.length && text[end] !== '\n'; end++) {
    const c = text[end]!;
    if (c === '[') depth++;
    else if (c === ']' && depth > 0) depth--;
    else if (depth === 0 && (c === ',' || c === '}' || c === ']' || c === ' ')) break;
  }
  return text.slice(start, end);
}

/** A syntax error at its cause, with a fix in words. Internal. */
function syntaxProblem(
  file: string,
  text: string,
  lines: LineCounter,
  e: { code: string; pos: [number, number]; message: string },
): FileProblem {
  const pos = lines.linePos(e.pos[0]);
  const message = e.message.split('\n')[0]!;
  const base = { file, line: pos.line, col: pos.col, path: '', message, hint: 'fix the YAML syntax' };
  const value = bracketInPlainValue(text, e.pos[0]);
  if (value) {
    const what = /\[\d+\]|\w\.\w/.test(value) ? 'path' : 'value';
    return {
      ...base,
      message:
        `the "${text[e.pos[0]]}" in ${value} is read as YAML syntax: inside { … } a ` +
        `value with brackets must be quoted`,
      hint: `quote the ${what}: "${value}"`,
    };
  }
  const quote = /Missing closing (["'])quote/.exec(message)?.[1];
  if (quote) {
    const at = opening(text, quote);
    return at
      ? {
          ...base,
          ...at,
          message: `this ${quote === '"' ? 'double' : 'single'}-quoted text is never closed`,
          hint: `add the closing ${quote} at the end of the text`,
        }
      : base;
  }
  const flow = /^Flow (map|sequence)/.exec(message)?.[1];
  if (flow) {
    const open = flow === 'map' ? '{' : '[';
    const at = opening(text, open);
    return at
      ? {
          ...base,
          ...at,
          message: `this ${open} is never closed`,
          hint: `add ${open === '{' ? '}' : ']'} where the ${flow === 'map' ? 'mapping' : 'list'} ends`,
        }
      : base;
  }
  if (e.code === 'BLOCK_AS_IMPLICIT_KEY' || e.code === 'MULTILINE_IMPLICIT_KEY') {
    return {
      ...base,
      hint:
        'a ": " inside a value starts a mapping: quote the value (e.g. reply: "Note: ' +
        'open at 9"), or check the indentation of this line',
    };
  }
  if (e.code === 'TAB_AS_INDENT') return { ...base, hint: 'indent with spaces, not tabs' };
  return base;
}

/** Most alias expansions a file may make (`*name`): more is an alias bomb (a small file made huge). */
export const MAX_ALIAS_COUNT = 100;

/**
 * Parses YAML text; syntax errors come back as problems at their cause. Only the first syntax
 * error is reported: the parser's later ones are, nearly always, the same mistake seen again.
 * A file whose aliases expand too much is refused at its first alias.
 */
export function parseYaml(
  file: string,
  text: string,
): { located: LocatedYaml; value: unknown; problems: FileProblem[] } {
  const lines = new LineCounter();
  // logLevel error: what yaml would warn about on stderr (an unquoted {{ … }} is a key that is a
  // mapping) is reported by the checks at file:line:col, not leaked as a Node warning
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true, logLevel: 'error' });
  const located = { file, source: text, doc, lines };
  if (doc.errors.length) {
    const first = syntaxProblem(file, text, lines, doc.errors[0]!);
    const more = doc.errors.length - 1;
    // a cause recognised above explains the parser's cascade; an unknown one says it follows
    if (more && first.hint === 'fix the YAML syntax')
      first.hint =
        `${first.hint} (the parser reported ${more} more error${more === 1 ? '' : 's'} ` +
        `after this one; most follow from it)`;
    return { located, value: undefined, problems: [first] };
  }
  try {
    return { located, value: doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }), problems: [] };
  } catch (err) {
    // yaml refuses an alias bomb with a ReferenceError; anything else is a bug to show as it is
    if (!(err instanceof ReferenceError)) throw err;
    let offset = 0;
    visit(doc, { Alias: (_k, node) => ((offset = node.range?.[0] ?? 0), visit.BREAK) });
    const pos = lines.linePos(offset);
    return {
      located,
      value: undefined,
      problems: [
        {
          file,
          line: pos.line,
          col: pos.col,
          path: '',
          message:
            `the aliases (*name) of this file expand to more than ${MAX_ALIAS_COUNT} ` +
            `copies: refused (a few lines made huge is an alias bomb)`,
          hint: 'write the values out, or use fewer aliases',
        },
      ],
    };
  }
}

/** Splits an ajv instancePath (`/a/0/b`) into segments. */
export function pathSegments(instancePath: string): Array<string | number> {
  if (!instancePath) return [];
  return instancePath
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

/** The `line:col` of the node at `path` (or of its nearest existing parent; a key if `key`). */
export function locate(
  y: LocatedYaml,
  path: ReadonlyArray<string | number>,
  key = false,
): { line: number; col: number } {
  let p = [...path];
  while (p.length >= 0) {
    const node = p.length ? y.doc.getIn(p, true) : y.doc.contents;
    if (isNode(node) && node.range) {
      let offset = node.range[0];
      if (key && p.length) {
        const parent = p.length > 1 ? y.doc.getIn(p.slice(0, -1), true) : y.doc.contents;
        const pair = (parent as { items?: Array<{ key: unknown }> } | null)?.items?.find(
          (it) => isNode(it.key) && (it.key as { value?: unknown }).value === p[p.length - 1],
        );
        if (pair && isNode(pair.key) && pair.key.range) offset = pair.key.range[0];
      }
      const pos = y.lines.linePos(offset);
      return { line: pos.line, col: pos.col };
    }
    if (p.length === 0) break;
    p = p.slice(0, -1);
  }
  return { line: 1, col: 1 };
}

/**
 * The `line:col` of `text` inside the scalar at `path` (e.g. a `{% include %}` tag or an
 * `${env:NAME}` reference in a string), or of the scalar itself when `text` is not written
 * verbatim in it (escapes).
 */
export function locateText(
  y: LocatedYaml,
  path: ReadonlyArray<string | number>,
  text: string,
): { line: number; col: number } {
  const node = path.length ? y.doc.getIn(path, true) : y.doc.contents;
  if (text && isNode(node) && node.range) {
    const at = y.source.slice(node.range[0], node.range[1]).indexOf(text);
    if (at >= 0) {
      const pos = y.lines.linePos(node.range[0] + at);
      return { line: pos.line, col: pos.col };
    }
  }
  return locate(y, path);
}

/** Turns ajv errors over a YAML document into problems with positions and plain messages. */
export function ajvProblems(y: LocatedYaml, errors: ErrorObject[] | null | undefined): FileProblem[] {
  const out: FileProblem[] = [];
  const seen = new Set<string>();
  for (const e of errors ?? []) {
    const segs = pathSegments(e.instancePath);
    let message = e.message ?? 'is invalid';
    let hint: string | undefined;
    let at = segs;
    let onKey = false;
    switch (e.keyword) {
      case 'additionalProperties': {
        const extra = (e.params as { additionalProperty: string }).additionalProperty;
        at = [...segs, extra];
        onKey = true;
        message = `unknown key "${extra}"`;
        hint = 'remove it or check its spelling';
        break;
      }
      case 'type': {
        const type = String((e.params as { type: string }).type).replace(/,/g, ' or ');
        message = `expected ${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
        // ajv's `verbose` option puts the offending value in `data`.
        if ('data' in e) hint = `found ${JSON.stringify(e.data)}`;
        break;
      }
      case 'enum':
        message = `expected one of ${(e.params as { allowedValues: unknown[] }).allowedValues
          .map((v) => JSON.stringify(v))
          .join(', ')}`;
        break;
      case 'required':
        message = `missing required key "${(e.params as { missingProperty: string }).missingProperty}"`;
        hint = 'add it';
        break;
      case 'pattern':
        message = `expected a value matching ${(e.params as { pattern: string }).pattern}`;
        break;
      default:
        break;
    }
    const pos = locate(y, at, onKey);
    const path = at.map(String).join('.');
    const id = `${pos.line}:${pos.col}:${message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push({ file: y.file, line: pos.line, col: pos.col, path, message, hint });
  }
  return out;
}
