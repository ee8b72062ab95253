import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { sql, type Kysely } from 'kysely';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import type { EventStore, NewEvent } from '../../src/eventstore/types.ts';
import { ProjectionProgress } from '../../src/projections/progress.ts';
import type { Projector } from '../../src/projections/projector.ts';
import { rebuildProjection } from '../../src/projections/rebuild.ts';
import { ProjectionRunner } from '../../src/projections/runner.ts';
import { projectionStatus } from '../../src/projections/status.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { until } from '../support/wait.ts';

const meta = () => ({ organization_id: null, actor: 'system', request_id: null, correlation_id: null, causation_id: null, occurred_at: new Date().toISOString() });
const ev = (type: string, data: unknown): NewEvent => ({ id: randomUUID(), type, data, metadata: meta() });

/** Counts per stream; fails on events whose data says so. */
function counter(name = 'counter'): Projector & { failOn: Set<string> } {
  const failOn = new Set<string>();
  return {
    name,
    handles: ['Counted'],
    tables: ['counts'],
    failOn,
    async apply(events, trx) {
      for (const e of events) {
        if (failOn.has((e.data as any).tag)) throw new Error(`cannot count ${(e.data as any).tag}`);
        await sql`insert into counts (stream, n, last_tag) values (${e.stream}, 1, ${(e.data as any).tag})
                  on conflict (stream) do update set n = counts.n + 1, last_tag = excluded.last_tag`.execute(trx);
      }
    },
  };
}

