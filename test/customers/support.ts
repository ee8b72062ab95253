/** Small HTTP helpers for the customer suites: one client per tenant. */
import { expect } from 'chai';
import { call, createTenant, type Tenant } from '../support/fixtures.ts';
import { serverPerSuite, type TestServer } from '../support/server.ts';

export type Reply = Awaited<ReturnType<typeof call>>;

export interface CustomersClient {
  tenant: Tenant;
  create(body: unknown, headers?: Record<string, string>): Promise<Reply>;
  get(id: string): Promise<Reply>;
  patch(id: string, body: unknown, headers?: Record<string, string>): Promise<Reply>;
  remove(id: string, headers?: Record<string, string>): Promise<Reply>;
  list(query?: string): Promise<Reply>;
  /** Creates and returns the customer (asserting 201). */
  make(body: Record<string, unknown>): Promise<any>;
}

export async function customersClient(server: TestServer, options: Parameters<typeof createTenant>[1] = {}): Promise<CustomersClient> {
  const tenant = await createTenant(server.database.db, { plan: 'fiduciaire', ...options });
  const secret = tenant.key.secret;
  const base = `${server.url}/customers`;
  const client: CustomersClient = {
    tenant,
    create: (body, headers) => call(base, secret, { method: 'POST', body, headers }),
    get: (id) => call(`${base}/${id}`, secret),
    patch: (id, body, headers) => call(`${base}/${id}`, secret, { method: 'PATCH', body, headers }),
    remove: (id, headers) => call(`${base}/${id}`, secret, { method: 'DELETE', headers }),
    list: (query = '') => call(`${base}${query ? `?${query}` : ''}`, secret),
    async make(body) {
      const res = await client.create(body);
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      return res.body.data;
    },
  };
  return client;
}

/** One server for the enclosing describe; before each test, `use` gets it with a fresh tenant's client. */
export function withCustomersApi(use: (fixture: { server: TestServer; api: CustomersClient }) => void): void {
  serverPerSuite(async (server) => ({ server, api: await customersClient(server) }), use);
}

/** details.fields as { field: message }. */
export function fieldsOf(res: Reply): Record<string, string> {
  expect(res.body?.error?.code, JSON.stringify(res.body)).to.equal('VALIDATION_ERROR');
  return Object.fromEntries(res.body.error.details.fields.map((f: { field: string; message: string }) => [f.field, f.message]));
}

let iceCounter = 0;

/** A fresh 15-digit ICE (unique within a test run). */
export function newIce(): string {
  iceCounter += 1;
  return `${String(process.pid % 100000).padStart(5, '0')}${String(Date.now() % 1e6).padStart(6, '0')}${String(iceCounter).padStart(4, '0')}`.slice(0, 15);
}
