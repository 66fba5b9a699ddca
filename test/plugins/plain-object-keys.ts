import { resolve } from 'node:path';
import ts from 'typescript';

/** A lookup `obj[key]` where `key` is any string and `obj` a plain object. */
export interface PlainObjectLookup {
  /** `plugins/webhook_in.ts:48:22` */
  where: string;
  /** The expression as written: `ctx.config.secrets?.[bot]`. */
  text: string;
}

/** Whether `e` is a literal key (`obj['a']`, `obj[0]`). Internal. */
const literal = (e: ts.Expression) => ts.isStringLiteralLike(e) || ts.isNumericLiteral(e);

/** Whether an identifier was declared as `Object.create(null)` (no inherited members to reach). Internal. */
function bareObject(checker: ts.TypeChecker, e: ts.Expression): boolean {
  if (!ts.isIdentifier(e)) return false;
  const decl = checker.getSymbolAtLocation(e)?.valueDeclaration;
  const init = decl && ts.isVariableDeclaration(decl) ? decl.initializer : undefined;
  return !!init && /^Object\.create\(\s*null\s*\)/.test(init.getText());
}

/** Whether every part of the key's type is a number or a string literal (a closed set). Internal. */
function closedKey(checker: ts.TypeChecker, type: ts.Type): boolean {
  const parts = type.isUnion() ? type.types : [type];
  return parts.every(
    (t) =>
      (t.flags &
        (ts.TypeFlags.NumberLike | ts.TypeFlags.StringLiteral | ts.TypeFlags.EnumLike | ts.TypeFlags.Undefined)) !==
        0 ||
      (t.flags & ts.TypeFlags.TypeParameter && closedKey(checker, checker.getBaseConstraintOfType(t) ?? t)),
  );
}

/**
 * Whether lookups in `type` cannot reach an inherited member of Object.prototype: arrays,
 * strings, typed arrays. Internal. */
function indexedByPosition(checker: ts.TypeChecker, type: ts.Type): boolean {
  const t = checker.getNonNullableType(type);
  const parts = t.isUnion() ? t.types : [t];
  return parts.every(
    (p) =>
      checker.isArrayType(p) ||
      checker.isTupleType(p) ||
      (p.flags & ts.TypeFlags.StringLike) !== 0 ||
      /^(?:Uint8|Int8|Uint16|Int16|Uint32|Int32|Float32|Float64)Array|Buffer$/.test(checker.typeToString(p)),
  );
}

/**
 * Finds `obj[key]` in `files` where `key` may be any string (a name from a URL, a message, a
 * header…) and `obj` is a plain object: `key` may then be `constructor`, `__proto__`,
 * `toString`… and reach what every object inherits (issue 21, item 1). Lookups in arrays and
 * strings, by number or by a closed set of literal keys, and in objects made with
 * `Object.create(null)` pass; use a Map (or `Object.hasOwn`) for the rest. `extra` adds files
 * that are not on disk (path → text), to show what the check finds.
 *
 * @example findPlainObjectLookups(['plugins/faq.ts']) // [] when clean
 */
export function findPlainObjectLookups(files: string[], extra: Record<string, string> = {}): PlainObjectLookup[] {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
  };
  const host = ts.createCompilerHost(options);
  const virtual = new Map(Object.entries(extra).map(([p, text]) => [resolve(p), text]));
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, lang, ...rest) =>
    virtual.has(resolve(name))
      ? ts.createSourceFile(name, virtual.get(resolve(name))!, lang)
      : getSourceFile(name, lang, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => virtual.has(resolve(name)) || fileExists(name);
  const roots = [...files.map((f) => resolve(f)), ...virtual.keys()];
  const program = ts.createProgram(roots, options, host);
  const checker = program.getTypeChecker();
  const found: PlainObjectLookup[] = [];
  for (const root of roots) {
    const sf = program.getSourceFile(root);
    if (!sf) throw new Error(`${root}: not found`);
    const visit = (node: ts.Node): void => {
      if (ts.isElementAccessExpression(node) && !literal(node.argumentExpression)) {
        const key = checker.getTypeAtLocation(node.argumentExpression);
        const obj = checker.getTypeAtLocation(node.expression);
        if (!closedKey(checker, key) && !indexedByPosition(checker, obj) && !bareObject(checker, node.expression)) {
          const { line, character } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
          found.push({
            where: `${ts.sys.resolvePath(sf.fileName).slice(process.cwd().length + 1)}:${line + 1}:${character + 1}`,
            text: node.getText(sf),
          });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return found;
}
