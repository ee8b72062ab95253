/**
 * Test-only RouteSpecs under /_test, to exercise the pipeline without
 * depending on any resource's routes. A suite serves them beside the real
 * ones with startTestServer({ routes: withTestRoutes }).
 */
import type { RouteSpec } from '../../src/api/route.ts';
import { processParts } from '../../src/main.ts';
import { DomainError } from '../../src/shared/errors.ts';

export const calls = { things: 0 };

const item = { type: 'object', properties: { quantity: { type: 'number', exclusiveMinimum: 0 }, description: { type: 'string', minLength: 1 } }, required: ['quantity'] };

export const testRoutes: RouteSpec[] = [
  {
    method: 'get', path: '/_test/echo', summary: 'Echo', tag: 'Test', scope: 'organization:read', audience: 'organization',
    query: {
      type: 'object',
      properties: {
        page: { type: 'integer', minimum: 1, default: 1 },
        per_page: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
        status: { type: 'string', enum: ['draft', 'paid'] },
        date_from: { type: 'string', format: 'date' },
      },
    },
    async handler(ctx, input) {
      return { data: { organization_id: ctx.organizationId, key_id: ctx.key.id, query: input.query, if_match: ctx.ifMatch ?? null, metadata: ctx.metadata() }, pagination: { total: 0, page: input.query.page, perPage: input.query.per_page, totalPages: 0 } };
    },
  },
  {
    method: 'post', path: '/_test/things', summary: 'Create a thing', tag: 'Test', scope: 'invoices:write', audience: 'organization', successStatus: 201,
    body: { type: 'object', properties: { name: { type: 'string', minLength: 1 }, delay_ms: { type: 'integer' }, fail: { type: 'string' }, items: { type: 'array', items: item } }, required: ['name'] },
    async handler(_ctx, input) {
      const n = ++calls.things;
      if (input.body.delay_ms) await new Promise((r) => setTimeout(r, input.body.delay_ms));
      if (input.body.fail === 'domain') throw new DomainError('INVOICE_NOT_DRAFT', 'Not a draft.');
      if (input.body.fail === 'crash') throw new Error('boom');
      return { status: 201, data: { name: input.body.name, n }, version: n };
    },
  },
  {
    method: 'post', path: '/_test/things/:id/touch', summary: 'Touch', tag: 'Test', scope: 'invoices:write', audience: 'organization',
    async handler(ctx, input) {
      return { data: { id: input.params.id, body: input.body ?? null, if_match: ctx.ifMatch ?? null }, version: 2 };
    },
  },
  {
    method: 'get', path: '/_test/things/:id', summary: 'Read a thing', tag: 'Test', scope: 'invoices:read', audience: 'organization',
    async handler(_ctx, input) {
      return { data: { id: input.params.id }, version: 1 };
    },
  },
  {
    method: 'get', path: '/_test/boom', summary: 'Crash', tag: 'Test', scope: 'organization:read', audience: 'organization',
    async handler() {
      throw new Error('relation "secret_table" does not exist: select * from secret_table');
    },
  },
  {
    method: 'get', path: '/_test/file', summary: 'File', tag: 'Test', scope: 'invoices:export', audience: 'organization', produces: 'application/xml',
    async handler() {
      return { file: { contentType: 'application/xml; charset=utf-8', filename: 'INV-2026-000001.xml', body: '<Invoice/>' } };
    },
  },
  {
    method: 'get', path: '/_test/account', summary: 'Account route', tag: 'Test', scope: 'organizations:read', audience: 'account',
    async handler(ctx) {
      return { data: { account_id: ctx.key.accountId, organization_id: ctx.organizationId } };
    },
  },
];

/** Every route of the process plus the test routes. */
export const withTestRoutes: readonly RouteSpec[] = [...processParts.routes, ...testRoutes];
