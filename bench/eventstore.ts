/**
 * `npm run bench -- eventstore`: the PostgreSQL event store on one PostgreSQL
 * (embedded in a temp dir with fsync on, or DATABASE_URL), each throughput
 * beside a baseline measured in the same run on the same server: plain
 * autocommit INSERTs (one per event) of the same rows into a plain table at
 * the same concurrency, or plain keyset SELECT pages of that table for reads.
 *
 *  (a) appends to one stream, sequentially, at the expected revision
 *  (b) appends of one event over 1,000 streams at concurrency 1, 8, 32
 *  (c) readAll of the whole log in pages of 1,000
 *  (d) append-to-projected latency: appendToStream .. waitFor(position), with
 *      a one-table projector run by ProjectionRunner, 1,000 appends, idle
 *  and the process's RSS at the end (the store, pool, runner and progress open).
 *
 * Each append case runs in 10 slices, ours and the baseline interleaved
 * (base, ours, ours, base, ...), so bursts of noise on a shared machine hit
 * both alike. BENCH_SCALE (default 1) multiplies every count.
 */
import { randomUUID } from 'node:crypto';
import { sql, type Transaction } from 'kysely';
import type pg from 'pg';
import { createPostgresEventStore } from '../src/eventstore/postgres.ts';
import type { EventMetadata, EventStore, NewEvent, RecordedEvent } from '../src/eventstore/types.ts';
import { ProjectionProgress } from '../src/projections/progress.ts';
import type { Projector } from '../src/projections/projector.ts';
import { ProjectionRunner } from '../src/projections/runner.ts';
import { silentLogger } from '../src/shared/logger.ts';
import { runConcurrently } from './support/concurrency.ts';
import { CpuMeter } from './support/cpu.ts';
import { createBenchDatabase, startBenchServer, warmPool, type BenchDatabase } from './support/postgres.ts';
import { fmtInt, fmtMs, fmtPct, mib, msSince, perSecond, summarize, type LatencySummary } from './support/stats.ts';
import { formatTable, markdownTable, type Cell } from './support/table.ts';

const SCALE = Number(process.env.BENCH_SCALE ?? '1') || 1;
const n = (count: number) => Math.max(10, Math.round(count * SCALE));

const COUNTS = {
  singleStream: n(5_000),
  streams: 1_000,
  concurrent: { 1: n(5_000), 8: n(10_000), 32: n(20_000) } as Record<number, number>,
  readPage: 1_000,
  latency: n(1_000),
  warmup: n(200),
};
const SLICES = 10; // interleaved slices per throughput case
const POOL_SIZE = 40; // >= the highest concurrency (32) + the projection runner

// ---------------------------------------------------------------- event rows

/** An invoice-like payload: ~650 bytes of JSON data, ~250 of metadata. */
function eventData(stream: string, revision: number) {
  return {
    invoice_id: stream.slice(stream.indexOf('-') + 1),
    line: {
      line_id: randomUUID(),
      position: revision,
      description: 'Prestation de conseil et accompagnement - phase ' + String(revision).padStart(6, '0'),
      quantity: '3.0000',
      unit: 'hour',
      unit_price: '1250.0000',
      discount_rate: '0.00',
      tax_rate: '20.00',
      total_excl_tax: '3750.00',
      total_tax: '750.00',
      total_incl_tax: '4500.00',
    },
    totals: { total_excl_tax: '3750.00', total_tax: '750.00', total_incl_tax: '4500.00', currency: 'MAD' },
    tax_breakdown: [{ rate: '20.00', base: '3750.00', tax: '750.00' }],
    version: revision + 1,
  };
}

function eventMetadata(): EventMetadata {
  return {
    organization_id: 'b3c7f3d2-5d8e-4c43-9a57-8f0f3c1d2e4a',
    actor: 'key_3f9a1c2b7d',
    request_id: randomUUID(),
    correlation_id: randomUUID(),
    causation_id: null,
    occurred_at: new Date().toISOString(),
  };
}

function newEvent(stream: string, revision: number, type = 'InvoiceLineAdded'): NewEvent {
  return { id: randomUUID(), type, data: eventData(stream, revision), metadata: eventMetadata() };
}

