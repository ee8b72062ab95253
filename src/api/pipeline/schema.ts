/**
 * The JSON schemas of the routes, as ajv validates them and OpenAPI shows
 * them: every object schema that does not say otherwise gets
 * `additionalProperties: false`, so an unknown or misspelt field is a
 * VALIDATION_ERROR instead of being silently dropped (docs/api-decisions.md "Errors").
 */
import { named, nameOf } from '../openapi-named.ts';
import type { JsonSchema, RouteSpec } from '../route.ts';

const COMPOSITE = ['anyOf', 'oneOf', 'allOf'] as const;

function isObjectSchema(s: JsonSchema): boolean {
  const t = s.type;
  return t === 'object' || (Array.isArray(t) && t.includes('object')) || (t === undefined && 'properties' in s);
}

/** A copy of `schema` with closed objects (schemas are never mutated in place). */
export function closeObjects(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...schema };
  const open = ['additionalProperties', 'unevaluatedProperties', 'patternProperties'].some((k) => k in out);
  // allOf members are merged by the validator, so closing the parent would reject the members' fields.
  if (isObjectSchema(out) && !open && !('allOf' in out)) out.additionalProperties = false;
  if (out.properties && typeof out.properties === 'object') {
    out.properties = Object.fromEntries(
      Object.entries(out.properties as Record<string, JsonSchema>).map(([k, v]) => [k, closeObjects(v)]),
    );
  }
  if (out.items && typeof out.items === 'object' && !Array.isArray(out.items)) out.items = closeObjects(out.items as JsonSchema);
  for (const k of COMPOSITE) {
    if (Array.isArray(out[k]) && k !== 'allOf') out[k] = (out[k] as JsonSchema[]).map(closeObjects);
  }
  const name = nameOf(schema); // the closed copy is what OpenAPI shows under that name
  return name ? named(name, out) : out;
}

const EMPTY_OBJECT: JsonSchema = { type: 'object', properties: {}, additionalProperties: false };

/** The body schema of a route (a route without one takes no body fields). */
export function bodySchema(spec: RouteSpec): JsonSchema {
  return spec.body ? closeObjects(spec.body) : EMPTY_OBJECT;
}

/** The query schema of a route (a route without one takes no query parameters). */
export function querySchema(spec: RouteSpec): JsonSchema {
  return spec.query ? closeObjects(spec.query) : EMPTY_OBJECT;
}

/** Express path params (':id') in order. */
export function pathParams(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]);
}

/** Params that carry resource ids, hence UUIDs (docs/api-decisions.md "Identifiers, dates and money"). */
export function isIdParam(name: string): boolean {
  return name === 'id' || /(Id|_id)$/.test(name);
}
