/**
 * Writes on a remembered key (src/api/pipeline/remembered.ts, docs/api-pipeline.md "Writes on a remembered
 * key"): a create whose key and customer the process read lately goes in one message, the key, the customer
 * and the rate-limit window checked in the append's own transaction. Whatever changed since they were read
 * (a revoked key, a plan, an organization's state, the customer, a full window) gets the answer the normal
 * way gives, and nothing is written; every request is counted once in its window.
 */
import { expect } from 'chai';
import { interceptQueries, queryLabel } from '../support/pool-queries.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { call, createTenant } from '../support/fixtures.ts';
import { bindClient, invoicesClient, line, type InvoicesClient } from '../invoices/support.ts';

describe('writes on a remembered key', function () {
  this.timeout(60_000);
  let s: TestServer;
  /** The statements sent on the server's pool while `recording` (names, or texts cut short). */
  let sent: string[] | null = null;

  before(async () => {
    s = await startTestServer({ env: { INLINE_PROJECTIONS: 'auto' }, roles: ['api', 'projector'] });
    interceptQueries(s.server.runtime.database.pool, (query) => {
      sent?.push(queryLabel(query));
      return null;
    });
  });
  after(() => s?.stop());

  const body = (customerId: string) => ({ customer_id: customerId, issue_date: '2026-03-14', items: [line()] });
  const invoices = async (organizationId: string) =>
    Number((await s.database.pool.query('select count(*) from invoices where organization_id = $1', [organizationId])).rows[0].count);

  /** A tenant's client and a customer, with one create made: the process remembers both. */
  async function remembered(options: { requestsPerMinute?: number; customerName?: string } = {}): Promise<{ api: InvoicesClient; customer: any }> {
    const api =
      options.requestsPerMinute === undefined
        ? await invoicesClient(s)
        : bindClient(s.url, await createTenant(s.database.db, { plan: 'fiduciaire', account: { requestsPerMinute: options.requestsPerMinute } }));
    const customer = await api.customer(options.customerName ? { name: options.customerName } : {});
    expect((await api.create(body(customer.id))).status).to.equal(201);
    return { api, customer };
  }

  /**
   * `request`'s answer, whether it went as one message, the key checked in it (no key statement of its own),
   * and the key statements and appends it sent, in order ('key', 'append').
   */
  async function recorded<T>(request: () => Promise<T>): Promise<{ res: T; oneMessage: boolean; path: string[] }> {
    sent = [];
    const res = await request();
    const statements = sent;
    sent = null;
    const onPath = statements.filter((t) => /^pipeline-authenticate|es_append\(/.test(t));
    return {
      res,
      oneMessage: onPath.length === 1 && /es_append\(/.test(onPath[0]) && /execute i_/.test(onPath[0]),
      path: onPath.map((t) => (t.startsWith('pipeline-authenticate') ? 'key' : 'append')),
    };
  }

  it('writes a create on a remembered key in one message, counted once in its window like any request', async () => {
    const { api, customer } = await remembered();
    const remaining: number[] = [];
    const first = await recorded(() => api.create(body(customer.id)));
    expect(first.res.status).to.equal(201);
    expect(first.oneMessage, 'the key checked in the append').to.equal(true);
    expect(first.res.body.data.customer.name).to.equal(customer.name);
    expect(first.res.headers.get('location')).to.match(new RegExp(`/invoices/${first.res.body.data.id}$`));
    remaining.push(Number(first.res.headers.get('x-ratelimit-remaining')));
    const second = await api.create(body(customer.id));
    remaining.push(Number(second.headers.get('x-ratelimit-remaining')));
    const read = await api.get(second.body.data.id); // the normal way
    expect(read.body.data).to.deep.include({ id: second.body.data.id, status: 'draft', total: second.body.data.total });
    remaining.push(Number(read.headers.get('x-ratelimit-remaining')));
    expect(remaining).to.deep.equal([remaining[0], remaining[0] - 1, remaining[0] - 2]);
    expect(await invoices(api.tenant.organizationId)).to.equal(3);
  });

  it('answers 401 for a key revoked since, and writes nothing', async () => {
    const { api, customer } = await remembered();
    await s.database.pool.query('update api_keys set revoked_at = now() where id = $1', [api.tenant.key.id]);
    const res = await api.create(body(customer.id));
    expect(res.status).to.equal(401);
    expect(res.headers.get('www-authenticate')).to.equal('Bearer');
    expect(await invoices(api.tenant.organizationId)).to.equal(1);
  });

  it("answers 403 for a plan, an organization's API switch or its archiving changed since, and writes nothing", async () => {
    const cases: [string, (api: InvoicesClient) => Promise<unknown>, string][] = [
      ['plan', (api) => s.database.pool.query(`update accounts set plan = 'starter' where id = $1`, [api.tenant.accountId]), 'API_TIER_NOT_SUPPORTED'],
      ['api switch', (api) => s.database.pool.query('update organizations set api_enabled = false where id = $1', [api.tenant.organizationId]), 'API_DISABLED'],
      ['archived', (api) => s.database.pool.query('update organizations set archived = true where id = $1', [api.tenant.organizationId]), 'FORBIDDEN'],
    ];
    for (const [what, change, code] of cases) {
      const { api, customer } = await remembered();
      await change(api);
      const res = await api.create(body(customer.id));
      expect(res.status, what).to.equal(403);
      expect(res.body.error.code, what).to.equal(code);
      expect(await invoices(api.tenant.organizationId), what).to.equal(1);
    }
  });

  it('freezes the customer as it is at the write: renamed since, archived since', async () => {
    const { api, customer } = await remembered();
    const renamed = await call(`${s.url}/customers/${customer.id}`, api.secret, { method: 'PATCH', body: { name: 'Nouveau Nom SARL' } });
    expect(renamed.status).to.equal(200);
    // The process forgot the customer it changed: the create reads it afresh, without a condition sure to be refused.
    const { res: after, path } = await recorded(() => api.create(body(customer.id)));
    expect(after.status).to.equal(201);
    expect(after.body.data.customer.name).to.equal('Nouveau Nom SARL');
    expect(path).to.deep.equal(['key', 'append']);
    const again = await recorded(() => api.create(body(customer.id)));
    expect(again.oneMessage, 'the new row remembered').to.equal(true);
    expect(again.res.body.data.customer.name).to.equal('Nouveau Nom SARL');

    expect((await call(`${s.url}/customers/${customer.id}`, api.secret, { method: 'DELETE' })).status).to.equal(200);
    const archived = await api.create(body(customer.id));
    expect(archived.status).to.equal(400);
    expect(archived.body.error.details.fields).to.deep.include({ field: 'customer_id', message: 'customer is archived' });
    expect(await invoices(api.tenant.organizationId)).to.equal(3);
  });

  it("never shows or uses another organization's customer that the process remembers", async () => {
    const a = await remembered({ customerName: 'Client Confidentiel A' });
    const b = await remembered();
    const res = await b.api.create(body(a.customer.id));
    expect(res.status).to.equal(400);
    expect(res.body.error.details.fields).to.deep.include({ field: 'customer_id', message: 'must name an existing customer' });
    expect(JSON.stringify(res.body)).not.to.include('Client Confidentiel A');
    expect(await invoices(b.api.tenant.organizationId)).to.equal(1);
  });

  it('answers a bad body with every field error, counted once', async () => {
    const { api, customer } = await remembered();
    const before = Number((await api.list()).headers.get('x-ratelimit-remaining'));
    const res = await api.create({ customer_id: customer.id, issue_date: 'someday', items: [{ ...line(), quantity: -1 }] });
    expect(res.status).to.equal(400);
    expect(res.body.error.details.fields.map((d: { field: string }) => d.field)).to.include.members(['issue_date']);
    expect(res.body.error.details.fields.length).to.be.greaterThan(1);
    expect(Number(res.headers.get('x-ratelimit-remaining'))).to.equal(before - 1);
    expect(await invoices(api.tenant.organizationId)).to.equal(1);
  });

  it('holds the rate limit when requests race past what the process remembers of the window', async () => {
    const { api, customer } = await remembered({ requestsPerMinute: 4 }); // the customer and one create: 2 of 4 used
    const answers = await Promise.all(Array.from({ length: 3 }, () => api.create(body(customer.id))));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).to.deep.equal([201, 201, 429]);
    const refused = answers.find((r) => r.status === 429)!;
    expect(refused.body.error.code).to.equal('RATE_LIMIT_EXCEEDED');
    expect(Number(refused.headers.get('retry-after'))).to.be.greaterThan(0);
    expect(await invoices(api.tenant.organizationId)).to.equal(3);
    const over = await api.create(body(customer.id));
    expect(over.status).to.equal(429);
    expect(await invoices(api.tenant.organizationId)).to.equal(3);
  });

  it('runs requests with an Idempotency-Key the normal way, replays included', async () => {
    const { api, customer } = await remembered();
    const key = { 'idempotency-key': `remembered-${customer.id}` };
    const first = await recorded(() => api.create(body(customer.id), key));
    expect(first.res.status).to.equal(201);
    expect(first.oneMessage).to.equal(false);
    const replay = await api.create(body(customer.id), key);
    expect(replay.headers.get('idempotent-replayed')).to.equal('true');
    expect(replay.body.data.id).to.equal(first.res.body.data.id);
    expect(await invoices(api.tenant.organizationId)).to.equal(2);
  });
});