const PLAIN_INSERT = `insert into bench_plain_events (stream_id, revision, event_id, type, data, metadata)
                      values ($1, $2, $3, $4, $5, $6)`;

/** The baseline: the same row, one autocommit INSERT, no stream table, no function, no NOTIFY. */
function plainInsert(pool: pg.Pool, stream: string, revision: number): Promise<unknown> {
  const e = newEvent(stream, revision);
  return pool.query(PLAIN_INSERT, [stream, revision, e.id, e.type, JSON.stringify(e.data), JSON.stringify(e.metadata)]);
}

async function createBaselineTables(db: BenchDatabase): Promise<void> {
  // Same columns as es_events (data and metadata as json: migration 0103); a plain heap with an identity primary key only.
  await db.pool.query(`
    create table bench_plain_events (
      global_position bigint generated always as identity primary key,
      stream_id text not null,
      revision bigint not null,
      event_id uuid not null,
      type text not null,
      data json not null,
      metadata json not null,
      created_at timestamptz not null default now()
    );
    create table bench_projection (
      stream_id text primary key,
      revision bigint not null,
      last_event_id uuid not null,
      total_incl_tax numeric(18,2) not null,
      updated_at timestamptz not null
    );`);
}

// ---------------------------------------------------------------- cases

interface Throughput {
  count: number;
  ours: number; // events/s
  base: number; // rows/s
  /** CPU (this process + its PostgreSQL backends) per event, ms; null when the server is not local. */
  oursCpu: number | null;
  baseCpu: number | null;
}

/** Set by run(): measures this process and the bench pool's backends (application_name 'bench'). */
let meter: CpuMeter | null = null;
let localServer = false;

class CpuTotal {
  ms = 0;
  async add(fn: () => Promise<number>): Promise<number> {
    const { result, cpu } = await meter!.measure(fn);
    this.ms += cpu.self + cpu.postgres;
    return result;
  }
  perEvent(count: number): number | null {
    return localServer ? this.ms / count : null;
  }
}

/**
 * Runs baseline and ours interleaved in SLICES slices (base, ours, ours, base,
 * base, ...), so bursts of noise on a shared machine hit both alike; returns
 * the events per second of each over all its slices.
 */
async function alternating(
  count: number,
  ours: (count: number) => Promise<number>,
  base: (count: number) => Promise<number>,
): Promise<Throughput> {
  let oursMs = 0;
  let baseMs = 0;
  const oursCpu = new CpuTotal();
  const baseCpu = new CpuTotal();
  for (let s = 0; s < SLICES; s++) {
    const part = Math.floor((count * (s + 1)) / SLICES) - Math.floor((count * s) / SLICES);
    if (s % 2 === 0) {
      baseMs += await baseCpu.add(() => base(part));
      oursMs += await oursCpu.add(() => ours(part));
    } else {
      oursMs += await oursCpu.add(() => ours(part));
      baseMs += await baseCpu.add(() => base(part));
    }
  }
  return {
    count,
    ours: perSecond(count, oursMs),
    base: perSecond(count, baseMs),
    oursCpu: oursCpu.perEvent(count),
    baseCpu: baseCpu.perEvent(count),
  };
}

async function singleStream(store: EventStore, pool: pg.Pool): Promise<Throughput> {
  const stream = `invoice-${randomUUID()}`;
  const plainStream = `plain-${randomUUID()}`;
  let revision = -1;
  let plainRevision = -1;
  return alternating(
    COUNTS.singleStream,
    async (count) => {
      const t = process.hrtime.bigint();
      for (let i = 0; i < count; i++) {
        const r = await store.appendToStream(stream, [newEvent(stream, revision + 1)], revision < 0 ? 'no_stream' : revision);
        revision = r.nextRevision;
      }
      return msSince(t);
    },
    async (count) => {
      const t = process.hrtime.bigint();
      for (let i = 0; i < count; i++) await plainInsert(pool, plainStream, ++plainRevision);
      return msSince(t);
    },
  );
}

