/**
 * The schedules projector applied again (docs/architecture.md "Inline
 * projections"): a runner that lags re-applies events an append already
 * wrote inline, from its checkpoint on. Whatever stretch of the log comes
 * again, and however it is batched, the rows stay those of the whole log:
 * a customer's older name never comes back over a newer one, every schedule
 * ends with the newest name, and a deleted schedule never comes back at all
 * (migrations 0105, 0107).
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { v7 as uuid } from 'uuid';
import type { CommandMetadata } from '../../src/commands/command.ts';
import type { CustomerCommand } from '../../src/commands/customer/commands.ts';
import { customerDecider } from '../../src/commands/customer/decider.ts';
import { customerStream, type Customer } from '../../src/commands/customer/events.ts';
import type { InvoiceCustomer } from '../../src/commands/invoice/commands.ts';
import type { ScheduleCommand } from '../../src/commands/schedule/commands.ts';
import { scheduleDecider } from '../../src/commands/schedule/decider.ts';
import { scheduleStream, type Schedule } from '../../src/commands/schedule/events.ts';
import * as m0105 from '../../src/db/migrations/0105_schedule_guards.ts';
import * as m0107 from '../../src/db/migrations/0107_schedule_customers.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import type { DomainEvent } from '../../src/commands/shared/decider.ts';
import type { EventStore, RecordedEvent } from '../../src/eventstore/types.ts';
import { rebuildProjection } from '../../src/projections/rebuild.ts';
import { schedulesProjector } from '../../src/projections/schedules.ts';
import { history } from '../unit/given.ts';
import { metadata } from '../eventstore/contract.ts';
import { sqlLiteral } from '../../src/eventstore/sql-literal.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { until } from '../support/wait.ts';

const ORGANIZATION = uuid();
const CUSTOMER = uuid();
const [A, B, D, E] = [uuid(), uuid(), uuid(), uuid()];
const at = (minute: number) => `2026-03-01T10:${String(minute).padStart(2, '0')}:00.000Z`;
const meta = (minute: number): CommandMetadata => ({ now: at(minute), actor: 'key_1', organization_id: ORGANIZATION });
const items = [{ description: 'Maintenance', quantity: 1, unit_price: 1000 }];

const customerCommands: CustomerCommand[] = [
  { type: 'CreateCustomer', data: { customer_id: CUSTOMER, name: 'Atlas', type: 'b2b', ice: '001234567000089' }, metadata: meta(0) },
  { type: 'UpdateCustomer', data: { customer_id: CUSTOMER, patch: { name: 'Atlas Deux' } }, metadata: meta(2) },
  { type: 'UpdateCustomer', data: { customer_id: CUSTOMER, patch: { name: 'Atlas Trois' } }, metadata: meta(5) },
];

/** The customer as the schedule's create read it, at `version`. */
function snapshotAt(customers: DomainEvent[], version: number): InvoiceCustomer {
  const { id, name, type, ice, email, phone, address, status } = (customers[version].data as { customer: Customer }).customer;
  return { id, name, type, ice, email, phone, address, status };
}

function scheduleCommands(id: string, customer: InvoiceCustomer, minute: number, then: ScheduleCommand['type'][]): ScheduleCommand[] {
  const create: ScheduleCommand = {
    type: 'CreateSchedule',
    data: { schedule_id: id, quota_slot: 1, customer, customer_id: CUSTOMER, frequency: 'monthly', start_date: '2026-03-10', items },
    metadata: meta(minute),
  };
  const next = then.map((type, i): ScheduleCommand => ({
    type,
    data: type === 'UpdateSchedule' ? { schedule_id: id, patch: { name: 'Maintenance' } } : { schedule_id: id },
    metadata: meta(minute + 1 + i),
  }) as ScheduleCommand);
  return [create, ...next];
}

