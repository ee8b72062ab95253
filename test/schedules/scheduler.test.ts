/**
 * The scheduler's ticks, in process, at fixed instants (the clock is a
 * parameter: nothing waits for a date). The test server runs the API and the
 * projectors but not the scheduler role, so only the ticks below generate.
 */
import { expect } from 'chai';
import { generateOccurrence } from '../../src/commands/schedule/generate.ts';
import { loadSchedule, pauseSchedule, scheduleSlotScope, updateSchedule } from '../../src/commands/schedule/handler.ts';
import { readReservation } from '../../src/commands/reservation/index.ts';
import { encodePosition } from '../../src/eventstore/position.ts';
import { readModelFacts } from '../../src/queries/invoice-facts.ts';
import { Writable } from 'node:stream';
import { createLogger, silentLogger } from '../../src/shared/logger.ts';
import { runScheduleReactions } from '../../src/workers/schedule-reactions.ts';
import { runSchedulerTick, schedulerDeps, schedulerWorker, type SchedulerDeps } from '../../src/workers/scheduler.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { processParts } from '../../src/main.ts';
import { ProjectionRunner } from '../../src/projections/runner.ts';
import { startServer } from '../../src/server.ts';
import { call } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/wait.ts';
import { line, schedulesClient, type SchedulesClient } from './support.ts';
import { expectError } from '../invoices/support.ts';

const at = (iso: string) => new Date(iso);