/** 1,000 streams, each owned by one worker, so every append's expected revision is exact. */
async function manyStreams(store: EventStore, pool: pg.Pool, streams: string[], revisions: Map<string, number>, concurrency: number) {
  const owned = (c: number) => Array.from({ length: c }, (_, w) => streams.filter((_, s) => s % c === w));
  const next = new Array<number>(concurrency).fill(0);
  const plainNext = new Array<number>(concurrency).fill(0);
  const mine = owned(concurrency);
  const plainRevisions = new Map<string, number>();
  return alternating(
    COUNTS.concurrent[concurrency],
    async (count) => {
      const r = await runConcurrently(count, concurrency, async (_, w) => {
        const stream = mine[w][next[w]++ % mine[w].length];
        const expected = revisions.get(stream)!;
        const result = await store.appendToStream(stream, [newEvent(stream, expected + 1)], expected);
        revisions.set(stream, result.nextRevision);
      });
      return r.elapsedMs;
    },
    async (count) => {
      const r = await runConcurrently(count, concurrency, async (_, w) => {
        const stream = mine[w][plainNext[w]++ % mine[w].length];
        const revision = (plainRevisions.get(stream) ?? -1) + 1;
        plainRevisions.set(stream, revision);
        await plainInsert(pool, stream, revision);
      });
      return r.elapsedMs;
    },
  );
}

/** Reads the whole log page by page; best of three rounds each (alternating). */
async function readAll(store: EventStore, pool: pg.Pool): Promise<Throughput> {
  const ours = async () => {
    const t = process.hrtime.bigint();
    let after: string | null = null;
    let count = 0;
    for (;;) {
      const page: RecordedEvent[] = await store.readAll(after, COUNTS.readPage);
      if (page.length === 0) break;
      count += page.length;
      after = page[page.length - 1].position;
    }
    return { count, ms: msSince(t) };
  };
  const base = async () => {
    const t = process.hrtime.bigint();
    let after = '0';
    let count = 0;
    for (;;) {
      const { rows } = await pool.query(
        `select global_position, stream_id, revision, event_id, type, data, metadata, created_at
         from bench_plain_events where global_position > $1 order by global_position limit $2`,
        [after, COUNTS.readPage],
      );
      if (rows.length === 0) break;
      count += rows.length;
      after = rows[rows.length - 1].global_position;
    }
    return { count, ms: msSince(t) };
  };
  const oursCpu = new CpuTotal();
  const baseCpu = new CpuTotal();
  let best = { count: 0, ours: 0, base: 0, rows: 0 };
  for (let round = 0; round < 3; round++) {
    let b = { count: 0, ms: 0 };
    let o = { count: 0, ms: 0 };
    await baseCpu.add(async () => (b = await base()).ms);
    await oursCpu.add(async () => (o = await ours()).ms);
    best = {
      count: o.count,
      rows: best.rows + o.count,
      ours: Math.max(best.ours, perSecond(o.count, o.ms)),
      base: Math.max(best.base, perSecond(b.count, b.ms)),
    };
  }
  return { count: best.count, ours: best.ours, base: best.base, oursCpu: oursCpu.perEvent(best.rows), baseCpu: baseCpu.perEvent(best.rows) };
}

/** The trivial read model: one row per stream, upserted for every event. */
const benchProjector: Projector = {
  name: 'bench_projection',
  handles: ['InvoiceLineAdded'],
  tables: ['bench_projection'],
  async apply(events: RecordedEvent[], trx: Transaction<any>) {
    for (const e of events) {
      const data = e.data as ReturnType<typeof eventData>;
      await sql`
        insert into bench_projection (stream_id, revision, last_event_id, total_incl_tax, updated_at)
        values (${e.stream}, ${e.revision}, ${e.id}, ${data.totals.total_incl_tax}, ${e.metadata.occurred_at})
        on conflict (stream_id) do update set revision = excluded.revision, last_event_id = excluded.last_event_id,
          total_incl_tax = excluded.total_incl_tax, updated_at = excluded.updated_at`.execute(trx);
    }
  },
};

interface Latency {
  ours: LatencySummary;
  append: LatencySummary;
  base: LatencySummary;
  catchUp: { count: number; perSecond: number };
}

