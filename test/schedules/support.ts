/** HTTP helpers for the schedule suites: one client per tenant, with a customer to bill. */
import { expect } from 'chai';
import { businessToday } from '../../src/commands/schedule/calendar.ts';
import { call } from '../support/fixtures.ts';
import { serverPerSuite, type TestServer } from '../support/server.ts';
import { invoicesClient, line, type ClientOptions, type InvoicesClient, type Reply } from '../invoices/support.ts';

type Headers = Record<string, string>;

export interface SchedulesClient {
  invoices: InvoicesClient;
  create(body: unknown, headers?: Headers): Promise<Reply>;
  get(id: string): Promise<Reply>;
  put(id: string, body: unknown, headers?: Headers): Promise<Reply>;
  remove(id: string, headers?: Headers): Promise<Reply>;
  action(id: string, name: 'generate' | 'pause' | 'resume', body?: unknown, headers?: Headers): Promise<Reply>;
  history(id: string, query?: string): Promise<Reply>;
  list(query?: string): Promise<Reply>;
  /** Creates a schedule for `customerId` (asserting 201). */
  make(customerId: string, extra?: Record<string, unknown>): Promise<any>;
}

/** Today in Africa/Casablanca, shifted by `days` (HTTP suites run on the real clock). */
export function dayFromToday(days: number): string {
  const d = new Date(`${businessToday(new Date())}T12:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

export function schedulesClientOf(invoices: InvoicesClient): SchedulesClient {
  const base = `${invoices.url}/recurring-invoices`;
  const secret = invoices.secret;
  const client: SchedulesClient = {
    invoices,
    create: (body, headers) => call(base, secret, { method: 'POST', body, headers }),
    get: (id) => call(`${base}/${id}`, secret),
    put: (id, body, headers) => call(`${base}/${id}`, secret, { method: 'PUT', body, headers }),
    remove: (id, headers) => call(`${base}/${id}`, secret, { method: 'DELETE', headers }),
    action: (id, name, body, headers) => call(`${base}/${id}/${name}`, secret, { method: 'POST', body, headers }),
    history: (id, query = '') => call(`${base}/${id}/history${query ? `?${query}` : ''}`, secret),
    list: (query = '') => call(`${base}${query ? `?${query}` : ''}`, secret),
    async make(customerId, extra = {}) {
      // A start in the future: the scheduler of the test server leaves it alone.
      const res = await client.create({ customer_id: customerId, frequency: 'monthly', start_date: dayFromToday(40), items: [line()], ...extra });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      return res.body.data;
    },
  };
  return client;
}

export async function schedulesClient(server: TestServer, o: ClientOptions = {}): Promise<SchedulesClient> {
  return schedulesClientOf(await invoicesClient(server, o));
}

/** One server for the enclosing describe; before each test a fresh tenant's client and customer. */
export function withSchedulesApi(use: (fixture: { server: TestServer; api: SchedulesClient; customer: any }) => void): void {
  serverPerSuite(async (server) => {
    const api = await schedulesClient(server);
    return { server, api, customer: await api.invoices.customer() };
  }, use);
}

export { line };
