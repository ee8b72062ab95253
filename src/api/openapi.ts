/**
 * GET /openapi.json and GET /api/v1/openapi.json (no auth): the OpenAPI 3.1
 * description of every RouteSpec in allRoutes, built from the very schemas
 * the pipeline validates with (src/api/pipeline/schema.ts), so the document
 * cannot drift from the behaviour. Errors listed per operation are the
 * pipeline's own (by the checks that apply to the route) plus the spec's.
 *
 * Schemas marked with `named` (src/api/openapi-named.ts) become
 * components.schemas and are referenced, so a generated client has one type
 * per resource (Invoice, Customer, ...). Every header the pipeline sends is
 * documented, and the nine webhook events are in `webhooks`
 * (src/api/openapi-webhooks.ts). docs/api-decisions.md, "OpenAPI".
 */
import type { RequestHandler } from 'express';
import { ERROR_STATUS, type ErrorCode } from '../shared/errors.ts';
import { components } from './openapi-components.ts';
import { nameOf } from './openapi-named.ts';
import { webhooks } from './openapi-webhooks.ts';
import { bodySchema, isIdParam, pathParams, querySchema } from './pipeline/schema.ts';
import type { JsonSchema, RouteSpec } from './route.ts';

export function openapiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

const camel = (words: string[]) =>
  words
    .flatMap((w) => w.split(/[^A-Za-z0-9]+/))
    .filter(Boolean)
    .map((w, i) => (i === 0 ? w.toLowerCase() : w[0].toUpperCase() + w.slice(1)))
    .join('');

/** The spec's operationId, or one derived from method and path (`post /_test/things` -> `postTestThings`). */
export function operationId(spec: RouteSpec): string {
  if (spec.operationId) return spec.operationId;
  const words = spec.path.split('/').filter(Boolean).map((s) => (s.startsWith(':') ? 'by_' + s.slice(1) : s));
  return camel([spec.method, ...words]);
}

/** Error codes any request to this route can get from the pipeline itself. */
export function pipelineErrors(spec: RouteSpec): ErrorCode[] {
  const codes: ErrorCode[] = ['UNAUTHORIZED', 'API_TIER_NOT_SUPPORTED', 'SUBSCRIPTION_EXPIRED', 'FORBIDDEN', 'RATE_LIMIT_EXCEEDED', 'VALIDATION_ERROR', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE'];
  if (spec.audience === 'account') codes.push('ACCOUNT_KEY_REQUIRED');
  else codes.push('ORG_HEADER_REQUIRED', 'API_DISABLED', 'NOT_FOUND');
  if (pathParams(spec.path).some(isIdParam)) codes.push('NOT_FOUND');
  if (spec.body || spec.method !== 'get') codes.push('INVALID_JSON', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE');
  if (spec.method === 'post') codes.push('IDEMPOTENCY_KEY_REUSED');
  return [...new Set(codes)];
}

const header = (name: string) => ({ $ref: `#/components/headers/${name}` });
const COMMON_HEADERS = { 'X-Request-Id': header('X-Request-Id') };
const RATE_HEADERS = {
  'X-RateLimit-Limit': header('X-RateLimit-Limit'),
  'X-RateLimit-Remaining': header('X-RateLimit-Remaining'),
  'X-RateLimit-Reset': header('X-RateLimit-Reset'),
};

/**
 * Writes a schema for the document: any object marked with `named` becomes
 * a `$ref` to components.schemas (added there on first sight).
 */
class SchemaWriter {
  readonly schemas: Record<string, unknown> = {};

  write(schema: unknown, top = false): unknown {
    if (Array.isArray(schema)) return schema.map((s) => this.write(s));
    if (schema === null || typeof schema !== 'object') return schema;
    const name = nameOf(schema);
    if (name && !top) {
      if (!(name in this.schemas)) {
        this.schemas[name] = {}; // reserved first: a schema that contains itself refers to itself
        this.schemas[name] = this.write(schema, true);
      }
      return { $ref: `#/components/schemas/${name}` };
    }
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(schema as JsonSchema)) {
      if (key === 'properties' || key === 'patternProperties' || key === '$defs') {
        out[key] = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, this.write(v)]));
      } else if (['items', 'additionalProperties', 'unevaluatedProperties', 'not', 'contains', 'if', 'then', 'else'].includes(key) && typeof value === 'object') {
        out[key] = this.write(value);
      } else if (['allOf', 'anyOf', 'oneOf', 'prefixItems'].includes(key)) {
        out[key] = this.write(value);
      } else {
        out[key] = value;
      }
    }
    return out;
  }
}

