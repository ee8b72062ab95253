/** HTTP helpers for the invoice suites: one client per tenant, with customers to invoice. */
import { expect } from 'chai';
import type { Scope } from '../../src/accounts/scopes.ts';
import { call, createTenant, type Tenant } from '../support/fixtures.ts';
import { serverPerSuite, type TestServer } from '../support/server.ts';
import { newIce } from '../customers/support.ts';

export type Reply = Awaited<ReturnType<typeof call>>;
type Headers = Record<string, string>;

export interface InvoicesClient {
  tenant: Tenant;
  url: string;
  secret: string;
  create(body: unknown, headers?: Headers): Promise<Reply>;
  get(id: string): Promise<Reply>;
  patch(id: string, body: unknown, headers?: Headers): Promise<Reply>;
  action(id: string, name: 'finalize' | 'send' | 'pay' | 'void', body?: unknown, headers?: Headers): Promise<Reply>;
  list(query?: string): Promise<Reply>;
  events(id: string): Promise<Reply>;
  /** POST /customers; returns the customer (asserting 201). */
  customer(body?: Record<string, unknown>): Promise<any>;
  /** A draft for `customerId` (asserting 201). */
  draft(customerId: string, extra?: Record<string, unknown>): Promise<any>;
  /** A finalized invoice (asserting 200). */
  finalized(customerId: string, extra?: Record<string, unknown>): Promise<any>;
}

export interface ClientOptions {
  /** The organization's ICE (default: a fresh one; null: none, finalize refuses). */
  ice?: string | null;
  legalName?: string;
  scopes?: readonly Scope[];
}

export const line = (description = 'Conseil', quantity: number | string = 2, unit_price: number | string = 500, tax_rate?: number | string) => ({
  description,
  quantity,
  unit_price,
  ...(tax_rate === undefined ? {} : { tax_rate }),
});

export async function invoicesClient(server: { url: string; database: { db: any } }, o: ClientOptions = {}): Promise<InvoicesClient> {
  const tenant = await createTenant(server.database.db, {
    plan: 'fiduciaire',
    // Stress suites send hundreds of requests a minute with one key.
    account: { requestsPerMinute: 1_000_000 },
    organization: { legalName: o.legalName ?? 'Atlas Conseil SARL', ice: o.ice === undefined ? newIce() : o.ice },
    scopes: o.scopes,
  });
  return bindClient(server.url, tenant);
}

/** A client of `tenant` on the API at `url` (e.g. the same tenant through a second server). */
export function bindClient(url: string, tenant: Tenant): InvoicesClient {
  const secret = tenant.key.secret;
  const base = `${url}/invoices`;
  const client: InvoicesClient = {
    tenant,
    url,
    secret,
    create: (body, headers) => call(base, secret, { method: 'POST', body, headers }),
    get: (id) => call(`${base}/${id}`, secret),
    patch: (id, body, headers) => call(`${base}/${id}`, secret, { method: 'PATCH', body, headers }),
    action: (id, name, body, headers) => call(`${base}/${id}/${name}`, secret, { method: 'POST', body, headers }),
    list: (query = '') => call(`${base}${query ? `?${query}` : ''}`, secret),
    events: (id) => call(`${base}/${id}/events`, secret),
    async customer(body = {}) {
      const res = await call(`${url}/customers`, secret, {
        method: 'POST',
        body: { name: 'Client Marrakech SA', type: 'b2b', ice: newIce(), email: 'compta@client.ma', phone: '+212522000000', address: { street: '1 Rue Atlas', city: 'Marrakech', postal_code: '40000' }, ...body },
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      return res.body.data;
    },
    async draft(customerId, extra = {}) {
      const res = await client.create({ customer_id: customerId, issue_date: '2026-03-14', items: [line()], ...extra });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      return res.body.data;
    },
    async finalized(customerId, extra = {}) {
      const draft = await client.draft(customerId, extra);
      const res = await client.action(draft.id, 'finalize');
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body.data;
    },
  };
  return client;
}

/**
 * One server for the enclosing describe; before each test, `use` gets it with
 * a fresh tenant's client and a customer of that tenant.
 */
export function withInvoicesApi(use: (fixture: { server: TestServer; api: InvoicesClient; customer: any }) => void): void {
  serverPerSuite(async (server) => {
    const api = await invoicesClient(server);
    return { server, api, customer: await api.customer() };
  }, use);
}

/** details.fields as { field: message }. */
export function fieldsOf(res: Reply): Record<string, string> {
  expect(res.body?.error?.code, JSON.stringify(res.body)).to.equal('VALIDATION_ERROR');
  expect(res.status).to.equal(400);
  return Object.fromEntries(res.body.error.details.fields.map((f: { field: string; message: string }) => [f.field, f.message]));
}

/** Asserts an error reply: status and code. */
export function expectError(res: Reply, status: number, code: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.body.success).to.equal(false);
  expect(res.body.error.code).to.equal(code);
}