describe('recurring scheduler (ticks at fixed instants)', () => {
  let server: TestServer;
  let api: SchedulesClient;
  let customer: any;
  let deps: SchedulerDeps;

  before(async () => {
    server = await startTestServer({ roles: ['api', 'projector', 'webhooks'] });
    const rt = server.server.runtime;
    deps = { ...schedulerDeps(rt), logger: silentLogger };
  });
  after(() => server?.stop());
  beforeEach(async () => {
    api = await schedulesClient(server);
    customer = await api.invoices.customer();
  });
  // Ticks see every tenant's schedules: take the previous test's out of the scheduler's sight
  // (the due list reads the read model) so each test's tick reports count its own runs only.
  afterEach(async () => {
    await server.database.db.updateTable('recurring_schedules').set({ status: 'cancelled' }).where('status', '=', 'active').execute();
  });

  /**
   * Every read model caught up with every committed event so far. (Not the
   * store's headPosition: it stops below any open transaction, so it can
   * trail the writes this test just made.)
   */
  async function settled(): Promise<void> {
    const { rows } = await server.server.runtime.database.pool.query(
      'select transaction_id, global_position from es_events order by transaction_id desc, global_position desc limit 1',
    );
    if (rows[0]) expect(await server.server.runtime.progress.waitFor(encodePosition(rows[0].transaction_id, rows[0].global_position), 20_000)).to.equal(true);
  }

  async function tick(iso: string) {
    await settled();
    const report = await runSchedulerTick(deps, at(iso));
    await settled();
    return report;
  }

  const invoicesOf = async (client = api) => (await client.invoices.list('per_page=100&order=asc')).body.data;

  it('the scheduler stopped for three periods: three invoices, oldest first, each with its own run date', async () => {
    const s = await api.make(customer.id, { frequency: 'weekly', start_date: '2026-01-07', auto_finalize: true, days_until_due: 7 });
    const report = await tick('2026-01-21T09:00:00.000Z');
    expect(report).to.include({ ran: true, generated: 3, failed: 0 });
    const invoices = await invoicesOf();
    expect(invoices.map((i: any) => [i.issue_date, i.due_date, i.invoice_number, i.status])).to.deep.equal([
      ['2026-01-07', '2026-01-14', 'INV-2026-000001', 'finalized'],
      ['2026-01-14', '2026-01-21', 'INV-2026-000002', 'finalized'],
      ['2026-01-21', '2026-01-28', 'INV-2026-000003', 'finalized'],
    ]);
    const read = (await api.get(s.id)).body.data;
    expect(read).to.include({ occurrences: 3, next_run_date: '2026-01-28' });
    expect(read.history.map((h: any) => [h.run_date, h.invoice_number, h.status])).to.deep.equal([
      ['2026-01-21', 'INV-2026-000003', 'success'],
      ['2026-01-14', 'INV-2026-000002', 'success'],
      ['2026-01-07', 'INV-2026-000001', 'success'],
    ]);
    // A second tick the same day finds nothing due.
    expect(await tick('2026-01-21T10:00:00.000Z')).to.include({ generated: 0 });
    expect(await invoicesOf()).to.have.length(3);
  });

  it('auto_finalize and auto_send give sent invoices with numbers; max_occurrences completes the schedule', async () => {
    const s = await api.make(customer.id, { frequency: 'monthly', start_date: '2026-02-01', auto_finalize: true, auto_send: true, max_occurrences: 2 });
    expect(await tick('2026-04-15T12:00:00.000Z')).to.include({ generated: 2 });
    const invoices = await invoicesOf();
    expect(invoices.map((i: any) => [i.issue_date, i.status, i.invoice_number])).to.deep.equal([
      ['2026-02-01', 'sent', 'INV-2026-000001'],
      ['2026-03-01', 'sent', 'INV-2026-000002'],
    ]);
    expect((await api.get(s.id)).body.data).to.include({ status: 'completed', occurrences: 2, next_run_date: null });
    // Its quota slot is free again.
    const org = await call(`${server.url}/organization`, api.invoices.secret);
    expect(org.body.data.api_quotas.recurring_schedules_used).to.equal(0);
  });

  it("the tick's appends leave their read-model rows to the runners, which write every one (no client waits on them)", async () => {
    const s = await api.make(customer.id, { frequency: 'monthly', start_date: '2026-01-05', auto_finalize: true, auto_send: true });
    expect(await tick('2026-03-05T10:00:00.000Z')).to.include({ generated: 3 });
    const pool = server.server.runtime.database.pool;
    const marks = async (where: string, values: unknown[]) =>
      (await pool.query(`select type, inline_projectors, applied_inline from es_events where ${where} order by global_position`, values)).rows;
    const tickEvents = await marks(`metadata->>'organization_id' = $1 and metadata->>'actor' = 'system'`, [api.invoices.tenant.organizationId]);
    expect(tickEvents.map((e) => e.type)).to.include.members(['InvoiceCreated', 'InvoiceFinalized', 'InvoiceSent', 'ScheduleOccurrenceGenerated']);
    expect(tickEvents.filter((e) => e.inline_projectors !== 0 || e.applied_inline)).to.deep.equal([]);
    // The API's own writes stay inline (where the process has inline projections).
    const [created] = await marks('stream_id = $1 and revision = 0', [`schedule-${s.id}`]);
    expect(created.inline_projectors !== 0).to.equal(server.server.runtime.inline !== null);
    // And the runners wrote what the tick decided.
    const invoices = await invoicesOf();
    expect(invoices.map((i: any) => [i.issue_date, i.status, i.invoice_number])).to.deep.equal([
      ['2026-01-05', 'sent', 'INV-2026-000001'],
      ['2026-02-05', 'sent', 'INV-2026-000002'],
      ['2026-03-05', 'sent', 'INV-2026-000003'],
    ]);
    const read = (await api.get(s.id)).body.data;
    expect(read).to.include({ occurrences: 3, next_run_date: '2026-04-05' });
    expect(read.history.map((h: any) => h.invoice_number)).to.deep.equal(['INV-2026-000003', 'INV-2026-000002', 'INV-2026-000001']);
  });

  it('one due occurrence reads the schedule once (not again to find nothing more due), the invoice for its finalize, and a new numbering stream', async () => {
    await api.make(customer.id, { frequency: 'monthly', start_date: '2026-01-05', auto_finalize: true });
    await settled();
    const reads: string[] = [];
    const store = { ...deps.store, readStream: (stream: string, options?: any) => (reads.push(stream.split('-')[0]), deps.store.readStream(stream, options)) };
    expect(await runSchedulerTick({ ...deps, store }, at('2026-01-05T10:00:00.000Z'))).to.include({ generated: 1 });
    await settled();
    // (The numbering stream is read once per organization and year, then cached: src/commands/invoicenumber/handler.ts.)
    expect(reads).to.deep.equal(['schedule', 'invoice', 'invoicenumbers']);
  });

  it('an inactive customer: a failed run with CUSTOMER_INACTIVE and no invoice, retried that day only, then moved past', async () => {
    const s = await api.make(customer.id, { frequency: 'monthly', start_date: '2026-03-10' });
    await call(`${api.invoices.url}/customers/${customer.id}`, api.invoices.secret, { method: 'PATCH', body: { status: 'inactive' } });
    // 23:30 UTC on 03-09 is still 03-09 in Casablanca during Ramadan (UTC+0): not due yet.
    expect(await tick('2026-03-09T23:30:00.000Z')).to.include({ generated: 0, failed: 0 });
    await tick('2026-03-10T08:00:00.000Z');
    let read = (await api.get(s.id)).body.data;
    expect(read.history).to.have.length(1);
    expect(read.history[0]).to.include({ run_date: '2026-03-10', status: 'failed', invoice_id: null, invoice_number: null });
    expect(read.history[0].error).to.include({ code: 'CUSTOMER_INACTIVE' });
    expect(read).to.include({ next_run_date: '2026-03-10', occurrences: 0 });
    expect(await invoicesOf()).to.deep.equal([]);
    // Retried by later ticks of that day: still one entry (no new event per tick).
    const version = read.version;
    await tick('2026-03-10T20:00:00.000Z');
    read = (await api.get(s.id)).body.data;
    expect(read.version).to.equal(version);
    // Reactivated the same day: the retry succeeds and the entry becomes a success.
    await call(`${api.invoices.url}/customers/${customer.id}`, api.invoices.secret, { method: 'PATCH', body: { status: 'active' } });
    expect(await tick('2026-03-10T21:00:00.000Z')).to.include({ generated: 1 });
    read = (await api.get(s.id)).body.data;
    expect(read.history).to.have.length(1);
    expect(read.history[0]).to.include({ run_date: '2026-03-10', status: 'success', error: null });
    expect(await invoicesOf()).to.have.length(1);
  });

  it('a finalize the rules refuse: the failed run says which fields, as generate\'s own answer does', async () => {
    const noIce = await api.invoices.customer({ name: 'Sans ICE SARL', type: 'b2b', ice: null });
    const s = await api.make(noIce.id, { frequency: 'monthly', start_date: '2026-03-10', auto_finalize: true });
    await tick('2026-03-10T09:00:00.000Z');
    const [run] = (await api.get(s.id)).body.data.history;
    expect(run).to.include({ status: 'failed', invoice_id: null });
    expect(run.error.code).to.equal('VALIDATION_ERROR');
    expect(run.error.message).to.match(/customer\.ice: /);
  });

  it('a run still failing when its day ends is closed as failed and the schedule moves on (it does not count)', async () => {
    const s = await api.make(customer.id, { frequency: 'monthly', start_date: '2026-03-10', max_occurrences: 1 });
    await call(`${api.invoices.url}/customers/${customer.id}`, api.invoices.secret, { method: 'PATCH', body: { status: 'inactive' } });
    await tick('2026-03-10T08:00:00.000Z');
    expect(await tick('2026-03-11T08:00:00.000Z')).to.include({ closed: 1 });
    let read = (await api.get(s.id)).body.data;
    expect(read).to.include({ status: 'active', next_run_date: '2026-04-10', occurrences: 0 });
    expect(read.history[0]).to.include({ status: 'failed', run_date: '2026-03-10' });
    await call(`${api.invoices.url}/customers/${customer.id}`, api.invoices.secret, { method: 'PATCH', body: { status: 'active' } });
    await tick('2026-04-10T08:00:00.000Z');
    read = (await api.get(s.id)).body.data;
    expect(read).to.include({ status: 'completed', occurrences: 1 });
    expect(read.history.map((h: any) => [h.run_date, h.status])).to.deep.equal([['2026-04-10', 'success'], ['2026-03-10', 'failed']]);
  });

  it('an archived organization is skipped; on restore its schedules continue from the restore day, nothing for the frozen time', async () => {
    const s = await api.make(customer.id, { frequency: 'monthly', start_date: '2026-01-05' });
    const orgId = api.invoices.tenant.organizationId;
    await server.database.db.updateTable('organizations').set({ archived: true }).where('id', '=', orgId).execute();
    expect(await tick('2026-04-06T08:00:00.000Z')).to.include({ generated: 0 });
    // Restored on 04-06 (the reaction to OrganizationRestored skips 01-05 .. 04-05).
    await server.database.db.updateTable('organizations').set({ archived: false }).where('id', '=', orgId).execute();
    await server.database.db
      .insertInto('schedule_reactions')
      .values({ event_id: crypto.randomUUID(), kind: 'organization_restored', organization_id: orgId, subject_id: orgId, position: '0', occurred_at: new Date() })
      .execute();
    expect(await tick('2026-04-06T09:00:00.000Z')).to.include({ generated: 0 }); // the pending reaction holds it back
    const rt = server.server.runtime;
    await runScheduleReactions({ db: rt.database.db, store: rt.store, logger: silentLogger, progress: rt.progress, clock: () => at('2026-04-06T09:00:00.000Z') });
    await settled();
    expect((await api.get(s.id)).body.data).to.include({ next_run_date: '2026-05-05', occurrences: 0 });
    expect(await tick('2026-04-06T10:00:00.000Z')).to.include({ generated: 0 });
    expect(await tick('2026-05-05T10:00:00.000Z')).to.include({ generated: 1 });
    expect((await invoicesOf()).map((i: any) => i.issue_date)).to.deep.equal(['2026-05-05']);
  });

  it("a customer's archiving cancels its schedules (reaction to CustomerArchived); cancelled is read-only", async () => {
    const a = await api.make(customer.id);
    const b = await api.make(customer.id);
    await api.action(b.id, 'pause');
    const archived = await call(`${api.invoices.url}/customers/${customer.id}`, api.invoices.secret, { method: 'DELETE' });
    expect(archived.status).to.equal(200);
    const rt = server.server.runtime;
    const reactions = { db: rt.database.db, store: rt.store, logger: silentLogger, progress: rt.progress, clock: () => new Date() };
    // The reaction consumer runs in the scheduler role; here its rows are fed by the test's own consumer run.
    const { ProjectionRunner } = await import('../../src/projections/runner.ts');
    const { scheduleReactionsConsumer } = await import('../../src/workers/schedule-reactions.ts');
    const runner = new ProjectionRunner({ db: rt.database.db, store: rt.store, url: rt.database.url, logger: silentLogger }, scheduleReactionsConsumer);
    runner.start();
    try {
      await until(async () => {
        await runScheduleReactions(reactions);
        await settled();
        return (await api.get(a.id)).body.data.status === 'cancelled' && (await api.get(b.id)).body.data.status === 'cancelled';
      }, 20_000, 'schedules cancelled');
    } finally {
      await runner.stop();
    }
    const res = await api.put(a.id, { days_until_due: 5 });
    expect(res.status).to.equal(409);
    expect(res.body.error.code).to.equal('INVALID_STATE');
    const org = await call(`${server.url}/organization`, api.invoices.secret);
    expect(org.body.data.api_quotas.recurring_schedules_used).to.equal(0);
  });

  it('a SCHEDULER_CRON that is not a cron expression stops start-up, naming the variable', async () => {
    const rt = server.server.runtime;
    const error = await schedulerWorker().start({ ...rt, config: { ...rt.config, schedulerCron: 'every minute' } }).then(() => null, (err) => err);
    expect(error).to.be.instanceOf(ConfigError);
    expect(String(error.message)).to.match(/SCHEDULER_CRON/);
  });

  it('two ticks at once: one runs, the other skips (advisory lock)', async () => {
    await api.make(customer.id, { frequency: 'monthly', start_date: '2026-01-05' });
    await settled();
    const reports = await Promise.all([runSchedulerTick(deps, at('2026-01-05T10:00:00.000Z')), runSchedulerTick(deps, at('2026-01-05T10:00:00.000Z'))]);
    await settled();
    expect(reports.filter((r) => r.ran).length).to.be.at.least(1);
    expect(reports.reduce((n, r) => n + r.generated, 0)).to.equal(1);
    expect(await invoicesOf()).to.have.length(1);
  });

  it('the same occurrence generated by two callers at once (lock bypassed): one invoice', async () => {
    const s = await api.make(customer.id, { frequency: 'monthly', start_date: '2026-01-05', auto_finalize: true });
    const rt = server.server.runtime;
    const d = { store: rt.store, facts: readModelFacts(rt.database.pool), organizationId: api.invoices.tenant.organizationId, metadata: { organization_id: api.invoices.tenant.organizationId, actor: 'system', request_id: null, correlation_id: null, causation_id: null, occurred_at: new Date().toISOString() } };
    const results = await Promise.all(Array.from({ length: 4 }, () => generateOccurrence(d, s.id, { seq: 0 }).catch((err) => err)));
    await settled();
    const invoices = await invoicesOf();
    expect(invoices, JSON.stringify(results.map(String))).to.have.length(1);
    expect(invoices[0]).to.include({ status: 'finalized', invoice_number: 'INV-2026-000001', issue_date: '2026-01-05' });
    expect((await api.get(s.id)).body.data).to.include({ occurrences: 1, next_run_date: '2026-02-05' });
  });

  /**
   * generateOccurrence on a store that runs `between` (on the real store) just before the occurrence's recording
   * is appended, once: a client's write that lands between the occurrence's invoice and its recording.
   */
  async function generateWith(scheduleId: string, between: (d: { store: any; organizationId: string; metadata: any }) => Promise<unknown>) {
    const rt = server.server.runtime;
    const organizationId = api.invoices.tenant.organizationId;
    const metadata = { organization_id: organizationId, actor: 'system', request_id: null, correlation_id: null, causation_id: null, occurred_at: new Date().toISOString() };
    let done = false;
    const store = {
      ...rt.store,
      async appendToStream(stream: string, events: any[], ...rest: any[]) {
        if (!done && events.some((e) => e.type === 'ScheduleOccurrenceGenerated')) {
          done = true;
          await between({ store: rt.store, organizationId, metadata });
        }
        return (rt.store.appendToStream as any)(stream, events, ...rest);
      },
    };
    const generated = await generateOccurrence({ store, facts: readModelFacts(rt.database.pool), organizationId, metadata }, scheduleId);
    await settled();
    return generated;
  }

  it('a pause between an occurrence\'s invoice and its recording: the occurrence is recorded on the paused schedule, its numbered invoice in the history', async () => {
    const s = await api.make(customer.id, { frequency: 'monthly', start_date: '2026-01-05', auto_finalize: true });
    await settled();
    const generated = await generateWith(s.id, (d) => pauseSchedule(d, s.id));
    const invoices = await invoicesOf();
    expect(invoices.map((i: any) => [i.status, i.invoice_number])).to.deep.equal([['finalized', 'INV-2026-000001']]);
    expect(generated?.invoice.invoice.id).to.equal(invoices[0].id);
    const body = (await api.get(s.id)).body.data;
    expect(body).to.include({ status: 'paused', occurrences: 1, next_run_date: null });
    expect(body.history.map((h: any) => [h.invoice_id, h.invoice_number, h.status])).to.deep.equal([[invoices[0].id, 'INV-2026-000001', 'success']]);
    // A new occurrence still needs an active schedule.
    expectError(await api.action(s.id, 'generate'), 409, 'INVALID_STATE');
  });

  it('a PUT that lowers max_occurrences between an occurrence\'s invoice and its recording: the schedule completes and its quota slot is free at once', async () => {
    const s = await api.make(customer.id, { frequency: 'monthly', start_date: '2026-01-05' });
    expect((await api.action(s.id, 'generate')).status).to.equal(201);
    await settled();
    const slot = String((await loadSchedule(server.server.runtime.store, api.invoices.tenant.organizationId, s.id)).state.schedule!.quota_slot);
    await generateWith(s.id, (d) => updateSchedule(d, s.id, { max_occurrences: 2 }));
    expect((await api.get(s.id)).body.data).to.include({ status: 'completed', occurrences: 2 });
    const reservation = await readReservation(server.server.runtime.store, scheduleSlotScope(api.invoices.tenant.organizationId), slot);
    expect(reservation.owner, 'the slot of a completed schedule').to.equal(null);
  });

  it('an organization archived during a catch-up stops it at the next run; an archived customer fails its runs instead of being invoiced', async () => {
    const s = await api.make(customer.id, { frequency: 'weekly', start_date: '2026-01-07', auto_finalize: true });
    const organizationId = api.invoices.tenant.organizationId;
    await settled();
    // Archived in the read model the scheduler reads, right after the catch-up's first occurrence is recorded.
    const archiveAfterFirst = (archive: () => Promise<unknown>) => {
      let done = false;
      return {
        ...deps,
        store: {
          ...deps.store,
          async appendToStream(stream: string, events: any[], ...rest: any[]) {
            const result = await (deps.store.appendToStream as any)(stream, events, ...rest);
            if (!done && events.some((e) => e.type === 'ScheduleOccurrenceGenerated')) {
              done = true;
              await archive();
            }
            return result;
          },
        },
      };
    };
    const db = server.database.db;
    const archived = archiveAfterFirst(() => db.updateTable('organizations').set({ archived: true }).where('id', '=', organizationId).execute());
    await settled();
    expect((await runSchedulerTick(archived, at('2026-03-04T10:00:00.000Z'))).generated).to.equal(1);
    await db.updateTable('organizations').set({ archived: false }).where('id', '=', organizationId).execute();
    await settled();
    const customerGone = archiveAfterFirst(() => db.updateTable('customers').set({ status: 'archived' }).where('id', '=', customer.id).execute());
    const report = await runSchedulerTick(customerGone, at('2026-03-04T10:00:00.000Z'));
    await settled();
    expect(report.generated, JSON.stringify(report)).to.equal(1);
    expect((await invoicesOf()).map((i: any) => i.issue_date)).to.deep.equal(['2026-01-07', '2026-01-14']);
    const history = (await api.get(s.id)).body.data.history;
    // The runs left after the archive, 2026-01-21 to 2026-03-04 (7 weeks), failed instead of being invoiced.
    const failed = history.filter((h: any) => h.status === 'failed');
    expect(failed.map((h: any) => [h.run_date, h.error.code])).to.deep.equal(
      ['2026-03-04', '2026-02-25', '2026-02-18', '2026-02-11', '2026-02-04', '2026-01-28', '2026-01-21'].map((d) => [d, 'CUSTOMER_INACTIVE']),
    );
  });

  it('catch-up is bounded per tick: a long outage is generated over several ticks', async () => {
    const s = await api.make(customer.id, { frequency: 'weekly', start_date: '2024-01-03', items: [line()] });
    const first = await tick('2026-03-04T10:00:00.000Z');
    expect(first.generated).to.equal(100); // MAX_PER_SCHEDULE
    const second = await tick('2026-03-04T10:01:00.000Z');
    expect(second.generated).to.equal(financeWeeks('2024-01-03', '2026-03-04') - 100);
    const read = (await api.get(s.id)).body.data;
    expect(read.next_run_date).to.equal('2026-03-11');
  });
});

