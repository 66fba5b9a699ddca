/** A JSON Schema document (draft 2020-12 or 07), as ajv takes it: checked by ajv, not by its type. */
export type JsonSchema = Record<string, unknown>;
