/**
 * GET /openapi.json and GET /api/v1/openapi.json (no auth): the OpenAPI 3.1
 * description of every RouteSpec in allRoutes, built from the very schemas
 * the pipeline validates with (src/api/pipeline/schema.ts), so the document
 * cannot drift from the behaviour. Errors listed per operation are the
 * pipeline's own (by the checks that apply to the route) plus the spec's.
 */
import type { RequestHandler } from 'express';
import { ERROR_STATUS, type ErrorCode } from '../shared/errors.ts';
import { components } from './openapi-components.ts';
import { bodySchema, isIdParam, pathParams, querySchema } from './pipeline/schema.ts';
import type { JsonSchema, RouteSpec } from './route.ts';

export function openapiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

function operationId(spec: RouteSpec): string {
  const words = spec.path.split('/').filter(Boolean).map((s) => (s.startsWith(':') ? 'by_' + s.slice(1) : s));
  return [spec.method, ...words].join('_').replace(/[^A-Za-z0-9_]/g, '_');
}

/** Error codes any request to this route can get from the pipeline itself. */
export function pipelineErrors(spec: RouteSpec): ErrorCode[] {
  const codes: ErrorCode[] = ['UNAUTHORIZED', 'API_TIER_NOT_SUPPORTED', 'SUBSCRIPTION_EXPIRED', 'FORBIDDEN', 'RATE_LIMIT_EXCEEDED', 'VALIDATION_ERROR', 'INTERNAL_ERROR'];
  if (spec.audience === 'account') codes.push('ACCOUNT_KEY_REQUIRED');
  else codes.push('ORG_HEADER_REQUIRED', 'API_DISABLED', 'NOT_FOUND');
  if (pathParams(spec.path).some(isIdParam)) codes.push('NOT_FOUND');
  if (spec.body || spec.method !== 'get') codes.push('INVALID_JSON', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE');
  if (spec.method === 'post') codes.push('IDEMPOTENCY_KEY_REUSED');
  return [...new Set(codes)];
}

const RATE_HEADERS = {
  'X-RateLimit-Limit': { $ref: '#/components/headers/X-RateLimit-Limit' },
  'X-RateLimit-Remaining': { $ref: '#/components/headers/X-RateLimit-Remaining' },
  'X-RateLimit-Reset': { $ref: '#/components/headers/X-RateLimit-Reset' },
};

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
    const headers: Record<string, unknown> = status === 401 ? {} : { ...RATE_HEADERS };
    if (status === 429) headers['Retry-After'] = { description: 'Seconds until the window resets.', schema: { type: 'integer' } };
    out[String(status)] = {
      description: codes.join(', '),
      headers,
      content: {
        'application/json': {
          schema: {
            allOf: [{ $ref: '#/components/schemas/Error' }],
            properties: { error: { type: 'object', properties: { code: { enum: codes } } } },
          },
        },
      },
    };
  }
  return out;
}

function successResponse(spec: RouteSpec): Record<string, unknown> {
  const headers: Record<string, unknown> = { ...RATE_HEADERS };
  if (spec.produces) {
    headers['Content-Disposition'] = { schema: { type: 'string' }, description: 'attachment; filename="..."' };
    return { description: spec.summary, headers, content: { [spec.produces]: { schema: { type: 'string', format: 'binary' } } } };
  }
  headers.ETag = { schema: { type: 'string' }, description: 'The resource version, "<version>" (when it has one).' };
  const query = querySchema(spec) as { properties?: Record<string, unknown> };
  const isList = Boolean(query.properties && 'page' in query.properties);
  const properties: Record<string, unknown> = { success: { const: true }, data: spec.response ?? {} };
  if (isList) properties.meta = { type: 'object', properties: { pagination: { $ref: '#/components/schemas/Pagination' } } };
  return {
    description: spec.summary,
    headers,
    content: { 'application/json': { schema: { type: 'object', required: ['success', 'data'], properties } } },
  };
}

function parameters(spec: RouteSpec): unknown[] {
  const params: unknown[] = pathParams(spec.path).map((name) => ({
    name,
    in: 'path',
    required: true,
    schema: isIdParam(name) ? { type: 'string', format: 'uuid' } : { type: 'string' },
  }));
  const query = querySchema(spec) as { properties?: Record<string, JsonSchema>; required?: string[] };
  for (const [name, schema] of Object.entries(query.properties ?? {})) {
    params.push({ name, in: 'query', required: query.required?.includes(name) ?? false, schema, ...(schema.description ? { description: schema.description } : {}) });
  }
  if (spec.audience === 'organization') params.push({ $ref: '#/components/parameters/OrganizationId' });
  if (spec.method === 'post') params.push({ $ref: '#/components/parameters/IdempotencyKey' });
  if (spec.method !== 'get') params.push({ $ref: '#/components/parameters/IfMatch' });
  return params;
}

function operation(spec: RouteSpec): Record<string, unknown> {
  const op: Record<string, unknown> = {
    operationId: operationId(spec),
    summary: spec.summary,
    description: `Required scope: \`${spec.scope}\`${spec.audience === 'account' ? ' (account-level key only)' : ''}.`,
    tags: [spec.tag],
    'x-required-scope': spec.scope,
    parameters: parameters(spec),
    responses: { [String(spec.successStatus ?? 200)]: successResponse(spec), ...errorResponses(spec) },
  };
  if (spec.body) {
    const schema = bodySchema(spec);
    const required = Array.isArray(schema.required) && schema.required.length > 0;
    op.requestBody = { required, content: { 'application/json': { schema } } };
  }
  return op;
}

export function buildOpenApi(specs: readonly RouteSpec[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const spec of specs) {
    const p = openapiPath(spec.path);
    (paths[p] ??= {})[spec.method] = operation(spec);
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'Invoicing API',
      version: '1.0.0',
      description: 'Invoices, customers, recurring schedules and organizations for Moroccan businesses.',
    },
    servers: [{ url: '/api/v1' }],
    security: [{ bearerAuth: [] }],
    tags: [...new Set(specs.map((s) => s.tag))].map((name) => ({ name })),
    paths,
    components,
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
