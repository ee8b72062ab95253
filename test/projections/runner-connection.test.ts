import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { sql } from 'kysely';
import pg from 'pg';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import type { EventStore, NewEvent } from '../../src/eventstore/types.ts';
import { ProjectionProgress } from '../../src/projections/progress.ts';
import type { Projector } from '../../src/projections/projector.ts';
import { ProjectionRunner } from '../../src/projections/runner.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { until } from '../support/wait.ts';

/**
 * The runner writes its batches on the connection that holds its advisory
 * lock (runner.ts write()). What goes wrong on that connection must neither
 * leave a transaction open nor be blamed on a healthy event.
 */
const meta = () => ({ organization_id: null, actor: 'system', request_id: null, correlation_id: null, causation_id: null, occurred_at: new Date().toISOString() });
const ev = (type: string): NewEvent => ({ id: randomUUID(), type, data: {}, metadata: meta() });

describe('projection runner: its connection failing', function () {
  this.timeout(60_000);
  let t: TestDatabase;
  let store: EventStore;
  let progress: ProjectionProgress;
  let runner: ProjectionRunner;
  /** Set to hold apply() inside its first event until released. */
  let gate: { entered: () => void; open: Promise<void> } | null = null;
  const counter: Projector = {
    name: 'counter',
    handles: ['Counted'],
    tables: ['counts'],
    async apply(events, trx) {
      for (const e of events) {
        if (gate) {
          gate.entered();
          await gate.open;
        }
        await sql`insert into counts (stream, n) values (${e.stream}, 1) on conflict (stream) do update set n = counts.n + 1`.execute(trx);
      }
    },
  };
  const projectorConnections = async () =>
    (await t.pool.query(`select pid, state, query from pg_stat_activity where application_name = 'invoicing:projector:counter'`)).rows;
  const checkpointRow = async () => (await t.pool.query(`select position, failed_event_id, error from projection_checkpoints where name = 'counter'`)).rows[0];
  const count = async () => (await t.pool.query(`select coalesce(sum(n), 0)::int as n from counts`)).rows[0].n as number;
  /** Every error the runner showed while `during` ran (polled every few ms). */
  async function errorsDuring(during: () => Promise<void>): Promise<unknown[]> {
    const seen: unknown[] = [];
    const poll = setInterval(() => {
      if (runner.lastError && seen.length === 0) seen.push(runner.lastError);
      void checkpointRow().then((r) => r?.failed_event_id && seen.length === 0 && seen.push(r), () => {});
    }, 3);
    try {
      await during();
    } finally {
      clearInterval(poll);
    }
    return seen;
  }

  beforeEach(async () => {
    t = await freshDatabase();
    await sql`create table counts (stream text primary key, n int not null)`.execute(t.db);
    store = await createPostgresEventStore(t.pool, t.url);
    progress = new ProjectionProgress(t.db, t.url, ['counter']);
    await progress.start();
    runner = new ProjectionRunner({ db: t.db, store, url: t.url, logger: silentLogger, progress, batchSize: 50 }, counter);
    runner.start();
    const first = await store.appendToStream('s', [ev('Counted')], 'any');
    expect(await progress.waitFor(first.position, 5000)).to.equal(true);
  });
  afterEach(async () => {
    gate = null;
    await runner.stop();
    await progress.close();
    await store.close();
    await t.drop();
  });

  it('a cancelled checkpoint update leaves no transaction open, and the next batch applies without error', async () => {
    // Nothing for the projector: it moves on in memory and stores the checkpoint 500 ms later...
    const ignored = await store.appendToStream('other', [ev('Ignored')], 'any');
    await until(() => progress.position('counter') === ignored.position, 10_000);
    // ...while someone (as a rebuild does) holds the checkpoint row, so that update waits, and is cancelled.
    const holder = new pg.Client(t.url);
    holder.on('error', () => {});
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query(`select position from projection_checkpoints where name = 'counter' for update`);
      // The projector's connection that runs the update (it has others: pg_stat_activity lists them in no set order).
      const updating = async () => (await projectorConnections()).find((a) => a.state === 'active' && /update projection_checkpoints/.test(a.query));
      await until(async () => (await updating()) !== undefined, 5000, 'the checkpoint update to wait');
      await t.pool.query('select pg_cancel_backend($1)', [(await updating())!.pid]);
      await until(async () => (await updating()) === undefined, 5000, 'the cancelled update to end');
      // The cancel aborts the runner's transaction; it must roll it back (for an instant after the update ends it has not yet).
      const aborted = async () => (await projectorConnections()).some((a) => a.state === 'idle in transaction (aborted)');
      await until(async () => !(await aborted()), 5000, "the runner's aborted transaction rolled back");
    } finally {
      // Even when an expectation failed: a row lock held on would stall the runner and its stop() after the test.
      await holder.query('commit').catch(() => {});
      await holder.end().catch(() => {});
    }

    const errors = await errorsDuring(async () => {
      const next = await store.appendToStream('s', [ev('Counted')], 'any');
      expect(await progress.waitFor(next.position, 5000)).to.equal(true);
      // Until the checkpoint row itself moved: errors of that later write count too.
      await until(async () => (await checkpointRow()).position === next.position, 10_000, 'the checkpoint stored');
    });
    expect(errors).to.deep.equal([]);
    expect(await count()).to.equal(2);
  });

  it('its connection dying in the middle of a batch is not the event’s fault: no failure recorded, applied once on reconnect', async () => {
    let open!: () => void;
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    gate = { entered, open: new Promise<void>((r) => (open = r)) };
    const appended = await store.appendToStream('s', [ev('Counted')], 'any');
    await inside;
    await t.pool.query('select pg_terminate_backend($1)', [(await projectorConnections())[0].pid]);
    const errors = await errorsDuring(async () => {
      gate = null;
      open();
      expect(await progress.waitFor(appended.position, 15_000)).to.equal(true);
      await until(async () => (await checkpointRow()).position === appended.position, 10_000, 'the checkpoint stored');
    });
    expect(errors).to.deep.equal([]);
    expect(await count()).to.equal(2);
    expect((await checkpointRow()).failed_event_id).to.equal(null);
  });
});
