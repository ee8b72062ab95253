/**
 * Step 6 (docs/api-decisions.md "Keys, plans and quotas"): the body is parsed as JSON only now, after
 * authentication; then ajv checks body and query against the route's
 * schemas (query strings coerced to the schema's types and defaults filled
 * in). Errors become VALIDATION_ERROR with readable field paths:
 * instancePath "/items/0/quantity" -> "items[0].quantity".
 */
import type { Request } from 'express';
import _Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import _addFormats from 'ajv-formats';
import { isUuid } from '../../shared/ids.ts';
import { notFound, validationError, type DomainError, type FieldError } from '../../shared/errors.ts';
import { parseIfMatch } from './context.ts';
import { unstorableFields } from './storable.ts';
import { parseJsonBody } from '../body.ts';
import type { BodyCheck, JsonSchema, RouteSpec } from '../route.ts';
import { bodySchema, isIdParam, pathParams, querySchema } from './schema.ts';

const Ajv2020 = _Ajv2020 as unknown as typeof _Ajv2020.default;
const addFormats = _addFormats as unknown as typeof _addFormats.default;

function makeAjv(query: boolean) {
  const ajv = new Ajv2020({
    allErrors: true,
    strict: true,
    strictTypes: false,
    // Query values arrive as strings (or arrays when repeated).
    coerceTypes: query ? 'array' : false,
    useDefaults: query,
  });
  addFormats(ajv);
  ajv.addVocabulary(['example']); // OpenAPI annotation
  return ajv;
}

const bodyAjv = makeAjv(false);
const queryAjv = makeAjv(true);

const ARTICLE: Record<string, string> = {
  integer: 'an integer', number: 'a number', string: 'a string', object: 'an object', array: 'an array', boolean: 'true or false', null: 'null',
};

function typeMessage(types: string[]): string {
  return `must be ${[...new Set(types)].map((t) => ARTICLE[t] ?? t).join(' or ')}`;
}

function describe(e: ErrorObject): string {
  const p = e.params as Record<string, any>;
  switch (e.keyword) {
    case 'required': return 'is required';
    case 'additionalProperties': return 'is not allowed';
    case 'type': return typeMessage(String(p.type).split(','));
    case 'enum': return `must be one of: ${(p.allowedValues as unknown[]).join(', ')}`;
    case 'const': return `must be ${JSON.stringify(p.allowedValue)}`;
    case 'minimum': return `must be greater than or equal to ${p.limit}`;
    case 'exclusiveMinimum': return `must be greater than ${p.limit}`;
    case 'maximum': return `must be less than or equal to ${p.limit}`;
    case 'exclusiveMaximum': return `must be less than ${p.limit}`;
    case 'minLength': return p.limit === 1 ? 'must not be empty' : `must be at least ${p.limit} characters long`;
    case 'maxLength': return `must be at most ${p.limit} characters long`;
    case 'minItems': return `must have at least ${p.limit} items`;
    case 'maxItems': return `must have at most ${p.limit} items`;
    case 'format': return `must be a valid ${p.format}${p.format === 'date' ? ' (YYYY-MM-DD)' : ''}`;
    case 'pattern': return 'has an invalid format';
    default: return e.message ?? 'is invalid';
  }
}

function fieldOf(e: ErrorObject, root: string): string {
  let path = '';
  for (const seg of e.instancePath.split('/').slice(1)) {
    const name = seg.replace(/~1/g, '/').replace(/~0/g, '~');
    path += /^\d+$/.test(name) ? `[${name}]` : `${path ? '.' : ''}${name}`;
  }
  const p = e.params as Record<string, any>;
  const child = e.keyword === 'required' ? p.missingProperty : e.keyword === 'additionalProperties' ? p.additionalProperty : undefined;
  if (child !== undefined) path += `${path ? '.' : ''}${child}`;
  return path || root;
}

/** One message per field: the most specific one (anyOf branches add noise). */
export function fieldErrors(errors: readonly ErrorObject[], root: string): FieldError[] {
  const byField = new Map<string, ErrorObject[]>();
  for (const e of errors) {
    const f = fieldOf(e, root);
    byField.set(f, [...(byField.get(f) ?? []), e]);
  }
  return [...byField].slice(0, 50).map(([field, errs]) => {
    const specific = errs.find((e) => !['type', 'anyOf', 'oneOf', 'if', 'not'].includes(e.keyword));
    if (specific) return { field, message: describe(specific) };
    const types = errs.filter((e) => e.keyword === 'type').map((e) => String((e.params as any).type));
    if (types.length) return { field, message: typeMessage(types.join(',').split(',')) };
    return { field, message: describe(errs[0]) };
  });
}

const DECIMAL: Record<'integer' | 'number', RegExp> = { integer: /^-?[0-9]+$/, number: /^-?[0-9]+(\.[0-9]+)?$/ };