async function appendToProjected(store: EventStore, database: BenchDatabase, streams: string[], revisions: Map<string, number>): Promise<{ latency: Latency; close(): Promise<void> }> {
  const progress = new ProjectionProgress(database.db, database.url, [benchProjector.name]);
  await progress.start();
  const runner = new ProjectionRunner({ db: database.db, store, url: database.url, logger: silentLogger, progress }, benchProjector);
  const close = async () => {
    await runner.stop();
    await progress.close();
  };

  // Catch up with everything appended so far (informational: projection throughput).
  const head = await store.headPosition();
  const { rows } = await database.pool.query('select count(*)::int as n from es_events');
  const t = process.hrtime.bigint();
  runner.start();
  if (head && !(await progress.waitFor(head, 120_000))) throw new Error('projector did not catch up within 120 s');
  const catchUp = { count: rows[0].n as number, perSecond: perSecond(rows[0].n, msSince(t)) };
  await new Promise((r) => setTimeout(r, 500)); // let the system settle: idle from here on

  const total = COUNTS.latency;
  const ours: number[] = [];
  const append: number[] = [];
  const base: number[] = [];
  for (let i = 0; i < total; i++) {
    // Baseline: one durable autocommit INSERT of the same row (the floor of any write).
    const b0 = process.hrtime.bigint();
    await plainInsert(database.pool, `plain-${streams[i % streams.length]}`, i);
    base.push(msSince(b0));

    const stream = streams[i % streams.length];
    const expected = revisions.get(stream)!;
    const t0 = process.hrtime.bigint();
    const result = await store.appendToStream(stream, [newEvent(stream, expected + 1)], expected);
    append.push(msSince(t0));
    if (!(await progress.waitFor(result.position, 10_000))) throw new Error(`position ${result.position} not projected within 10 s`);
    ours.push(msSince(t0));
    revisions.set(stream, result.nextRevision);
  }
  const { rows: check } = await database.pool.query('select count(*)::int as n from bench_projection');
  if (check[0].n !== streams.length + 2) throw new Error(`projection has ${check[0].n} rows, expected ${streams.length + 2}`);
  return { latency: { ours: summarize(ours), append: summarize(append), base: summarize(base), catchUp }, close };
}

// ---------------------------------------------------------------- report

const us = (ms: number | null) => (ms === null ? '-' : `${Math.round(ms * 1000)} µs`);

function ratioRow(label: string, count: number, t: Throughput, target: string, met: boolean | null): Cell[] {
  const cpuRatio = t.oursCpu && t.baseCpu ? fmtPct(t.baseCpu / t.oursCpu) : '-';
  return [
    label,
    fmtInt(count),
    `${fmtInt(t.ours)}/s`,
    `${fmtInt(t.base)}/s`,
    fmtPct(t.ours / t.base),
    target,
    met === null ? '' : met ? 'yes' : 'NO',
    us(t.oursCpu),
    us(t.baseCpu),
    cpuRatio,
  ];
}