function errorResponses(spec: RouteSpec): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...pipelineErrors(spec), ...(spec.errors ?? [])]) {
    const status = ERROR_STATUS[code];
    const list = byStatus.get(status) ?? [];
    if (!list.includes(code)) list.push(code);
    byStatus.set(status, list);
  }
  const out: Record<string, unknown> = {};
  for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    const headers: Record<string, unknown> = status === 401 ? { ...COMMON_HEADERS } : { ...COMMON_HEADERS, ...RATE_HEADERS };
    if (status === 429 || status === 503) headers['Retry-After'] = header('Retry-After');
    if (status === 401) headers['WWW-Authenticate'] = header('WWW-Authenticate');
    if (spec.method === 'post' && status < 500) headers['Idempotent-Replayed'] = header('Idempotent-Replayed');
    out[String(status)] = {
      description: codes.join(', '),
      headers,
      content: {
        'application/json': {
          schema: {
            allOf: [{ $ref: '#/components/schemas/Error' }],
            properties: { error: { type: 'object', properties: { code: { type: 'string', enum: codes } } } },
          },
        },
      },
    };
  }
  return out;
}

function isList(spec: RouteSpec): boolean {
  const query = querySchema(spec) as { properties?: Record<string, unknown> };
  return Boolean(query.properties && 'page' in query.properties);
}

function successResponse(spec: RouteSpec, writer: SchemaWriter): Record<string, unknown> {
  const headers: Record<string, unknown> = { ...COMMON_HEADERS, ...RATE_HEADERS };
  if (spec.produces) {
    headers['Content-Disposition'] = header('Content-Disposition');
    return { description: spec.summary, headers, content: { [spec.produces]: { schema: { type: 'string', format: 'binary' } } } };
  }
  const list = isList(spec);
  if (list) headers.Link = header('Link');
  else headers.ETag = header('ETag');
  if (spec.location) headers.Location = header('Location');
  if (spec.method === 'post') headers['Idempotent-Replayed'] = header('Idempotent-Replayed');
  const properties: Record<string, unknown> = { success: { type: 'boolean', const: true }, data: writer.write(spec.response ?? {}) };
  const required = ['success', 'data'];
  if (list) {
    properties.meta = { type: 'object', required: ['pagination'], properties: { pagination: { $ref: '#/components/schemas/Pagination' } } };
    required.push('meta');
  }
  return {
    description: spec.summary,
    headers,
    content: { 'application/json': { schema: { type: 'object', required, properties } } },
  };
}

function parameters(spec: RouteSpec, writer: SchemaWriter): unknown[] {
  const params: unknown[] = pathParams(spec.path).map((name) => ({
    name,
    in: 'path',
    required: true,
    schema: isIdParam(name) ? { type: 'string', format: 'uuid' } : { type: 'string' },
  }));
  const query = querySchema(spec) as { properties?: Record<string, JsonSchema>; required?: string[] };
  for (const [name, schema] of Object.entries(query.properties ?? {})) {
    params.push({ name, in: 'query', required: query.required?.includes(name) ?? false, schema: writer.write(schema), ...(schema.description ? { description: schema.description } : {}) });
  }
  if (spec.audience === 'organization') params.push({ $ref: '#/components/parameters/OrganizationId' });
  if (spec.method === 'post') params.push({ $ref: '#/components/parameters/IdempotencyKey' });
  if (spec.method !== 'get') params.push({ $ref: '#/components/parameters/IfMatch' });
  return params;
}

function operation(spec: RouteSpec, writer: SchemaWriter): Record<string, unknown> {
  const op: Record<string, unknown> = {
    operationId: operationId(spec),
    summary: spec.summary,
    description: `Required scope: \`${spec.scope}\`${spec.audience === 'account' ? ' (account-level key only)' : ''}.`,
    tags: [spec.tag],
    'x-required-scope': spec.scope,
    parameters: parameters(spec, writer),
    responses: { [String(spec.successStatus ?? 200)]: successResponse(spec, writer), ...errorResponses(spec) },
  };
  if (spec.body) {
    const schema = bodySchema(spec);
    const required = Array.isArray(schema.required) && schema.required.length > 0;
    op.requestBody = { required, content: { 'application/json': { schema: writer.write(schema) } } };
  }
  return op;
}

export function buildOpenApi(specs: readonly RouteSpec[]): Record<string, unknown> {
  const writer = new SchemaWriter();
  const paths: Record<string, Record<string, unknown>> = {};
  for (const spec of specs) {
    const p = openapiPath(spec.path);
    (paths[p] ??= {})[spec.method] = operation(spec, writer);
  }
  const hooks = webhooks((schema) => writer.write(schema));
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'Invoicing API',
      version: '1.0.0',
      description: 'Invoices, customers, recurring schedules and organizations for Moroccan businesses.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: '/api/v1', description: 'This server' }],
    security: [{ bearerAuth: [] }],
    tags: [...new Set(specs.map((s) => s.tag)), 'Webhooks'].map((name) => ({ name, description: `${name} endpoints.` })),
    paths,
    webhooks: hooks,
    components: { ...components, schemas: { ...components.schemas, ...writer.schemas } },
  };
}

/** Serves the document of `specs` (built on first use: routes register at start-up). */
export function openapiHandler(specs: readonly RouteSpec[]): RequestHandler {
  let doc: string | null = null;
  return (_req, res) => {
    doc ??= JSON.stringify(buildOpenApi(specs));
    res.type('application/json').send(doc);
  };
}
