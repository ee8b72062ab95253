/**
 * Inline projections on the PostgreSQL event store (src/projections/inline.ts,
 * docs/architecture.md "Inline projections"): rows committed with their
 * events, writes answered without waiting for a runner, runners that do not
 * apply an event an append wrote inline (this process's or another's, but for what a rebuild swapped away), `projections verify` with rows
 * ahead of the checkpoint (and, with inline projections off, without them),
 * and a projector bug that refuses the write
 * cleanly (500 with the request id, an alert in the log, neither the event
 * nor any row written).
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { pino } from 'pino';
import { loadConfig, type Role } from '../../src/config.ts';
import { processParts } from '../../src/main.ts';
import type { Projector } from '../../src/projections/projector.ts';
import { verifyProjection } from '../../src/projections/verify.ts';
import { rebuildProjection } from '../../src/projections/rebuild.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { finalizeInvoice } from '../../src/commands/invoice/handler-finalize.ts';
import { createInvoice, updateInvoice } from '../../src/commands/invoice/handlers.ts';
import { readModelFacts } from '../../src/queries/invoice-facts.ts';
import { systemMetadata } from '../../src/commands/command.ts';
import { storeWith } from '../support/event-store.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { call } from '../support/fixtures.ts';
import { until } from '../support/wait.ts';
import { bindClient, invoicesClient, type InvoicesClient } from '../invoices/support.ts';

interface Started {
  server: RunningServer;
  url: string;
  database: TestDatabase;
  logs: any[];
  /** Event ids each projector's apply was called with, in order (inline and runner alike). */
  applied: Map<string, string[]>;
}

/**
 * A server on a fresh database (or `on` one) whose projectors record what they apply; `bug` makes one
 * throw; `roles`: what the process runs (the split layout of docs/scaling.md runs api and projector apart).
 */
async function start(
  bug?: { projector: string; when: (e: any) => boolean },
  inline: 'true' | 'false' | 'auto' = 'true',
  { on, roles = ['api', 'projector'] }: { on?: TestDatabase; roles?: Role[] } = {},
): Promise<Started> {
  const database = on ?? (await freshDatabase());
  const logs: any[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void logs.push(JSON.parse(line)) });
  const applied = new Map<string, string[]>();
  const record = (name: string, events: readonly { id: string }[]) => applied.set(name, [...(applied.get(name) ?? []), ...events.map((e) => e.id)]);
  const projectors: Projector[] = processParts.projectors.map((p) => ({
    ...p,
    async apply(events, trx, options) {
      if (bug?.projector === p.name && events.some(bug.when)) throw new Error('projector bug (test)');
      record(p.name, events);
      return p.apply(events, trx, options);
    },
    // A write the projector says in the append's message (a creation) is applied there, not by apply().
    statements:
      p.statements &&
      ((events, literal) => {
        if (bug?.projector === p.name && events.some(bug.when)) throw new Error('projector bug (test)');
        const statements = p.statements!(events, literal);
        if (statements !== null) record(p.name, events);
        return statements;
      }),
  }));
  const config = loadConfig({ DATABASE_URL: database.url, PORT: '0', INLINE_PROJECTIONS: inline });
  const server = await startServer(config, logger, roles, { ...processParts, projectors, workers: [] });
  return { server, url: server.url!, database, logs, applied };
}

async function stop(s: Started | undefined): Promise<void> {
  await s?.server.stop();
  await s?.database.drop();
}