export async function run(): Promise<void> {
  const started = process.hrtime.bigint();
  const server = await startBenchServer();
  let database: BenchDatabase | null = null;
  let store: EventStore | null = null;
  try {
    console.log(`server: ${server.description}`);
    console.log(
      `counts: (a) ${fmtInt(COUNTS.singleStream)} appends; (b) ${COUNTS.streams} streams, ` +
        Object.entries(COUNTS.concurrent).map(([c, k]) => `${fmtInt(k)} appends at concurrency ${c}`).join(', ') +
        `; (c) the whole log in pages of ${COUNTS.readPage}; (d) ${fmtInt(COUNTS.latency)} appends; pool ${POOL_SIZE}` +
        (SCALE !== 1 ? ` (BENCH_SCALE=${SCALE})` : ''),
    );
    console.log('each event: 1 per append, ~650 B data + ~250 B metadata JSON; baseline = same rows, plain autocommit INSERTs');

    database = await createBenchDatabase(server, { poolSize: POOL_SIZE, prefix: 'bench_es' });
    await createBaselineTables(database);
    await warmPool(database.pool, POOL_SIZE);
    store = await createPostgresEventStore(database.pool, database.url);
    meter = new CpuMeter(database.pool, 'bench');
    localServer = server.embedded;
    const { pool } = database;

    // Warm-up (JIT, plan caches, the function), not timed.
    const warm = `warmup-${randomUUID()}`;
    for (let i = 0; i < COUNTS.warmup; i++) {
      await store.appendToStream(warm, [newEvent(warm, i)], i === 0 ? 'no_stream' : i - 1);
      await plainInsert(pool, warm, i);
    }

    const step = (s: string) => console.log(`  ${s} (${(msSince(started) / 1000).toFixed(0)} s)`);
    const a = await singleStream(store, pool);
    step(`(a) ${fmtInt(a.ours)} vs ${fmtInt(a.base)}/s`);

    // The 1,000 streams exist before (b) starts (created with one event each, not timed).
    const streams = Array.from({ length: COUNTS.streams }, () => `invoice-${randomUUID()}`);
    const revisions = new Map<string, number>();
    await runConcurrently(streams.length, 8, async (i) => {
      const r = await store!.appendToStream(streams[i], [newEvent(streams[i], 0)], 'no_stream');
      revisions.set(streams[i], r.nextRevision);
    });
    const b: Record<number, Throughput> = {};
    for (const c of [1, 8, 32]) {
      b[c] = await manyStreams(store, pool, streams, revisions, c);
      step(`(b) c=${c}: ${fmtInt(b[c].ours)} vs ${fmtInt(b[c].base)}/s`);
    }

    const r = await readAll(store, pool);
    step(`(c) ${fmtInt(r.ours)} vs ${fmtInt(r.base)}/s`);

    const projected = await appendToProjected(store, database, streams, revisions);
    const l = projected.latency;
    step(`(d) p50 ${fmtMs(l.ours.p50)}, p99 ${fmtMs(l.ours.p99)}`);
    const memory = process.memoryUsage();
    const peakRss = process.resourceUsage().maxRSS * 1024;
    await projected.close();

    const headers = ['case', 'count', 'ours', 'baseline', 'ours/base', 'target', 'met', 'CPU/ev ours', 'CPU/ev base', 'base/ours CPU'];
    const rows: Cell[][] = [
      ratioRow('(a) append, 1 stream, sequential', a.count, a, '', null),
      ratioRow('(b) append, 1,000 streams, c=1', b[1].count, b[1], '', null),
      ratioRow('(b) append, 1,000 streams, c=8', b[8].count, b[8], '', null),
      ratioRow('(b) append, 1,000 streams, c=32', b[32].count, b[32], 'ratio >= 50%', b[32].ours / b[32].base >= 0.5),
      ratioRow(`(c) readAll, pages of ${COUNTS.readPage}`, r.count, r, '>= 50,000/s', r.ours >= 50_000),
      ['(d) append-to-projected p50', fmtInt(l.ours.count), fmtMs(l.ours.p50), fmtMs(l.base.p50), '', '', ''],
      ['(d) append-to-projected p99', fmtInt(l.ours.count), fmtMs(l.ours.p99), fmtMs(l.base.p99), '', '< 50 ms', l.ours.p99 < 50 ? 'yes' : 'NO'],
      ['(d) of which appendToStream p50 / p99', '', `${fmtMs(l.append.p50)} / ${fmtMs(l.append.p99)}`, '', '', '', ''],
      ['(info) projector catch-up, whole log', fmtInt(l.catchUp.count), `${fmtInt(l.catchUp.perSecond)}/s`, '', '', '', ''],
      ['RSS after the benchmark', '', mib(memory.rss), '', '', '< 300 MiB', memory.rss < 300 * 1024 * 1024 ? 'yes' : 'NO'],
      ['RSS peak / heap used at the end', '', `${mib(peakRss)} / ${mib(memory.heapUsed)}`, '', '', '', ''],
    ];
    console.log('');
    console.log('baseline: (a)(b) plain autocommit INSERT per event, same rows, same concurrency; (c) plain keyset SELECT pages');
    console.log('of the same rows (best of 3 rounds each); (d) latency of one plain autocommit INSERT, measured interleaved.');
    console.log('');
    console.log(formatTable(headers, rows));
    if (process.argv.includes('--markdown')) console.log(`\n${markdownTable(headers, rows)}`);
    console.log(`\ntotal ${(msSince(started) / 1000).toFixed(0)} s`);
  } finally {
    await store?.close().catch(() => {});
    await database?.drop().catch(() => {});
    await server.stop();
  }
}