describe("recurring scheduler: its writes are the runners' to project", () => {
  let server: TestServer;
  let api: SchedulesClient;
  let customer: any;
  /** Runners started by a test in place of the server's (which its stop() does not know). */
  const replacements: ProjectionRunner[] = [];
  before(async () => {
    server = await startTestServer({ roles: ['api', 'projector'] });
  });
  after(async () => {
    await Promise.allSettled(replacements.map((r) => r.stop()));
    await server?.stop();
  });
  beforeEach(async () => {
    api = await schedulesClient(server);
    customer = await api.invoices.customer();
  });

  const head = async () => {
    const { rows } = await server.server.runtime.database.pool.query('select transaction_id, global_position from es_events order by transaction_id desc, global_position desc limit 1');
    return encodePosition(rows[0].transaction_id, rows[0].global_position);
  };

  it("a client's write right after a tick answers with the tick's run in its history: it waits for the runner to write it", async () => {
    const s = await api.make(customer.id, { frequency: 'monthly', start_date: '2026-01-05' });
    const rt = server.server.runtime;
    expect(await rt.progress.waitFor(await head(), 20_000)).to.equal(true);
    // The schedules runner stopped: the tick's run is not in schedule_runs until another runner starts.
    const stopped = server.server.runners.find((r) => r.projector.name === 'schedules')!;
    await stopped.stop();
    const runner = new ProjectionRunner({ db: rt.database.db, store: rt.store, url: rt.database.url, logger: silentLogger, progress: rt.progress, applied: rt.inline?.applied }, stopped.projector);
    replacements.push(runner);
    const waitFor = rt.progress.waitFor;
    let waits = 0;
    rt.progress.waitFor = function (position, timeoutMs, names) {
      if (names?.includes('schedules')) waits++;
      return waitFor.call(this, position, timeoutMs, names);
    };
    try {
      expect(await runSchedulerTick({ ...schedulerDeps(rt), logger: silentLogger }, at('2026-01-05T10:00:00.000Z'))).to.include({ generated: 1 });
      const paused = api.action(s.id, 'pause');
      // Either the pause answers at once (from its inline row, without the tick's run: wrong) or it waits.
      const first = await Promise.race([paused.then(() => 'answered'), until(() => waits > 0, 10_000, 'the pause waiting for the schedules runner').then(() => 'waiting')]);
      runner.start();
      const body = (await paused).body.data;
      expect(body).to.include({ status: 'paused', occurrences: 1 });
      expect(body.history.map((h: any) => [h.run_date, h.status]), 'the history of the answer').to.deep.equal([['2026-01-05', 'success']]);
      expect(first).to.equal('waiting');
    } finally {
      rt.progress.waitFor = waitFor;
      runner.start(); // (once) the schedules runner of the tests after this one
    }
  });

  it('the scheduler role ticks through the background store, and logs each tick with its counts and duration', async () => {
    await api.make(customer.id, { frequency: 'monthly', start_date: '2026-02-05', auto_finalize: true });
    // A process with the scheduler role alone, on the same database, ticking every second at a fixed instant.
    const config = loadConfig({ DATABASE_URL: server.database.url, PORT: '0', SCHEDULER_CRON: '* * * * * *', INLINE_PROJECTIONS: process.env.INLINE_PROJECTIONS });
    const lines: any[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
        done();
      },
    });
    const scheduler = await startServer(config, createLogger('info', sink), ['scheduler'], { ...processParts, workers: [schedulerWorker({ clock: () => at('2026-02-05T10:00:00.000Z') })] });
    try {
      await until(async () => (await invoicesOf(api)).some((i: any) => i.status === 'finalized'), 20_000, 'the finalized invoice of the tick, projected by the runners');
      expect((await invoicesOf(api)).map((i: any) => [i.status, i.invoice_number, i.issue_date])).to.deep.equal([['finalized', 'INV-2026-000001', '2026-02-05']]);
      await until(() => lines.some((l) => l.msg === 'scheduler tick'), 10_000, "the tick's log line");
      const ticks = lines.filter((l) => l.msg === 'scheduler tick');
      expect(ticks, 'one line: the ticks after it found nothing to do').to.have.length(1);
      expect(ticks[0]).to.include({ level: 30, ran: true, generated: 1, failed: 0, closed: 0 });
      expect(ticks[0].ms).to.be.a('number').and.satisfy((ms: number) => Number.isInteger(ms) && ms >= 0);
    } finally {
      await scheduler.stop();
    }
    const { rows } = await server.server.runtime.database.pool.query(
      `select type, inline_projectors from es_events where metadata->>'organization_id' = $1 and metadata->>'actor' = 'system'`,
      [api.invoices.tenant.organizationId],
    );
    expect(rows.map((r) => r.type)).to.include.members(['InvoiceCreated', 'InvoiceFinalized', 'ScheduleOccurrenceGenerated']);
    expect(rows.filter((r) => r.inline_projectors !== 0)).to.deep.equal([]);
  });
});

const invoicesOf = async (client: SchedulesClient) => (await client.invoices.list('per_page=100&order=asc')).body.data;

/** Weekly runs from `from` through `to`, both included. */
function financeWeeks(from: string, to: string): number {
  return Math.floor((Date.parse(to) - Date.parse(from)) / (7 * 86_400_000)) + 1;
}