/**
 * Query parameters whose schema is numeric, with the form their raw value must
 * have. ajv's coercion (like Number()) also takes "0x10", " 5", "1e3" or
 * "0b1"; a query number must be written as plain decimal digits.
 */
function numericParams(schema: JsonSchema): Map<string, RegExp> {
  const out = new Map<string, RegExp>();
  for (const [name, prop] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
    const types = ([] as unknown[]).concat(prop.type ?? []);
    if (types.includes('number')) out.set(name, DECIMAL.number);
    else if (types.includes('integer')) out.set(name, DECIMAL.integer);
  }
  return out;
}

function nonDecimal(query: Record<string, unknown>, numeric: Map<string, RegExp>): FieldError[] {
  const errors: FieldError[] = [];
  for (const [name, form] of numeric) {
    const raw = query[name];
    if (raw === undefined) continue;
    const values = Array.isArray(raw) ? raw : [raw];
    if (values.some((v) => typeof v !== 'string' || !form.test(v))) {
      errors.push({ field: name, message: form === DECIMAL.integer ? 'must be an integer' : 'must be a number' });
    }
  }
  return errors;
}

export interface Validated {
  input: { body: unknown; query: Record<string, unknown>; params: Record<string, string> };
  /** Every problem the schemas found in the query, the body and the If-Match header (empty: valid). */
  errors: FieldError[];
  /** The parsed body as sent (undefined when there was none), for RouteSpec.check. */
  sent: unknown;
}

export interface RouteValidator {
  (req: Request): Validated;
}

export function compileValidator(spec: RouteSpec): RouteValidator {
  const body: ValidateFunction = bodyAjv.compile(bodySchema(spec));
  const query: ValidateFunction = queryAjv.compile(querySchema(spec));
  const numeric = numericParams(querySchema(spec));
  const ids = pathParams(spec.path).filter(isIdParam);
  return (req) => {
    const params = req.params as Record<string, string>;
    // An id that is not a UUID names nothing: 404, like an unknown one. One spelling of an id from here on
    // (streams and rows are keyed by the lower-case form), so every route takes an upper-case id as GET does.
    for (const name of ids) {
      if (!isUuid(params[name])) throw notFound();
      params[name] = params[name].toLowerCase();
    }
    // A GET has no body by definition; some clients send one anyway, which must not fail the read.
    const parsed = req.method === 'GET' || req.method === 'HEAD' ? undefined : parseJsonBody(req);
    const value = parsed === undefined ? {} : parsed;
    const q: Record<string, unknown> = { ...(req.query as Record<string, unknown>) };
    const errors: FieldError[] = nonDecimal(q, numeric);
    const badForm = new Set(errors.map((e) => e.field));
    if (!query(q)) errors.push(...fieldErrors(query.errors ?? [], 'query').filter((e) => !badForm.has(e.field)));
    if (!body(value)) errors.push(...fieldErrors(body.errors ?? [], 'body'));
    errors.push(...ifMatchErrors(req.header('if-match')));
    // After ajv, so query numbers are checked once coerced; beside the schema's errors (all in one answer),
    // each field named once.
    const named = new Set(errors.map((e) => e.field));
    for (const [root, v] of [['query', q], ['body', value]] as const) {
      for (const bad of unstorableFields(v)) {
        const field = bad.field === 'body' ? root : bad.field;
        if (!named.has(field)) errors.push({ field, message: bad.message });
      }
    }
    return { input: { body: parsed === undefined && !spec.body ? undefined : value, query: q, params: { ...params } }, errors, sent: parsed };
  };
}

function ifMatchErrors(header: string | undefined): FieldError[] {
  try {
    parseIfMatch(header);
    return [];
  } catch (err) {
    return ((err as DomainError).details as { fields?: FieldError[] } | undefined)?.fields ?? [];
  }
}

/**
 * The answer to a request the schemas refused: their errors plus the
 * route's domain rules on the body (RouteSpec.check), one message per field,
 * so a client fixes everything in one round trip. Without this, a shape
 * error (an empty description) stopped the request before the decider's
 * rules (a quantity of 0, an unknown currency or customer) were ever read.
 */
export async function refusal(spec: RouteSpec, checked: Validated, ctx: Parameters<BodyCheck>[0]): Promise<DomainError> {
  const errors = [...checked.errors];
  const sent = checked.sent;
  if (spec.check && sent !== null && typeof sent === 'object' && !Array.isArray(sent)) {
    const seen = new Set(errors.map((e) => e.field));
    for (const e of await spec.check(ctx, sent)) {
      if (!seen.has(e.field)) errors.push(e);
      seen.add(e.field);
    }
  }
  return validationError(errors.slice(0, 100));
}
