/**
 * Names for the schemas of the OpenAPI document (components.schemas). A
 * schema file marks an object with `named('Invoice', {...})`; the document
 * builder (src/api/openapi.ts) then writes every occurrence of that very
 * object as `$ref: '#/components/schemas/Invoice'`, so generated clients get
 * one named type per resource instead of anonymous copies. Validation is
 * unaffected: ajv sees the same object.
 */
import type { JsonSchema } from './route.ts';

const names = new WeakMap<object, string>();

/** Marks `schema` as components.schemas[name] (returns it unchanged). */
export function named<T extends JsonSchema>(name: string, schema: T): T {
  names.set(schema, name);
  return schema;
}

/** The component name of a schema marked with `named`, if any. */
export function nameOf(schema: object): string | undefined {
  return names.get(schema);
}

/**
 * An object schema of a response: every property is `required` (the API
 * always sends every field of a representation, null when empty) unless
 * listed in `optional`.
 */
export function representation(
  properties: Record<string, JsonSchema>,
  options: { optional?: readonly string[]; description?: string; nullable?: boolean } = {},
): JsonSchema {
  const optional = new Set(options.optional ?? []);
  return {
    type: options.nullable ? ['object', 'null'] : 'object',
    ...(options.description ? { description: options.description } : {}),
    required: Object.keys(properties).filter((k) => !optional.has(k)),
    properties,
  };
}