describe('schedules projector applied again', function () {
  let database: TestDatabase;
  let store: EventStore;

  const rows = async () => ({
    schedules: await database.db.selectFrom('recurring_schedules').selectAll().orderBy('id').execute(),
    runs: await database.db.selectFrom('schedule_runs').selectAll().orderBy('id').execute(),
    tombstones: await database.db.selectFrom('schedule_tombstones').selectAll().orderBy('id').execute(),
    customers: await database.db.selectFrom('schedule_customers').selectAll().orderBy('id').execute(),
  });
  const apply = (batch: RecordedEvent[]) => database.db.transaction().execute((trx) => schedulesProjector.apply(batch, trx));
  /** B's row as the projector before 0105 wrote it (no customer version, no tombstone check). */
  const schedulesProjectorBefore0105 = async ([created]: RecordedEvent[]) => {
    const s = (created.data as { schedule: Schedule }).schedule;
    await sql`insert into recurring_schedules select * from json_populate_record(null::recurring_schedules, ${JSON.stringify({
      ...s, organization_id: ORGANIZATION, customer_name: 'Atlas Deux', customer_search: 'atlas deux', name_search: '', items: s.items, pending_failure: null,
    })}::json)`.execute(database.db);
  };
  const clear = () => sql`delete from recurring_schedules; delete from schedule_runs; delete from schedule_tombstones; delete from schedule_customers`.execute(database.db);

  /**
   * The log: customer created (v0), A created (name at v0), renamed (v1), B created (name at v1), A
   * updated, renamed (v2), E created from a read of the customer at v1 (made before the rename committed),
   * B deleted, A paused, D created (name at v2).
   */
  async function appendLog(): Promise<RecordedEvent[]> {
    const customers = history(customerDecider, ...customerCommands);
    const a = history(scheduleDecider, ...scheduleCommands(A, snapshotAt(customers, 0), 1, ['UpdateSchedule', 'PauseSchedule']));
    const b = history(scheduleDecider, ...scheduleCommands(B, snapshotAt(customers, 1), 3, ['DeleteSchedule']));
    const d = history(scheduleDecider, ...scheduleCommands(D, snapshotAt(customers, 2), 9, []));
    const e = history(scheduleDecider, ...scheduleCommands(E, snapshotAt(customers, 1), 6, []));
    const order: [string, DomainEvent][] = [
      [customerStream(CUSTOMER), customers[0]], [scheduleStream(A), a[0]], [customerStream(CUSTOMER), customers[1]],
      [scheduleStream(B), b[0]], [scheduleStream(A), a[1]], [customerStream(CUSTOMER), customers[2]],
      [scheduleStream(E), e[0]], [scheduleStream(B), b[1]], [scheduleStream(A), a[2]], [scheduleStream(D), d[0]],
    ];
    for (const [stream, event] of order) {
      await store.appendToStream(stream, [{ id: uuid(), type: event.type, data: JSON.parse(JSON.stringify(event.data)), metadata: metadata({ organization_id: ORGANIZATION }) }], 'any');
    }
    return store.readAll(null, 100);
  }

  beforeEach(async function () {
    database = await freshDatabase();
    store = await createPostgresEventStore(database.pool);
  });
  afterEach(async function () {
    await store.close();
    await database.drop();
  });

  it('any later stretch of the log applied again, in any batching, changes nothing', async function () {
    const events = await appendLog();
    await apply(events);
    const whole = await rows();
    // Every schedule shows the customer's newest name, E too (created from an older read).
    expect(whole.schedules.map((s) => [s.id, s.customer_name, s.customer_version, s.status])).to.deep.equal(
      [[A, 'Atlas Trois', 2, 'paused'], [D, 'Atlas Trois', 2, 'active'], [E, 'Atlas Trois', 2, 'active']].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    );
    expect(whole.customers.map((c) => [c.id, c.name, c.name_search, c.version])).to.deep.equal([[CUSTOMER, 'Atlas Trois', 'atlas trois', 2]]);
    expect(whole.tombstones.map((t) => t.id)).to.deep.equal([B]);

    // One event at a time from the start gives the same rows as the whole log in one batch.
    await clear();
    for (const event of events) await apply([event]);
    expect(await rows()).to.deep.equal(whole);

    await clear();
    for (let i = 0; i < events.length; i += 2) await apply(events.slice(i, i + 2));
    expect(await rows()).to.deep.equal(whole);

    // A late runner: from any point of the log on, after each batch it applies again (one event, two,
    // or all the rest), the rows are still those of the whole log, not an older state.
    for (let k = 0; k < events.length; k++) {
      for (const size of [1, 2, events.length]) {
        for (let i = k; i < events.length; i += size) {
          await apply(events.slice(i, i + size));
          expect(await rows(), `events from ${k} on, by ${size}, after ${i}`).to.deep.equal(whole);
        }
      }
    }
  });

  it('a rebuild from position zero gives the live rows, tombstones included', async function () {
    const events = await appendLog();
    await apply(events);
    const live = await rows();
    await rebuildProjection(database.db, store, schedulesProjector);
    expect(await rows()).to.deep.equal(live);
  });

  it('a schedule created while a rename commits ends with the new name: the two take turns', async function () {
    const events = await appendLog();
    const rename = events.find((e) => e.type === 'CustomerUpdated' && (e.data as { customer: Customer }).customer.version === 2)!;
    const creation = events.find((e) => e.stream === scheduleStream(E))!; // read the customer at v1
    await apply(events.filter((e) => e !== rename && e !== creation));
    // The rename is applied and not committed yet; E's creation comes meanwhile, in another transaction.
    let commit!: () => void;
    const held = new Promise<void>((resolve) => (commit = resolve));
    const renaming = database.db.transaction().execute(async (trx) => {
      await schedulesProjector.apply([rename], trx);
      await held;
    });
    const waiting = async () =>
      (await sql<{ n: number }>`select count(*)::int as n from pg_locks where locktype = 'advisory' and classid = ${0x53434843} and not granted`.execute(database.db)).rows[0].n;
    let creating: Promise<unknown> = Promise.resolve();
    try {
      await until(async () => (await sql<{ n: number }>`select count(*)::int as n from pg_locks where locktype = 'advisory' and classid = ${0x53434843} and granted`.execute(database.db)).rows[0].n > 0, 10_000, 'the rename holding its turn');
      creating = apply([creation]);
      await until(async () => (await waiting()) > 0, 10_000, "the creation waiting for the rename's turn");
    } finally {
      commit();
      await Promise.all([renaming, creating]);
    }
    const row = await database.db.selectFrom('recurring_schedules').select(['customer_name', 'customer_version']).where('id', '=', E).executeTakeFirstOrThrow();
    expect(row).to.deep.equal({ customer_name: 'Atlas Trois', customer_version: 2 });
  });

  it("says the customers' turns as the statement that opens the batch; a customer's creation alone takes none", async function () {
    const events = await appendLog();
    const created = events.filter((e) => e.type === 'CustomerCreated');
    expect(schedulesProjector.opening!(created, sqlLiteral)).to.equal(null);
    const turns = schedulesProjector.opening!(events, sqlLiteral)!;
    expect(turns).to.match(/pg_advisory_xact_lock/).and.to.include(`'${CUSTOMER}'`);
    // Sent first (as the runner and an inline append do), then apply() told so: the turn is held, the rows written.
    const whole = await database.db.transaction().execute(async (trx) => {
      await sql.raw(turns).execute(trx);
      await schedulesProjector.apply(events, trx, { opened: true });
      const { rows: held } = await sql<{ n: number }>`select count(*)::int as n from pg_locks where locktype = 'advisory' and classid = ${0x53434843} and pid = pg_backend_pid()`.execute(trx);
      return held[0].n;
    });
    expect(whole).to.equal(1);
    expect((await rows()).schedules).to.have.length(3);
  });

  it("a row a later event wrote first (its creation swapped away by a rebuild) gets its creation's name", async function () {
    const events = await appendLog();
    await apply(events);
    const whole = await rows();
    const [created, updated] = events.filter((e) => e.stream === scheduleStream(A));
    await sql`delete from recurring_schedules where id = ${A}`.execute(database.db);
    await apply([updated]);
    await apply([created]);
    await apply(events.filter((e) => e.stream === scheduleStream(A)).slice(2));
    expect(await rows()).to.deep.equal(whole);
  });

  it("a retried run's failure applied again after its success keeps the run's first created_at and its newest state", async function () {
    const customers = history(customerDecider, ...customerCommands);
    const create = scheduleCommands(D, snapshotAt(customers, 0), 1, [])[0];
    const run = (type: 'RecordFailure' | 'RecordOccurrence', minute: number): ScheduleCommand => ({
      type,
      data: type === 'RecordFailure'
        ? { schedule_id: D, seq: 0, today: '2026-03-10', error: { code: 'CUSTOMER_INACTIVE', message: 'inactive' } }
        : { schedule_id: D, seq: 0, invoice_id: uuid(), invoice_number: null },
      metadata: meta(minute),
    }) as ScheduleCommand;
    const decided = history(scheduleDecider, create, run('RecordFailure', 2), run('RecordOccurrence', 3));
    await store.appendToStream(customerStream(CUSTOMER), [{ id: uuid(), type: customers[0].type, data: JSON.parse(JSON.stringify(customers[0].data)), metadata: metadata({ organization_id: ORGANIZATION }) }], 'no_stream');
    for (const event of decided) {
      await store.appendToStream(scheduleStream(D), [{ id: uuid(), type: event.type, data: JSON.parse(JSON.stringify(event.data)), metadata: metadata({ organization_id: ORGANIZATION }) }], 'any');
    }
    const events = await store.readAll(null, 100);
    expect(events.map((e) => e.type)).to.deep.equal(['CustomerCreated', 'ScheduleCreated', 'ScheduleOccurrenceFailed', 'ScheduleOccurrenceGenerated']);
    for (const event of events) await apply([event]);
    const whole = await rows();
    expect(whole.runs.map((r) => r.status)).to.deep.equal(['success']);
    expect(new Date(whole.runs[0].created_at).getTime()).to.equal(events[2].created_at.getTime());
    // A rebuild's swap took the run away; the success is written again first, then the failure.
    await sql`delete from schedule_runs`.execute(database.db);
    await apply([events[3]]);
    await apply([events[2]]);
    expect(await rows()).to.deep.equal(whole);
  });

  it('migrations 0105 and 0107 fill the tombstones, the customers and their versions as the projector would have', async function () {
    const events = await appendLog();
    await apply(events);
    const live = await rows();
    await m0107.down(database.db);
    await m0105.down(database.db);
    // As the projector before 0105 could leave them: an older rename applied again over A's name, and
    // the deleted B brought back by its creation applied again.
    await sql`update recurring_schedules set customer_name = 'Atlas Deux', customer_search = 'atlas deux' where id = ${A}`.execute(database.db);
    await schedulesProjectorBefore0105(events.filter((e) => e.stream === scheduleStream(B)).slice(0, 1));
    await m0105.up(database.db);
    await m0107.up(database.db);
    expect(await rows()).to.deep.equal(live);
  });
});