describe('projection runner', () => {
  let t: TestDatabase;
  let store: EventStore;
  let progress: ProjectionProgress;
  const runners: ProjectionRunner[] = [];
  const start = (p: Projector) => {
    const r = new ProjectionRunner({ db: t.db, store, url: t.url, logger: silentLogger, progress, batchSize: 50 }, p);
    runners.push(r);
    r.start();
    return r;
  };
  const counts = async (db: Kysely<any> = t.db) =>
    (await sql<{ stream: string; n: number; last_tag: string }>`select stream, n, last_tag from counts order by stream`.execute(db)).rows;

  beforeEach(async () => {
    t = await freshDatabase();
    await sql`create table counts (stream text primary key, n int not null, last_tag text)`.execute(t.db);
    store = await createPostgresEventStore(t.pool, t.url);
    progress = new ProjectionProgress(t.db, t.url, ['counter']);
    await progress.start();
  });
  afterEach(async () => {
    await Promise.all(runners.splice(0).map((r) => r.stop()));
    await progress.close();
    await store.close();
    await t.drop();
  });

  it('applies every handled event once and waitFor resolves after the append is projected', async () => {
    start(counter());
    let last = '';
    for (let i = 0; i < 120; i++) {
      const r = await store.appendToStream(`s-${i % 3}`, [ev('Counted', { tag: `t${i}` }), ev('Ignored', {})], 'any');
      last = r.position;
    }
    expect(await progress.waitFor(last, 10_000)).to.equal(true);
    expect(await counts()).to.deep.equal([
      { stream: 's-0', n: 40, last_tag: 't117' },
      { stream: 's-1', n: 40, last_tag: 't118' },
      { stream: 's-2', n: 40, last_tag: 't119' },
    ]);
  });

  it('read your writes: waitFor right after each append sees the row', async () => {
    start(counter());
    for (let i = 0; i < 20; i++) {
      const r = await store.appendToStream('rw', [ev('Counted', { tag: `t${i}` })], 'any');
      expect(await progress.waitFor(r.position, 5000)).to.equal(true);
      expect((await counts())[0]).to.deep.include({ n: i + 1, last_tag: `t${i}` });
    }
  });

  it('runs one active instance across runners (advisory lock) without double counting', async () => {
    start(counter());
    start(counter());
    const appends = Array.from({ length: 100 }, (_, i) => store.appendToStream(`c-${i % 5}`, [ev('Counted', { tag: `x${i}` })], 'any'));
    const results = await Promise.all(appends);
    const max = results.map((r) => r.position).sort().at(-1)!;
    expect(await progress.waitFor(max, 10_000)).to.equal(true);
    const rows = await counts();
    expect(rows.reduce((s, r) => s + r.n, 0)).to.equal(100);
    expect(runners.filter((r) => r.state === 'running')).to.have.length(1);
    expect(runners.filter((r) => r.state === 'standby')).to.have.length(1);
  });

  it('stops on a failing event, reports its id, never skips it, and resumes once it can be applied', async () => {
    const p = counter();
    p.failOn.add('poison');
    const runner = start(p);
    await store.appendToStream('f', [ev('Counted', { tag: 'ok1' })], 'any');
    const bad = ev('Counted', { tag: 'poison' });
    await store.appendToStream('f', [bad], 'any');
    const after = await store.appendToStream('g', [ev('Counted', { tag: 'ok2' })], 'any');
    await until(async () => runner.state === 'failed', 10_000);
    expect(runner.lastError?.eventId).to.equal(bad.id);
    const [status] = await projectionStatus(t.db, store, ['counter']);
    expect(status.failed_event_id).to.equal(bad.id);
    expect(status.error).to.match(/cannot count poison/);
    // The event before the poison was applied; the one after was not (no skipping).
    expect(await counts()).to.deep.equal([{ stream: 'f', n: 1, last_tag: 'ok1' }]);
    expect(await progress.waitFor(after.position, 200)).to.equal(false);

    p.failOn.clear(); // the bug is fixed: the retry (with backoff) goes through
    expect(await progress.waitFor(after.position, 10_000)).to.equal(true);
    expect(await counts()).to.deep.equal([
      { stream: 'f', n: 2, last_tag: 'poison' },
      { stream: 'g', n: 1, last_tag: 'ok2' },
    ]);
    expect(runner.state).to.equal('running');
  });

  it('batches with nothing to apply move on at once and are stored shortly after, never backwards', async () => {
    start(counter());
    const before = await store.appendToStream('mix', [ev('Counted', { tag: 'a' })], 'any');
    expect(await progress.waitFor(before.position, 5000)).to.equal(true);
    let last = '';
    for (let i = 0; i < 30; i++) last = (await store.appendToStream(`other-${i}`, [ev('Ignored', {})], 'any')).position;
    // Waiters are told without a checkpoint transaction...
    expect(await progress.waitFor(last, 5000)).to.equal(true);
    // ...and the stored checkpoint follows within the flush delay.
    await until(async () => {
      const { rows } = await sql<{ position: string }>`select position from projection_checkpoints where name = 'counter'`.execute(t.db);
      return rows[0].position === last;
    }, 5000);
    const after = await store.appendToStream('mix', [ev('Counted', { tag: 'b' })], 'any');
    expect(await progress.waitFor(after.position, 5000)).to.equal(true);
    expect(await counts()).to.deep.equal([{ stream: 'mix', n: 2, last_tag: 'b' }]);
  });

  it('status lists the projectors first, then the other log consumers with a checkpoint', async () => {
    await sql`insert into projection_checkpoints (name, position) values ('a-subscriber', null), ('counter', null)
              on conflict do nothing`.execute(t.db);
    const status = await projectionStatus(t.db, store, ['counter', 'never-started']);
    expect(status.map((s) => s.name)).to.deep.equal(['counter', 'never-started', 'a-subscriber']);
  });

  it('rebuild from zero while the runner keeps projecting gives the same rows', async () => {
    start(counter());
    const writes = (from: number, n: number) =>
      Promise.all(Array.from({ length: n }, (_, i) => store.appendToStream(`r-${(from + i) % 7}`, [ev('Counted', { tag: `r${from + i}` })], 'any')));
    await writes(0, 200);
    // Corrupt the live table: the rebuild must not depend on it.
    await sql`update counts set n = n + 1000`.execute(t.db);
    const concurrent = writes(200, 100);
    const result = await rebuildProjection(t.db, store, counter());
    const last = (await concurrent).map((r) => r.position).sort().at(-1)!;
    expect(await progress.waitFor(last, 10_000)).to.equal(true);
    expect(result.rows.counts).to.equal(7);
    const rows = await counts();
    expect(rows.reduce((s, r) => s + r.n, 0)).to.equal(300);
    expect(rows.map((r) => r.n)).to.deep.equal([43, 43, 43, 43, 43, 43, 42]);
  });
});
