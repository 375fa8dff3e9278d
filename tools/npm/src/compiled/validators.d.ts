// Declarations of dist/compiled/validators.js, which scripts/build.mjs writes with ajv's
// standalone code generation from schema/json (one validator per frame type, compiled at build
// time: nothing is evaluated at run time).

/** One ajv error, as the precompiled code reports it. */
export interface CompiledError {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  params: { readonly [key: string]: unknown };
  message?: string;
}

/** A precompiled validator: true when valid, else false with `errors` set. */
export interface CompiledValidator {
  (data: unknown): boolean;
  errors?: CompiledError[] | null;
}

/** The validator of each frame type, by wire name. */
export declare const byType: { readonly [type: string]: CompiledValidator | undefined };