describe('inline projections (PostgreSQL event store)', function () {
  this.timeout(60_000);

  describe('rows commit with their events', () => {
    let s: Started;
    let api: InvoicesClient;
    before(async () => {
      s = await start();
      api = await invoicesClient({ url: s.url, database: s.database });
    });
    after(() => stop(s));

    it('answers a write from its row with no projector runner running (nothing to wait for)', async () => {
      const customer = await api.customer();
      // With the runners stopped, an async projection would make the write wait 5 s and answer the decided state.
      await Promise.all(s.server.runners.map((r) => r.stop()));
      const created = await api.create({ customer_id: customer.id, issue_date: '2026-03-14', items: [{ description: 'Audit', quantity: 3, unit_price: '1250.50', tax_rate: 20 }] });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const finalized = await api.action(created.body.data.id, 'finalize');
      expect(finalized.status, JSON.stringify(finalized.body)).to.equal(200);
      expect(s.logs.filter((l) => /projectors? behind/.test(l.msg))).to.deep.equal([]);
      // The answer is the row as any read shows it, and the row is in the table.
      const read = await api.get(created.body.data.id);
      expect(read.body.data).to.deep.equal(finalized.body.data);
      expect(read.headers.get('etag')).to.equal(finalized.headers.get('etag'));
      const { rows } = await sql<{ status: string; version: number }>`select status, version from invoices where id = ${created.body.data.id}`.execute(s.database.db);
      expect(rows).to.deep.equal([{ status: 'finalized', version: finalized.body.data.version ?? rows[0].version }]);

      const flags = await sql<{ applied_inline: boolean }>`select applied_inline from es_events where stream_id = ${`invoice-${created.body.data.id}`}`.execute(s.database.db);
      expect(flags.rows.length).to.be.at.least(2);
      expect(flags.rows.every((r) => r.applied_inline), 'events appended with their rows are marked so').to.equal(true);
      // projections verify: live rows ahead of the (stopped) runner's checkpoint still equal a replay.
      // (organizations is left out: the fixtures insert the tenant's organization row without an event.)
      for (const p of s.server.runtime.projectors.filter((p) => p.inline && p.name !== 'organizations')) {
        const result = await verifyProjection(s.database.db, s.server.runtime.store, p);
        expect(result.differences, p.name).to.deep.equal([]);
      }
    });
  });

  for (const mode of ['true', 'false'] as const) describe(`a write answers the state it decided, which is its row as a read shows it (INLINE_PROJECTIONS=${mode})`, () => {
    let s: Started;
    let api: InvoicesClient;
    /** Names of the statements the server's pool ran (the invoice read is 'invoices.get'). */
    let named: string[] = [];
    before(async () => {
      s = await start(undefined, mode);
      api = await invoicesClient({ url: s.url, database: s.database });
      const pool = s.server.runtime.database.pool;
      const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
      (pool as { query: unknown }).query = (...args: unknown[]) => {
        const first = args[0] as { name?: string };
        if (first && typeof first === 'object' && first.name) named.push(first.name);
        return query(...args);
      };
    });
    after(() => stop(s));

    /** The write's answer, member for member and in the same order, is what GET shows, with the same ETag; the write read no row back. */
    async function expectAnswerIsRow(write: () => Promise<{ status: number; headers: Headers; body: any }>, status: number) {
      named = [];
      const written = await write();
      expect(written.status, JSON.stringify(written.body)).to.equal(status);
      expect(named, 'the answer was not read back from the row').to.not.include('invoices.get');
      const read = await api.get(written.body.data.id);
      expect(named, 'the watch sees the read a GET makes (so its absence above means something)').to.include('invoices.get');
      expect(JSON.stringify(written.body.data)).to.equal(JSON.stringify(read.body.data));
      expect(written.headers.get('etag')).to.equal(read.headers.get('etag'));
      return written.body.data;
    }

    it('for a create, an edit and every step of the lifecycle, in several shapes', async () => {
      const customer = await api.customer({ address: { street: '12 Boulevard Zerktouni', city: 'Casablanca', postal_code: '20000', country: 'MA' } });
      const bare = await api.customer({ type: 'b2c', ice: undefined, email: undefined, phone: undefined, address: undefined });
      const shapes = [
        { customer_id: customer.id, issue_date: '2026-03-14', items: [{ description: 'Audit', quantity: 3, unit_price: '1250.50', tax_rate: 20 }] },
        {
          customer_id: customer.id.toUpperCase(),
          issue_date: '2026-01-31',
          due_date: '2026-03-31',
          payment_terms: 'Net 60',
          notes: 'Merci pour votre confiance',
          internal_notes: 'relancer en mars',
          items: [
            { description: 'Conseil', quantity: '2.5', unit_price: '1000', tax_rate: 20 },
            { description: 'Transport', quantity: 1, unit_price: '0.333', tax_rate: 14 },
            { description: 'Formation', quantity: '10', unit_price: '99.99', tax_rate: 10 },
            { description: 'Livre', quantity: 4, unit_price: '120', tax_rate: 0 },
          ],
        },
        { customer_id: bare.id, issue_date: '2026-12-01', items: [{ description: 'Vente au détail', quantity: 1, unit_price: '49.90', tax_rate: 20 }] },
      ];
      const created: { id: string }[] = [];
      for (const shape of shapes) created.push(await expectAnswerIsRow(() => api.create(shape), 201));
      await expectAnswerIsRow(() => api.patch(created[0].id, { notes: 'Modifiée', items: [{ description: 'Audit', quantity: 2, unit_price: '1250.50', tax_rate: 20 }] }), 200);
      await expectAnswerIsRow(() => api.patch(created[2].id, { customer_id: customer.id }), 200);
      for (const invoice of created) await expectAnswerIsRow(() => api.action(invoice.id, 'finalize'), 200);
      await expectAnswerIsRow(() => api.action(created[0].id, 'send'), 200);
      await expectAnswerIsRow(() => api.action(created[0].id, 'pay', { payment_method: 'bank_transfer', payment_reference: 'VIR-2026-0042' }), 200);
      await expectAnswerIsRow(() => api.action(created[1].id, 'void', { reason: 'Erreur de facturation' }), 200);
      expect(s.logs.filter((l) => /projectors? behind/.test(l.msg))).to.deep.equal([]);
    });
  });

  describe('INLINE_PROJECTIONS=auto: inline, creations under load in groups', () => {
    let s: Started;
    let api: InvoicesClient;
    before(async () => {
      s = await start(undefined, 'auto');
      api = await invoicesClient({ url: s.url, database: s.database });
    });
    after(() => stop(s));

    const inlineFlags = async (ids: string[]) =>
      (await sql<{ applied_inline: boolean }>`select applied_inline from es_events where stream_id = any(${ids.map((id) => `invoice-${id}`)}::text[])`.execute(s.database.db)).rows.map((r) => r.applied_inline);

    it('creations at the same time are written inline in groups, one transaction each, answered as a GET answers', async () => {
      const customer = await api.customer();
      const created = await Promise.all(Array.from({ length: 64 }, () => api.create({ customer_id: customer.id, issue_date: '2026-03-14', items: [{ description: 'Audit', quantity: 1, unit_price: '100', tax_rate: 20 }] })));
      for (const c of created) {
        expect(c.status, JSON.stringify(c.body)).to.equal(201);
        expect((await api.get(c.body.data.id)).body.data).to.deep.equal(c.body.data);
      }
      const ids = created.map((c) => c.body.data.id);
      expect((await inlineFlags(ids)).filter((f) => !f), 'every creation written with its rows').to.deep.equal([]);
      const { rows } = await sql<{ transactions: number }>`
        select count(distinct transaction_id)::int as transactions from es_events where stream_id = any(${ids.map((id) => `invoice-${id}`)}::text[])`.execute(s.database.db);
      expect(rows[0].transactions, 'creations in flight together committed together').to.be.lessThan(64);
      expect(s.logs.filter((l) => /projectors? behind/.test(l.msg))).to.deep.equal([]);
    });

    it('under load, writes that change existing invoices go inline too, each in its own transaction', async () => {
      const customer = await api.customer();
      const drafts = [];
      for (let i = 0; i < 24; i++) drafts.push(await api.draft(customer.id));
      const finalized = await Promise.all(drafts.map((d) => api.action(d.id, 'finalize')));
      for (const f of finalized) expect(f.status, JSON.stringify(f.body)).to.equal(200);
      const { rows } = await sql<{ type: string; applied_inline: boolean }>`
        select type, applied_inline from es_events where stream_id = any(${drafts.map((d) => `invoice-${d.id}`)}::text[]) and type <> 'InvoiceCreated'`.execute(s.database.db);
      expect(rows.length).to.equal(48);
      expect(rows.filter((r) => !r.applied_inline), 'every lock and completion written inline').to.deep.equal([]);
      for (const f of finalized) expect((await api.get(f.body.data.id)).body.data).to.deep.equal(f.body.data);
    });

    it('a lone write is answered from its row with no runner running', async () => {
      const customer = await api.customer();
      await Promise.all(s.server.runners.map((r) => r.stop())); // an async write would now wait 5 s and answer the decided state
      const created = await api.create({ customer_id: customer.id, issue_date: '2026-03-14', items: [{ description: 'Audit', quantity: 3, unit_price: '1250.50', tax_rate: 20 }] });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const finalized = await api.action(created.body.data.id, 'finalize');
      expect(finalized.status, JSON.stringify(finalized.body)).to.equal(200);
      expect(finalized.body.data).to.include({ status: 'finalized' });
      expect((await api.get(created.body.data.id)).body.data).to.deep.equal(finalized.body.data);
      expect(s.logs.filter((l) => /projectors? behind/.test(l.msg))).to.deep.equal([]);
      expect(await inlineFlags([created.body.data.id])).to.deep.equal([true, true, true]);
    });
  });

  describe('projections verify past a stopped runner, inline projections off', () => {
    let s: Started;
    before(async () => {
      s = await start(undefined, 'false');
    });
    after(() => stop(s));

    it('leaves out the events no runner has applied yet, as the live rows do', async () => {
      const api = await invoicesClient({ url: s.url, database: s.database });
      const customer = await api.customer();
      await api.draft(customer.id);
      const head = await s.server.runtime.store.headPosition();
      await until(() => s.server.runners.every((r) => (s.server.runtime.progress.position(r.projector.name) ?? '') >= (head ?? '')), 20_000, 'runners at the head');
      await Promise.all(s.server.runners.map((r) => r.stop()));
      // Appended past the stopped runners' checkpoints, not inline: in the log, not yet in the rows.
      const late = await api.customer({ name: 'Client après le point de reprise' });
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from customers where id = ${late.id}`.execute(s.database.db);
      expect(rows[0].n, 'the runner is stopped: no row yet').to.equal(0);
      const flags = await sql<{ applied_inline: boolean }>`select applied_inline from es_events where stream_id = ${`customer-${late.id}`}`.execute(s.database.db);
      expect(flags.rows).to.deep.equal([{ applied_inline: false }]);
      for (const p of s.server.runtime.projectors.filter((p) => p.name !== 'organizations')) {
        const result = await verifyProjection(s.database.db, s.server.runtime.store, p);
        expect(result.differences, p.name).to.deep.equal([]);
      }
    });
  });

  describe('the decided answer, inline projections off and the runners stopped', () => {
    let s: Started;
    before(async () => (s = await start(undefined, 'false')));
    after(() => stop(s));

    it('shows an issued invoice with the buyer frozen at finalize, as its row does, not the customer as it is now', async () => {
      const api = await invoicesClient({ url: s.url, database: s.database });
      const customer = await api.customer();
      const finalized = await api.finalized(customer.id);
      // Answered once the customers read model shows it: the decided answer would read the new name.
      const renamed = await call(`${s.url}/customers/${customer.id}`, api.secret, { method: 'PATCH', body: { name: 'Nouveau Nom SARL' } });
      expect(renamed.status, JSON.stringify(renamed.body)).to.equal(200);
      await Promise.all(s.server.runners.map((r) => r.stop()));
      // No runner: the send waits its 5 s for the invoices projector, then answers the decided state.
      const sent = await api.action(finalized.id, 'send');
      expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
      expect(s.logs.some((l) => /projectors behind, answering the decided state/.test(l.msg)), 'the decided answer was taken').to.equal(true);
      expect(sent.body.data).to.include({ status: 'sent', customer_name: finalized.customer_name });
      expect(sent.body.data.customer).to.deep.equal(finalized.customer);
    });
  });

  describe('runners', () => {
    let s: Started;
    before(async () => {
      s = await start();
    });
    after(() => stop(s));

    it('do not apply again an event this process applied inline, and reach the head', async () => {
      const api = await invoicesClient({ url: s.url, database: s.database });
      const customer = await api.customer();
      const drafts = await Promise.all(Array.from({ length: 20 }, () => api.draft(customer.id)));
      await Promise.all(drafts.slice(0, 5).map((d) => api.action(d.id, 'finalize')));
      const head = await s.server.runtime.store.headPosition();
      await until(() => s.server.runners.every((r) => (s.server.runtime.progress.position(r.projector.name) ?? '') >= (head ?? '')), 20_000, 'runners at the head');
      const { rows } = await sql<{ id: string; type: string }>`select event_id as id, type from es_events`.execute(s.database.db);
      for (const name of ['invoices', 'customers', 'invoice-numbers']) {
        const ids = s.applied.get(name) ?? [];
        expect(new Set(ids).size, `${name}: an event applied twice`).to.equal(ids.length);
        const handled = s.server.runtime.projectors.find((p) => p.name === name)!.handles;
        expect(ids.length, `${name}: every event of its types applied once`).to.equal(rows.filter((r) => handled.includes(r.type)).length);
      }
      // The numbers' audit table is inline too: each of the five numbers written once, in its finalize's message.
      expect((s.applied.get('invoice-numbers') ?? []).length).to.equal(5);
      const numbers = await sql<{ n: number }>`select count(*)::int as n from invoice_numbers`.execute(s.database.db);
      expect(numbers.rows[0].n).to.equal(5);
    });
  });

  describe('a finalize decided after an edit that came later than its request', () => {
    let s: Started;
    before(async () => {
      s = await start();
    });
    after(() => stop(s));

    it('is stamped no earlier than the edit it froze, in one transaction and lock first (the EventStoreDB way)', async () => {
      const api = await invoicesClient({ url: s.url, database: s.database });
      const customer = await api.customer();
      const rt = s.server.runtime;
      const organizationId = api.tenant.organizationId;
      const at = (ms: number) => systemMetadata({ organization_id: organizationId, occurred_at: new Date(ms).toISOString() });
      // Without appendToStreams the lock goes alone and completeFinalization stamps the completion.
      const lockFirst = storeWith(rt.store, { appendToStreams: undefined });
      for (const store of [rt.store, lockFirst]) {
        const w = (ms: number) => ({ store, organizationId, facts: readModelFacts(rt.database.pool), metadata: at(ms) });
        const now = Date.now();
        const created = await createInvoice(w(now - 60_000), { customer_id: customer.id, issue_date: '2026-03-14', items: [{ description: 'Audit', quantity: 1, unit_price: '100.00', tax_rate: 20 }] });
        const edited = await updateInvoice(w(now), created.invoice.id, { notes: 'edited' });
        // The finalize's request arrived 30 s before the edit, and is decided on the edited invoice.
        const finalized = await finalizeInvoice(w(now - 30_000), created.invoice.id);
        expect(finalized.invoice.finalized_at, store === rt.store ? 'one transaction' : 'lock first').to.equal(edited.invoice.updated_at);
        const times = (await rt.store.readStream(`invoice-${created.invoice.id}`)).map((e) => e.metadata.occurred_at);
        expect(times, 'occurred_at in order').to.deep.equal([...times].sort());
        expect(times.at(-1)).to.equal(edited.invoice.updated_at);
      }
    });
  });

  describe('the background store (the scheduler\'s writes)', () => {
    let s: Started;
    before(async () => {
      s = await start();
    });
    after(() => stop(s));

    it('appends without rows or marks; the runners write them, once; closing it leaves the store open', async () => {
      const api = await invoicesClient({ url: s.url, database: s.database });
      const customer = await api.customer();
      const rt = s.server.runtime;
      const background = rt.backgroundStore;
      expect(background).to.not.equal(rt.store);
      const organizationId = api.tenant.organizationId;
      const w = { store: background, organizationId, facts: readModelFacts(rt.database.pool), metadata: { organization_id: organizationId, actor: 'system', request_id: null, correlation_id: null, causation_id: null, occurred_at: new Date().toISOString() } };
      const created = await createInvoice(w, { customer_id: customer.id, issue_date: '2026-03-14', items: [{ description: 'Audit', quantity: 1, unit_price: '100.00', tax_rate: 20 }] });
      const finalized = await finalizeInvoice(w, created.invoice.id);
      const stream = `invoice-${created.invoice.id}`;
      const marks = await sql<{ inline_projectors: number; applied_inline: boolean }>`select inline_projectors, applied_inline from es_events where stream_id = ${stream}`.execute(s.database.db);
      expect(marks.rows.length).to.be.at.least(2);
      expect(marks.rows.every((r) => r.inline_projectors === 0 && !r.applied_inline)).to.equal(true);
      // The runners write the rows (this process's, woken by the append as for any other).
      await until(async () => (await api.get(created.invoice.id)).body.data?.status === 'finalized', 20_000, 'the runners wrote the row');
      expect((await api.get(created.invoice.id)).body.data).to.include({ invoice_number: finalized.invoice.invoice_number, total: finalized.invoice.total });
      const ids = (await sql<{ id: string }>`select event_id as id from es_events where stream_id = ${stream}`.execute(s.database.db)).rows.map((r) => r.id);
      const applied = s.applied.get('invoices') ?? [];
      for (const id of ids) expect(applied.filter((a) => a === id), 'applied once').to.have.length(1);
      // Its close is the store's to do: closing the view leaves the store and its subscriptions (the runners') running.
      await background.close();
      expect((await api.create({ customer_id: customer.id, issue_date: '2026-03-14', items: [{ description: 'Audit', quantity: 1, unit_price: '1.00', tax_rate: 20 }] })).status).to.equal(201);
      const later = await createInvoice(w, { customer_id: customer.id, issue_date: '2026-03-14', items: [{ description: 'Audit', quantity: 1, unit_price: '2.00', tax_rate: 20 }] });
      await until(async () => (await api.get(later.invoice.id)).status === 200, 10_000, 'the runners still follow the log');
    });
  });

  describe('runners of another process', () => {
    let api: Started | undefined;
    let worker: Started | undefined;
    let later: Started | undefined;
    afterEach(async () => {
      await later?.server.stop();
      await worker?.server.stop();
      await stop(api);
    });

    it('skip what an append wrote inline, but apply again what a rebuild swapped away', async () => {
      // An API process without runners writes inline; a worker process runs them (docs/scaling.md).
      api = await start(undefined, 'true', { roles: ['api'] });
      worker = await start(undefined, 'true', { on: api.database, roles: ['projector'] });
      const client = await invoicesClient({ url: api.url, database: api.database });
      const customer = await client.customer();
      const drafts = await Promise.all(Array.from({ length: 20 }, () => client.draft(customer.id)));
      await Promise.all(drafts.slice(0, 5).map((d) => client.action(d.id, 'finalize')));
      const atHead = async (s: Started) => {
        const head = await s.server.runtime.store.headPosition();
        await until(() => s.server.runners.every((r) => (s.server.runtime.progress.position(r.projector.name) ?? '') >= (head ?? '')), 20_000, 'runners at the head');
      };
      await atHead(worker);
      // The worker's runners started before any write: nothing of the API's to apply again.
      for (const name of ['invoices', 'customers', 'invoice-numbers']) expect(worker.applied.get(name) ?? [], name).to.deep.equal([]);
      const marks = await sql<{ n: number }>`select count(*)::int as n from es_events where inline_projectors = 0 and type like 'Invoice%'`.execute(api.database.db);
      expect(marks.rows[0].n, 'invoice events appended without their mark').to.equal(0);

      // A rebuild while the API writes: its swap replaces the rows written inline past the checkpoint it sets
      // (the worker stores its checkpoint lazily, so there are some); the worker must write those again.
      const store = api.server.runtime.store;
      const invoices = api.server.runtime.projectors.find((p) => p.name === 'invoices')!;
      let writing = true;
      const writes = (async () => {
        let n = 0;
        while (writing || n < 20) n += (await Promise.all(Array.from({ length: 4 }, () => client.draft(customer.id)))).length;
        return n;
      })();
      await rebuildProjection(api.database.db, store, invoices);
      writing = false;
      const written = await writes;
      await atHead(worker);
      const db = api.database.db;
      const count = async (q: string) => (await sql<{ n: number }>`${sql.raw(q)}`.execute(db)).rows[0].n;
      // The runner learns of the swap at its next checkpoint write (within half a second), then writes them again.
      const created = await count(`select count(*)::int as n from es_events where type = 'InvoiceCreated'`);
      expect(created).to.equal(20 + written);
      await until(async () => (await count(`select count(*)::int as n from invoices`)) === created, 20_000, 'every invoice the swap replaced written again');
      const verified = await verifyProjection(api.database.db, store, invoices);
      expect(verified.differences, JSON.stringify(verified.differences).slice(0, 500)).to.deep.equal([]);

      // A runner that starts later (another worker, once this one stops) applies nothing the API wrote inline.
      await worker.server.stop();
      worker = undefined;
      const next = (later = await start(undefined, 'true', { on: api.database, roles: ['projector'] }));
      await until(() => next.server.runners.every((r) => r.state === 'running'), 20_000, 'the later runners following the log');
      await Promise.all(Array.from({ length: 10 }, () => client.draft(customer.id)));
      await atHead(later);
      const reapplied = later.applied.get('invoices') ?? [];
      const { rows: lastTen } = await sql<{ id: string }>`select event_id as id from es_events where type = 'InvoiceCreated' order by transaction_id desc, global_position desc limit 10`.execute(api.database.db);
      expect(reapplied.filter((id) => lastTen.some((r) => r.id === id)), 'written inline after the runner started, applied again').to.deep.equal([]);
    });
  });

  describe('a failing projector', () => {
    let s: Started;
    before(async () => {
      s = await start({ projector: 'customers', when: (e) => e.data?.customer?.name === 'Boom SARL' });
    });
    after(() => stop(s));

    it('refuses the write: 500 with the request id, an alert in the log, no event and no row', async () => {
      const api = await invoicesClient({ url: s.url, database: s.database });
      const client = bindClient(s.url, api.tenant);
      const res = await call(`${s.url}/customers`, client.secret, { method: 'POST', body: { name: 'Boom SARL', type: 'b2b', ice: '001234567000088' } });
      expect(res.status, JSON.stringify(res.body)).to.equal(500);
      expect(res.body.error.code).to.equal('INTERNAL_ERROR');
      const requestId = res.headers.get('x-request-id');
      expect(requestId).to.be.a('string');
      expect(res.body.error.details.request_id).to.equal(requestId);
      expect(res.body.error.message).to.contain(requestId);

      const alert = s.logs.find((l) => l.alert === 'inline_projection_failed');
      expect(alert, JSON.stringify(s.logs)).to.include({ projector: 'customers', level: 50 });
      expect(s.logs.some((l) => l.request_id === requestId && l.level >= 50)).to.equal(true);

      const events = await sql<{ n: number }>`select count(*)::int as n from es_events where data->'customer'->>'name' = 'Boom SARL'`.execute(s.database.db);
      expect(events.rows[0].n, 'an event without its row').to.equal(0);
      const rows = await sql<{ n: number }>`select count(*)::int as n from customers where name = 'Boom SARL'`.execute(s.database.db);
      expect(rows.rows[0].n).to.equal(0);

      // The connection went back to the pool clean: the next writes succeed.
      const ok = await Promise.all(Array.from({ length: 5 }, () => api.customer()));
      expect(ok).to.have.length(5);
    });
  });

  describe('a failing projector on one creation of a group (INLINE_PROJECTIONS=auto, under load)', () => {
    let s: Started;
    before(async () => {
      s = await start({ projector: 'invoices', when: (e) => e.type === 'InvoiceCreated' && e.data?.invoice?.notes === 'Boom' }, 'auto');
    });
    after(() => stop(s));

    it('refuses that creation alone: its 500 and its alert, the others written, no alert naming them', async () => {
      const api = await invoicesClient({ url: s.url, database: s.database });
      const customer = await api.customer();
      const body = (notes: string | null) => ({ customer_id: customer.id, issue_date: '2026-03-14', notes, items: [{ description: 'Audit', quantity: 1, unit_price: '100', tax_rate: 20 }] });
      const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => api.create(body(i === 12 ? 'Boom' : null))));
      expect(answers[12].status, JSON.stringify(answers[12].body)).to.equal(500);
      const written = answers.filter((_, i) => i !== 12);
      for (const a of written) expect(a.status, JSON.stringify(a.body)).to.equal(201);
      const ids = written.map((a) => a.body.data.id);
      const { rows } = await sql<{ transactions: number; events: number }>`
        select count(distinct transaction_id)::int as transactions, count(*)::int as events from es_events where stream_id = any(${ids.map((id) => `invoice-${id}`)}::text[])`.execute(s.database.db);
      expect(rows[0].events).to.equal(23);
      const alerts = s.logs.filter((l) => l.alert === 'inline_projection_failed');
      expect(alerts.length, JSON.stringify(alerts)).to.equal(1);
      const boom = await sql<{ n: number }>`select count(*)::int as n from es_events where data->'invoice'->>'notes' = 'Boom'`.execute(s.database.db);
      expect(boom.rows[0].n, 'nothing of the refused creation').to.equal(0);
      // The alert names the refused creation's event only, never one that was written.
      const writtenStreams = new Set(ids.map((id) => `invoice-${id}`));
      expect(alerts[0].streams.filter((x: string) => writtenStreams.has(x))).to.deep.equal([]);
      expect(alerts[0].event_ids).to.have.length(1);
    });
  });

  describe('a failing projector on a finalize (lock, number and completion in one transaction)', () => {
    let s: Started;
    let doomed = '';
    before(async () => {
      s = await start({ projector: 'invoices', when: (e) => e.type === 'InvoiceFinalized' && e.data?.invoice?.id === doomed });
    });
    after(() => stop(s));

    it('refuses the finalize whole: no lock, no number, no completion; the next finalize takes the number', async () => {
      const api = await invoicesClient({ url: s.url, database: s.database });
      const customer = await api.customer();
      const [first, second] = [await api.draft(customer.id), await api.draft(customer.id)];
      doomed = first.id;
      const res = await api.action(first.id, 'finalize');
      expect(res.status, JSON.stringify(res.body)).to.equal(500);
      const alert = s.logs.find((l) => l.alert === 'inline_projection_failed');
      expect(alert, JSON.stringify(s.logs)).to.include({ projector: 'invoices' });
      expect(alert.streams).to.deep.equal([`invoice-${first.id}`]);
      const written = await sql<{ type: string }>`
        select type from es_events where stream_id = ${`invoice-${first.id}`} or (type = 'InvoiceNumberAssigned' and data->>'invoice_id' = ${first.id}) order by global_position`.execute(s.database.db);
      expect(written.rows.map((r) => r.type)).to.deep.equal(['InvoiceCreated']);
      expect((await api.get(first.id)).body.data).to.include({ status: 'draft', invoice_number: null });

      // Nothing was given: the other draft gets the first number, and the refused one the next once the bug is gone.
      expect((await api.action(second.id, 'finalize')).body.data.invoice_number).to.equal('INV-2026-000001');
      doomed = '';
      expect((await api.action(first.id, 'finalize')).body.data.invoice_number).to.equal('INV-2026-000002');
    });

    it('finalizes batched with the refused one still succeed, with consecutive numbers', async () => {
      const api = await invoicesClient({ url: s.url, database: s.database });
      const customer = await api.customer();
      const drafts = await Promise.all(Array.from({ length: 12 }, () => api.draft(customer.id)));
      doomed = drafts[6].id;
      const answers = await Promise.all(drafts.map((d) => api.action(d.id, 'finalize')));
      expect(answers.map((a) => a.status)).to.deep.equal(drafts.map((d) => (d.id === doomed ? 500 : 200)));
      const numbers = answers.filter((a) => a.status === 200).map((a) => a.body.data.invoice_number).sort();
      const org = (await api.get(drafts[0].id)).body.data.organization_id;
      expect(numbers, `organization ${org}`).to.deep.equal(Array.from({ length: 11 }, (_, i) => `INV-2026-${String(i + 1).padStart(6, '0')}`));
    });
  });
});
