/**
 * The TypeScript type of a JSON Schema literal, for plugin authors: `Infer<{ type: 'object',
 * properties: { to: { type: 'string' } }, required: ['to'] }>` is `{ to: string }`. It covers
 * what plugin schemas use (type, properties, required, items, enum, const, anyOf, oneOf,
 * additionalProperties; `anyOf`/`oneOf` beside a `type` only constrain it) and stays cheap for
 * the compiler, so a plugin with many actions
 * type-checks fast. Properties with a `default` count as present (pinbot fills defaults in).
 * An object without `additionalProperties` is typed as closed (extra keys are not typed).
 */

/** The JSON types a schema names. */
export type SchemaType = 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'array' | 'object';

/** A JSON Schema (the keywords pinbot types; any other keyword is allowed and checked at run time). */
export interface SchemaObject {
  type?: SchemaType | readonly SchemaType[];
  properties?: { readonly [key: string]: Schema };
  required?: readonly string[];
  items?: Schema;
  enum?: readonly unknown[];
  const?: unknown;
  anyOf?: readonly Schema[];
  oneOf?: readonly Schema[];
  additionalProperties?: boolean | Schema;
  default?: unknown;
  description?: string;
  [keyword: string]: unknown;
}

export type Schema = SchemaObject | boolean;

type Flat<T> = { [K in keyof T]: T[K] } & {};

type Present<S> = S extends { properties: infer P }
  ?
      | (S extends { required: readonly (infer R)[] } ? R : never)
      | { [K in keyof P]: P[K] extends { default: unknown } ? K : never }[keyof P]
  : never;

type ObjectOf<S, D extends number[]> = Flat<
  (S extends { properties: infer P }
    ? { -readonly [K in keyof P as K extends Present<S> ? K : never]: TypeOf<P[K], D> } & {
        -readonly [K in keyof P as K extends Present<S> ? never : K]?: TypeOf<P[K], D>;
      }
    : {}) &
    (S extends { additionalProperties: false }
      ? {}
      : S extends { additionalProperties: infer A }
        ? { [key: string]: A extends true ? unknown : TypeOf<A, D> }
        : S extends { properties: object }
          ? {}
          : { [key: string]: unknown })
>;

type OfType<T, S, D extends number[]> = T extends 'string'
  ? string
  : T extends 'number' | 'integer'
    ? number
    : T extends 'boolean'
      ? boolean
      : T extends 'null'
        ? null
        : T extends 'array'
          ? S extends { items: infer I }
            ? Array<TypeOf<I, D>>
            : unknown[]
          : T extends 'object'
            ? ObjectOf<S, D>
            : unknown;

/** The type a schema describes (`D` bounds the depth; past 8 levels it is `unknown`). */
export type TypeOf<S, D extends number[] = []> = D['length'] extends 8
  ? unknown
  : S extends { const: infer C }
    ? C
    : S extends { enum: readonly (infer E)[] }
      ? E
      : S extends { type: infer T }
        ? T extends readonly (infer U)[]
          ? OfType<U, S, [...D, 1]>
          : OfType<T, S, [...D, 1]>
        : S extends { properties: object }
          ? ObjectOf<S, [...D, 1]>
          : S extends { anyOf: readonly (infer X)[] }
            ? TypeOf<X, [...D, 1]>
            : S extends { oneOf: readonly (infer X)[] }
              ? TypeOf<X, [...D, 1]>
              : unknown;

/** A deep copy. Internal: schemas inferred inside definePlugin's mapped types resolve lazily. */
type Spelled<S> = S extends object ? { [K in keyof S]: Spelled<S[K]> } : S;

/** The TypeScript type a JSON Schema describes (`unknown` when the schema is not a literal). */
export type Infer<S> = Schema extends S ? unknown : TypeOf<Spelled<S>>;
