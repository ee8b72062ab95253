/**
 * Idempotency-Key across a crash (CONTRACT section 13: the same key and body
 * never do the work twice). A process that dies after appending a creation
 * but before storing the response leaves its key claimed, with no response,
 * until the lease runs out; the retry then takes the claim over. We put a
 * key in exactly that state (the dead attempt's resource exists, its response
 * was never stored, its lease is over) and retry: the retry must answer with
 * the resource the dead attempt created, not create a second one.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { randomUUID } from 'node:crypto';
import { claim, organizationSlotScope, readReservation, release } from '../../src/commands/reservation/index.ts';
import { releaseFormerIce } from '../../src/commands/organization/handler.ts';
import { derivedV7 } from '../../src/shared/derived-id.ts';
import { newIce } from '../customers/support.ts';
import { call, createKey, createTenant, type Tenant } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { newAccount } from './organization-support.ts';

describe('Idempotency-Key: a retry after the first attempt died', function () {
  this.timeout(60_000);
  let server: TestServer;
  let tenant: Tenant;
  let n = 0;
  const freshKey = () => `crash-${process.pid}-${++n}`;

  before(async () => {
    server = await startTestServer();
    tenant = await createTenant(server.database.db, { plan: 'fiduciaire', organization: { ice: newIce() } });
  });
  after(() => server?.stop());

  /** The state a process killed between its append and storing the response leaves behind. */
  async function dieAfterTheWork(key: string): Promise<void> {
    const { numAffectedRows } = await sql`
      update idempotency_keys set completed = false, response_status = null, response_body = null, response_headers = null,
             locked_until = now() - interval '1 second'
       where idempotency_key = ${key}`.execute(server.database.db);
    expect(Number(numAffectedRows)).to.equal(1);
  }

  const systemMetadata = () => ({ organization_id: null, actor: 'system', request_id: null, correlation_id: null, causation_id: null, occurred_at: new Date().toISOString() });
  const post = (path: string, key: string, body: unknown, secret = tenant.key.secret) =>
    call(`${server.url}${path}`, secret, { method: 'POST', body, headers: { 'idempotency-key': key } });

  it('POST /customers: the retry answers the customer the dead attempt created', async () => {
    const key = freshKey();
    const body = { name: 'Atlas Conseil SARL', type: 'b2b', ice: newIce() };
    const first = await post('/customers', key, body);
    expect(first.status).to.equal(201);
    await dieAfterTheWork(key);
    const retry = await post('/customers', key, body);
    expect(retry.status, JSON.stringify(retry.body)).to.equal(201);
    expect(retry.headers.get('idempotent-replayed')).to.equal(null); // it ran again, and found the customer
    expect(retry.body.data).to.deep.equal(first.body.data);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from customers where organization_id = ${tenant.organizationId} and ice = ${body.ice}`.execute(server.database.db);
    expect(rows[0].n).to.equal(1);
    // Stored this time: a third attempt is a plain replay.
    const third = await post('/customers', key, body);
    expect(third.headers.get('idempotent-replayed')).to.equal('true');
    expect(third.body.data.id).to.equal(first.body.data.id);
  });

  it('POST /invoices: the retry answers the invoice the dead attempt created (one invoice, one InvoiceCreated)', async () => {
    const customer = (await post('/customers', freshKey(), { name: 'Client', type: 'b2c' })).body.data;
    const key = freshKey();
    const body = { customer_id: customer.id, issue_date: '2026-11-22', items: [{ description: 'Audit', quantity: 3, unit_price: '0.335', tax_rate: 20 }] };
    const first = await post('/invoices', key, body);
    expect(first.status).to.equal(201);
    await dieAfterTheWork(key);
    const retry = await post('/invoices', key, body);
    expect(retry.status, JSON.stringify(retry.body)).to.equal(201);
    expect(retry.body.data).to.deep.equal(first.body.data);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from invoices where organization_id = ${tenant.organizationId} and customer_id = ${customer.id}`.execute(server.database.db);
    expect(rows[0].n).to.equal(1);
    const events = await call(`${server.url}/invoices/${first.body.data.id}/events`, tenant.key.secret);
    expect(events.body.data.map((e: { type: string }) => e.type)).to.deep.equal(['invoice.created']);
  });

  it('POST /invoices/{id}/finalize, /send, /pay: the retry answers 200 with the invoice, the action done once', async () => {
    const customer = (await post('/customers', freshKey(), { name: 'Atlas', type: 'b2b', ice: newIce() })).body.data;
    const draft = (await post('/invoices', freshKey(), { customer_id: customer.id, issue_date: '2026-11-22', items: [{ description: 'Audit', quantity: 1, unit_price: 100 }] })).body.data;
    const actions: [string, unknown][] = [['finalize', undefined], ['send', undefined], ['pay', { payment_method: 'bank_transfer', payment_reference: 'VIR-1' }]];
    for (const [action, body] of actions) {
      const key = freshKey();
      const first = await post(`/invoices/${draft.id}/${action}`, key, body);
      expect(first.status, `${action}: ${JSON.stringify(first.body)}`).to.equal(200);
      await dieAfterTheWork(key);
      const retry = await post(`/invoices/${draft.id}/${action}`, key, body);
      expect(retry.status, `${action} retried: ${JSON.stringify(retry.body)}`).to.equal(200);
      expect(retry.body.data, action).to.deep.equal(first.body.data);
    }
    const events = await call(`${server.url}/invoices/${draft.id}/events`, tenant.key.secret);
    expect(events.body.data.map((e: { type: string }) => e.type)).to.deep.equal([
      'invoice.created', 'invoice.finalization_started', 'invoice.finalized', 'invoice.sent', 'invoice.paid',
    ]);
  });

  it('a retried finalize answers the same number; the same action under another key is the usual 409', async () => {
    const customer = (await post('/customers', freshKey(), { name: 'Oasis', type: 'b2c' })).body.data;
    const draft = (await post('/invoices', freshKey(), { customer_id: customer.id, issue_date: '2026-11-22', items: [{ description: 'Audit', quantity: 1, unit_price: 100 }] })).body.data;
    const key = freshKey();
    const first = await post(`/invoices/${draft.id}/finalize`, key, undefined);
    expect(first.status).to.equal(200);
    await dieAfterTheWork(key);
    const retry = await post(`/invoices/${draft.id}/finalize`, key, undefined);
    expect(retry.body.data.invoice_number).to.equal(first.body.data.invoice_number);
    // Another key is another request: the usual 409 for a finalized invoice.
    const other = await post(`/invoices/${draft.id}/finalize`, freshKey(), undefined);
    expect(other.status).to.equal(409);
    expect(other.body.error.code).to.equal('INVOICE_NOT_DRAFT');
  });

  it('POST /organizations: the retry answers the organization the dead attempt provisioned', async () => {
    const account = await newAccount(server, 'fiduciaire');
    const key = freshKey();
    const body = { legal_name: 'Sahara Logistique SARL', ice: newIce() };
    const first = await post('/organizations', key, body, account.accountKey.secret);
    expect(first.status, JSON.stringify(first.body)).to.equal(201);
    await dieAfterTheWork(key);
    const retry = await post('/organizations', key, body, account.accountKey.secret);
    expect(retry.status, JSON.stringify(retry.body)).to.equal(201);
    expect(retry.body.data.id).to.equal(first.body.data.id);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from organizations where account_id = ${account.accountId}`.execute(server.database.db);
    expect(rows[0].n).to.equal(1);
  });

  it('POST /organizations: the retry claims no second entity slot, and a failure cannot free the existing one', async () => {
    const account = await newAccount(server, 'professional'); // cap 3
    const store = server.server.runtime.store;
    const slots = organizationSlotScope(account.accountId);
    const ghost = randomUUID(); // a provisioning that crashed after claiming slot 1
    await claim(store, slots, '1', ghost, systemMetadata());
    const key = freshKey();
    const ice = newIce();
    const body = { legal_name: 'Org O', ice };
    const first = await post('/organizations', key, body, account.accountKey.secret);
    expect(first.status).to.equal(201);
    const o = first.body.data.id;
    await dieAfterTheWork(key);
    await release(store, slots, '1', ghost, systemMetadata()); // slot 1 free again
    // O replaces its ICE, the operator frees the old one (an ICE is never reused otherwise), and someone else
    // takes it: the retry must not stumble on it either.
    const orgKey = await createKey(server.database.db, { accountId: account.accountId, organizationId: o });
    expect((await call(`${server.url}/organization`, orgKey.secret, { method: 'PATCH', body: { ice: newIce() } })).status).to.equal(200);
    expect((await releaseFormerIce(store, ice, systemMetadata())).outcome).to.equal('released');
    expect((await post('/organizations', freshKey(), { legal_name: 'Org P', ice }, account.accountKey.secret)).status).to.equal(201);
    const retry = await post('/organizations', key, body, account.accountKey.secret);
    expect(retry.status, JSON.stringify(retry.body)).to.equal(201);
    expect(retry.body.data.id).to.equal(o);
    const owners = await Promise.all(['1', '2', '3'].map(async (n) => (await readReservation(store, slots, n)).owner));
    expect(owners.filter((x) => x === o), 'slots held by O').to.have.length(1);
  });

  it('POST /customers: the retry answers the customer even after its ICE moved to another customer', async () => {
    const key = freshKey();
    const ice = newIce();
    const first = await post('/customers', key, { name: 'Old ICE', type: 'b2b', ice });
    expect(first.status).to.equal(201);
    await dieAfterTheWork(key);
    const moved = await call(`${server.url}/customers/${first.body.data.id}`, tenant.key.secret, { method: 'PATCH', body: { ice: newIce() } });
    expect(moved.status).to.equal(200);
    expect((await post('/customers', freshKey(), { name: 'Takes it', type: 'b2b', ice })).status).to.equal(201);
    const retry = await post('/customers', key, { name: 'Old ICE', type: 'b2b', ice });
    expect(retry.status, JSON.stringify(retry.body)).to.equal(201);
    expect(retry.body.data.id).to.equal(first.body.data.id);
  });

  it('a 5xx keeps the seed: the retry of the same request finds what the failed attempt created', async () => {
    const key = freshKey();
    const body = { name: 'Five hundred', type: 'b2c' };
    const first = await post('/customers', key, body);
    // As if the attempt had failed with a 5xx after its append: the pipeline ends the lease.
    await sql`update idempotency_keys set completed = false, response_status = null, response_body = null, response_headers = null,
               locked_until = now() - interval '1 millisecond' where idempotency_key = ${key}`.execute(server.database.db);
    const retry = await post('/customers', key, body);
    expect(retry.status).to.equal(201);
    expect(retry.body.data.id).to.equal(first.body.data.id);
  });

  it('POST /organizations/{id}/archive and /restore: the retry answers 200 with the organization, done once', async () => {
    const account = await newAccount(server, 'fiduciaire');
    const org = (await post('/organizations', freshKey(), { legal_name: 'Rif Export SARL' }, account.accountKey.secret)).body.data;
    for (const action of ['archive', 'restore']) {
      const key = freshKey();
      const first = await post(`/organizations/${org.id}/${action}`, key, undefined, account.accountKey.secret);
      expect(first.status, `${action}: ${JSON.stringify(first.body)}`).to.equal(200);
      await dieAfterTheWork(key);
      const retry = await post(`/organizations/${org.id}/${action}`, key, undefined, account.accountKey.secret);
      expect(retry.status, `${action} retried: ${JSON.stringify(retry.body)}`).to.equal(200);
      expect(retry.body.data, action).to.deep.equal(first.body.data);
    }
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from es_events where stream_id = ${`organization-${org.id}`} and type in ('OrganizationArchived', 'OrganizationRestored')`.execute(server.database.db);
    expect(rows[0].n).to.equal(2);
  });

  it('a different body cannot take over an attempt that died: 409 IDEMPOTENCY_KEY_REUSED', async () => {
    const key = freshKey();
    expect((await post('/customers', key, { name: 'A', type: 'b2c' })).status).to.equal(201);
    await dieAfterTheWork(key);
    const other = await post('/customers', key, { name: 'B', type: 'b2c' });
    expect(other.status).to.equal(409);
    expect(other.body.error.code).to.equal('IDEMPOTENCY_KEY_REUSED');
  });

  it('without the key, or with another key, creations get fresh ids', async () => {
    const a = await call(`${server.url}/customers`, tenant.key.secret, { method: 'POST', body: { name: 'C', type: 'b2c' } });
    const b = await post('/customers', freshKey(), { name: 'C', type: 'b2c' });
    const c = await post('/customers', freshKey(), { name: 'C', type: 'b2c' });
    expect(new Set([a.body.data.id, b.body.data.id, c.body.data.id]).size).to.equal(3);
  });
});

describe('derivedV7', () => {
  const seed = '01a2048c-9b01-74ff-8c86-73b193a3bcec';
  it('is a UUID v7 with the seed’s timestamp, the same for the same seed and label, different otherwise', () => {
    const id = derivedV7(seed, 'invoice');
    expect(id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(id.replace(/-/g, '').slice(0, 12)).to.equal(seed.replace(/-/g, '').slice(0, 12));
    expect(derivedV7(seed.toUpperCase(), 'invoice')).to.equal(id);
    expect(derivedV7(seed, 'customer')).to.not.equal(id);
    expect(derivedV7('01a2048c-9b01-74ff-8c86-73b193a3bced', 'invoice')).to.not.equal(id);
    expect(() => derivedV7('nope', 'invoice')).to.throw(TypeError);
  });
});
