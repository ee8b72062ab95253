/**
 * Events in the log reach real receivers exactly as the reference describes
 * each convention: every header, the body fields, and the signature checked
 * byte for byte over the raw body with an independent HMAC.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { sql } from 'kysely';
import { pino } from 'pino';
import { comparePositions } from '../../src/eventstore/types.ts';
import { ProjectionRunner } from '../../src/projections/runner.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { createWebhookSubscriber, SUBSCRIBER_NAME } from '../../src/workers/webhooks/subscriber.ts';
import { startHarness, type Harness } from './harness.ts';
import { appendCustomer, appendInvoice, newEndpoint, newOrganization, Receiver, until, type Received } from './support.ts';

function expectSigned(r: Received, secret: string, convention: 'A' | 'B', sentAfter: number) {
  const h = r.headers;
  expect(h['content-type']).to.equal('application/json');
  expect(h['content-length']).to.equal(String(r.body.length));
  const [sigHeader, tsHeader] = convention === 'A' ? ['x-webhook-signature', 'x-webhook-timestamp'] : ['x-service-signature', 'x-service-timestamp'];
  const ts = String(h[tsHeader]);
  expect(ts).to.match(/^\d+$/);
  if (convention === 'A') {
    expect(Number(ts)).to.be.within(Math.floor(sentAfter / 1000), Math.ceil(r.at / 1000));
    expect(h['user-agent']).to.equal('Service-Webhooks/1.0');
  } else {
    expect(Number(ts)).to.be.within(sentAfter, r.at);
    expect(h['user-agent']).to.equal('Service-Webhook/1.0');
  }
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(Buffer.concat([Buffer.from(`${ts}.`), r.body])).digest('hex');
  const got = String(h[sigHeader]);
  const mac = convention === 'A' ? got.replace(/^v1=/, '') : got;
  if (convention === 'A') expect(got.startsWith('v1=')).to.equal(true);
  else expect(got).to.match(/^[0-9a-f]{64}$/);
  expect(timingSafeEqual(Buffer.from(mac, 'hex'), Buffer.from(expected, 'hex'))).to.equal(true);
}

describe('webhooks: delivery per convention', () => {
  let h: Harness;
  let receiver: Receiver;
  beforeEach(async () => {
    h = await startHarness();
    receiver = await new Receiver().start();
  });
  afterEach(async () => {
    await receiver.stop();
    await h.stop();
  });
  /** Waits until the subscriber's stored checkpoint is at or past `position`. */
  const subscriberPassed = (position: string) =>
    until(async () => {
      const row = await h.t.db.selectFrom('projection_checkpoints').select('position').where('name', '=', SUBSCRIBER_NAME).executeTakeFirst();
      return comparePositions(row?.position ?? null, position) >= 0;
    }, 5000);

  it('convention A: headers, body {event, data, organization_id, created_at}, v1= signature over the raw body', async () => {
    const org = await newOrganization(h.t.db);
    const ep = await newEndpoint(h.t.db, org, receiver.url('/a'), 'A');
    const before = Date.now();
    const [created, paid] = await appendInvoice(h.store, org, ['InvoiceCreated', 'InvoicePaid']);
    await until(() => receiver.requests.length === 2);
    const rows = await h.t.db.selectFrom('webhook_deliveries').selectAll().orderBy('next_attempt_at').execute();
    for (const [i, e] of [created, paid].entries()) {
      const r = receiver.requests.find((x) => JSON.parse(x.body.toString()).data.version === i)!;
      expectSigned(r, ep.secret, 'A', before);
      const name = i === 0 ? 'invoice.created' : 'invoice.paid';
      expect(r.headers['x-webhook-event']).to.equal(name);
      const row = rows.find((d) => d.event_id === e.id)!;
      expect(r.headers['x-webhook-delivery-id']).to.equal(row.id);
      // A UUID v7 like every id the service mints (migration 0090), its timestamp the delivery's creation.
      expect(row.id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(parseInt(row.id.replace(/-/g, '').slice(0, 12), 16)).to.be.within(before - 1000, Date.now());
      expect(r.body.toString('utf8')).to.equal(row.body); // the frozen bytes, as stored
      const body = JSON.parse(r.body.toString('utf8'));
      expect(Object.keys(body)).to.deep.equal(['event', 'data', 'organization_id', 'created_at']);
      expect(body).to.deep.include({ event: name, organization_id: org, created_at: e.metadata.occurred_at });
      expect(body.data).to.deep.equal((e.data as any).invoice); // the snapshot as of that event
      expect(r.path).to.equal('/a');
    }
    await until(async () => (await h.t.db.selectFrom('webhook_deliveries').where('status', '=', 'succeeded').select('id').execute()).length === 2);
  });

  it('convention B: headers, body {id, type, created, data, organization_id}, bare hex signature, ms timestamp', async () => {
    const org = await newOrganization(h.t.db);
    const ep = await newEndpoint(h.t.db, org, receiver.url('/b'), 'B');
    const before = Date.now();
    const e = await appendCustomer(h.store, org, 'CustomerArchived');
    await until(() => receiver.requests.length === 1);
    const r = receiver.requests[0];
    expectSigned(r, ep.secret, 'B', before);
    expect(r.headers['x-service-event']).to.equal('customer.deleted');
    const row = await h.t.db.selectFrom('webhook_deliveries').selectAll().executeTakeFirstOrThrow();
    expect(r.headers['x-service-delivery-id']).to.equal(row.id);
    const body = JSON.parse(r.body.toString('utf8'));
    expect(Object.keys(body)).to.deep.equal(['id', 'type', 'created', 'data', 'organization_id']);
    expect(body).to.deep.include({ id: e.id, type: 'customer.deleted', created: e.metadata.occurred_at, organization_id: org });
    expect(body.data).to.deep.equal((e.data as any).customer);
    expect(r.headers).to.not.have.property('x-webhook-signature');
  });

  it('one delivery per subscribed enabled endpoint of the event organization; nothing for others', async () => {
    const org = await newOrganization(h.t.db);
    const other = await newOrganization(h.t.db);
    const all = await newEndpoint(h.t.db, org, receiver.url('/all'), 'A');
    const onlyPaid = await newEndpoint(h.t.db, org, receiver.url('/paid'), 'B', ['invoice.paid']);
    const disabled = await newEndpoint(h.t.db, org, receiver.url('/disabled'), 'A');
    await h.t.db.updateTable('webhook_endpoints').set({ enabled: false }).where('id', '=', disabled.id).execute();
    await newEndpoint(h.t.db, other, receiver.url('/other'), 'A');
    // Internal events (finalization lock, numbering) and organization events publish nothing.
    await appendInvoice(h.store, org, ['InvoiceCreated', 'InvoiceFinalizationStarted', 'InvoiceFinalized', 'InvoicePaid']);
    const { position: last } = await h.store.appendToStream(`organization-${org}`, [{ id: randomUUID(), type: 'OrganizationArchived', data: {}, metadata: { organization_id: org, actor: 'system', request_id: null, correlation_id: null, causation_id: null, occurred_at: new Date().toISOString() } }], 'any');
    await until(() => receiver.requests.length >= 4);
    // Nothing more comes: the subscriber has passed every event, and the sender has looked for due deliveries since.
    await subscriberPassed(last);
    const seen = Date.now();
    await until(() => h.senders.every((s) => s.drainedAt > seen), 5000);
    const paths = receiver.requests.map((r) => `${r.path} ${r.headers['x-webhook-event'] ?? r.headers['x-service-event']}`).sort();
    expect(paths).to.deep.equal(['/all invoice.created', '/all invoice.finalized', '/all invoice.paid', '/paid invoice.paid']);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from webhook_deliveries where endpoint_id = ${onlyPaid.id}`.execute(h.t.db);
    expect(rows[0].n).to.equal(1);
    expect(all.id).to.be.a('string');
  });

  it('an endpoint gets the events that happen after it is added, not the history', async () => {
    // The subscriber is down while the history happens, so it reads both events after the endpoint exists.
    await h.runner.stop();
    const org = await newOrganization(h.t.db);
    await appendInvoice(h.store, org);
    // The endpoint's created_at must fall after the event's time (compared to the millisecond):
    // until the database clock has moved past the appended event's commit time.
    const appendedAt = (await h.store.readAll(null, 100_000)).at(-1)!.created_at.getTime();
    await until(async () => (await sql<{ ms: number }>`select extract(epoch from clock_timestamp()) * 1000 as ms`.execute(h.t.db)).rows[0].ms > appendedAt + 1, 5000);
    await newEndpoint(h.t.db, org, receiver.url(), 'A');
    await appendCustomer(h.store, org);
    const last = (await h.store.readAll(null, 100_000)).at(-1)!.position;
    const runner = new ProjectionRunner({ db: h.t.db, store: h.store, url: h.t.url, logger: silentLogger }, createWebhookSubscriber());
    runner.start();
    try {
      await until(() => receiver.requests.length === 1);
      await subscriberPassed(last);
      const seen = Date.now();
      await until(() => h.senders.every((s) => s.drainedAt > seen), 5000);
    } finally {
      await runner.stop();
    }
    expect(receiver.requests.map((r) => r.headers['x-webhook-event'])).to.deep.equal(['customer.created']);
  });

  it('events of an organization without an endpoint open no transaction; its first endpoint gets the next events', async () => {
    await h.runner.stop();
    const batches: string[][] = [];
    const subscriber = createWebhookSubscriber();
    const recording = { ...subscriber, apply: (events: any[], trx: any) => (batches.push(events.map((e) => e.id)), subscriber.apply(events, trx)) };
    const runner = new ProjectionRunner({ db: h.t.db, store: h.store, url: h.t.url, logger: silentLogger }, recording);
    runner.start();
    try {
      const org = await newOrganization(h.t.db);
      await appendInvoice(h.store, org, ['InvoiceCreated', 'InvoicePaid']);
      await subscriberPassed((await h.store.readAll(null, 100_000)).at(-1)!.position); // stored lazily, with no batch applied
      expect(batches).to.deep.equal([]);
      await newEndpoint(h.t.db, org, receiver.url('/first'), 'A');
      const created = await appendCustomer(h.store, org);
      await until(() => receiver.requests.length === 1);
      expect(batches).to.deep.equal([[created.id]]);
      expect(receiver.requests[0].headers['x-webhook-event']).to.equal('customer.created');
      // The organization's id in capitals (a uuid all the same) finds its endpoint too.
      const shouted = await appendCustomer(h.store, org.toUpperCase(), 'CustomerArchived');
      await until(() => receiver.requests.length === 2);
      expect(batches).to.deep.equal([[created.id], [shouted.id]]);
    } finally {
      await runner.stop();
    }
  });

  it('asks which organizations have an endpoint at most every 25 ms: a batch that comes sooner waits, and its later read sees an endpoint added meanwhile', async () => {
    // The subscriber's own clock: the waits it asks for are recorded (and pass at once), not timed.
    let now = 1_000_000;
    const sleeps: number[] = [];
    let duringSleep: (() => Promise<unknown>) | null = null;
    const clock = { now: () => now, sleep: async (ms: number) => { sleeps.push(ms); now += ms; await duringSleep?.(); } };
    const subscriber = createWebhookSubscriber(clock, 25);
    const recorded = async (org: string) => {
      const appended = await appendCustomer(h.store, org);
      return (await h.store.readStream(`customer-${(appended.data as any).customer.id}`))[0];
    };
    const [a, b, c, d] = [await newOrganization(h.t.db), await newOrganization(h.t.db), await newOrganization(h.t.db), await newOrganization(h.t.db)];
    const relevant = async (org: string) => {
      return (await subscriber.relevant!([await recorded(org)], h.t.db)).length;
    };
    // The first read does not wait.
    expect(await relevant(a)).to.equal(0);
    expect(sleeps).to.deep.equal([]);
    // 5 ms later another organization's batch waits the 20 ms left; an endpoint added during that wait is seen.
    now += 5;
    duringSleep = () => newEndpoint(h.t.db, b, receiver.url('/b'), 'A');
    expect(await relevant(b)).to.equal(1);
    expect(sleeps).to.deep.equal([20]);
    duringSleep = null;
    // An organization remembered with an endpoint is not read again: no wait, however soon.
    expect(await relevant(b)).to.equal(1);
    expect(sleeps).to.deep.equal([20]);
    // Once the last read is 25 ms old, a batch does not wait.
    now += 25;
    expect(await relevant(c)).to.equal(0);
    expect(sleeps).to.deep.equal([20]);
    now += 1;
    expect(await relevant(d)).to.equal(0);
    expect(sleeps).to.deep.equal([20, 24]);
  });

  it('logs name deliveries, endpoints and outcomes, never the secret', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    await h.senders[0].stop();
    h.addSender({ logger: pino({ level: 'debug' }, sink), retryDelaysMs: [100] });
    receiver.behavior = () => ({ status: 500 });
    const org = await newOrganization(h.t.db);
    const ep = await newEndpoint(h.t.db, org, receiver.url('/logs'), 'A');
    await appendInvoice(h.store, org);
    await until(() => lines.some((l) => l.includes('failed for good')));
    expect(lines.length).to.be.at.least(2);
    for (const line of lines) expect(line).to.not.include(ep.secret.slice(6));
    expect(lines.join('')).to.include(ep.id);
  });
});
