/**
 * liquidjs, from its ES module build. The package's `main` is one 170 KB CommonJS bundle that
 * Node's ES module loader first scans for its export names (cjs-module-lexer), then compiles as
 * CommonJS: about a third of `pinbot bots validate`'s start-up (bench cli, `--cpu-prof`). The
 * `.mjs` build is the same code (the package's own `module` entry). Types come from the package.
 */
// @ts-expect-error — the .mjs build ships no declaration file of its own: the types are below
import * as esm from 'liquidjs/dist/liquid.node.mjs';
import type * as lib from 'liquidjs';

const liquidjs = esm as typeof lib;

export const { Liquid, Tag, Tokenizer, TypeGuards } = liquidjs;
/** The classes' instance types, under the same names as the values (as the package has them). */
export type Liquid = lib.Liquid;
export type Tag = lib.Tag;
export type Tokenizer = lib.Tokenizer;
export type { FS, Template } from 'liquidjs';
