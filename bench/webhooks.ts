/**
 * `npm run bench -- webhooks`: the webhook pipeline on one PostgreSQL
 * (embedded, durable settings, or DATABASE_URL), to a receiver running in its
 * own process (bench/webhooks/receiver.ts), 4 endpoints, invoice events of
 * ~1.2 KB bodies.
 *  (a) drain: deliveries already in the outbox, one sender process
 *      (32 in flight, 8 per endpoint), until the receiver has them all and
 *      until the database has recorded them all; baseline = plain keep-alive
 *      POSTs of the same bodies at the same concurrency, no database.
 *  (b) pipeline: events appended (8 writers) while subscriber and sender run.
 *  (c) latency while idle: append -> first attempt received by a receiver in
 *      this process (one shared clock), one event every 30 ms.
 * Targets (ISSUE 5): >= 1,000 deliveries/s; p50 < 50 ms, p99 < 200 ms.
 * BENCH_SCALE (default 1) multiplies every count.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPostgresEventStore } from '../src/eventstore/postgres.ts';
import type { EventStore } from '../src/eventstore/types.ts';
import { ProjectionRunner } from '../src/projections/runner.ts';
import { silentLogger } from '../src/shared/logger.ts';
import { addEndpoint } from '../src/workers/webhooks/endpoints.ts';
import { WebhookSender } from '../src/workers/webhooks/sender.ts';
import { createWebhookSubscriber } from '../src/workers/webhooks/subscriber.ts';
import { runConcurrently } from './support/concurrency.ts';
import { createBenchDatabase, startBenchServer, warmPool, type BenchDatabase } from './support/postgres.ts';
import { fmtInt, fmtMs, fmtPct, msSince, perSecond, summarize } from './support/stats.ts';
import { formatTable, markdownTable, type Cell } from './support/table.ts';
import { invoiceEvents, postPlain, waitFor } from './webhooks/load.ts';

const SCALE = Number(process.env.BENCH_SCALE ?? '1') || 1;
const n = (count: number) => Math.max(10, Math.round(count * SCALE));
const COUNTS = { drainEvents: n(2_500), pipelineEvents: n(1_000), latency: n(300) };
const ENDPOINTS = 4;
const CONCURRENCY = 32;

function startReceiver(): Promise<{ child: ChildProcess; port: number; count(): Promise<number> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/webhooks/receiver.ts'], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const count = () =>
    new Promise<number>((resolve) => {
      child.once('message', (m: any) => resolve(m.count));
      child.send('count');
    });
  return new Promise((resolve) => child.stdout!.once('data', (d: Buffer) => resolve({ child, port: Number(d.toString().trim()), count })));
}

const newSender = (db: BenchDatabase) =>
  new WebhookSender({ db: db.db, url: db.url, logger: silentLogger, retryDelaysMs: [60_000], allowInsecure: true, concurrency: CONCURRENCY, perEndpoint: 8 });

async function succeeded(db: BenchDatabase): Promise<number> {
  const { rows } = await db.pool.query(`select count(*)::int as n from webhook_deliveries where status = 'succeeded'`);
  return rows[0].n;
}

async function appendAll(store: EventStore, org: string, count: number): Promise<void> {
  await runConcurrently(count, 8, (i) => store.appendToStream(`invoice-bench-${org}-${i}`, invoiceEvents(org), 'any'));
}

export async function run(): Promise<void> {
  const server = await startBenchServer();
  const database = await createBenchDatabase(server, { poolSize: 40, prefix: 'bench_wh' });
  const store = await createPostgresEventStore(database.pool, database.url);
  const receiver = await startReceiver();
  const runner = new ProjectionRunner({ db: database.db, store, url: database.url, logger: silentLogger }, createWebhookSubscriber());
  const local: number[] = [];
  const localServer = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c)).on('end', () => {
      local.push(performance.now());
      res.end('ok');
    });
  });
  try {
    console.log(`server: ${server.description}`);
    console.log(`counts: (a) ${fmtInt(COUNTS.drainEvents * ENDPOINTS)} deliveries; (b) ${fmtInt(COUNTS.pipelineEvents * ENDPOINTS)}; (c) ${COUNTS.latency} events, idle`);
    await warmPool(database.pool, 40);
    const org = async () => {
      const id = crypto.randomUUID();
      await database.pool.query(
        `insert into organizations (id, account_id, legal_name, billing_address, created_at, updated_at, version) values ($1, $2, 'Bench SARL', '{}', now(), now(), 0)`,
        [id, crypto.randomUUID()],
      );
      return id;
    };
    const bulk = await org();
    for (let e = 1; e <= ENDPOINTS; e++) {
      await addEndpoint(database.db, { organizationId: bulk, url: `http://127.0.0.1:${receiver.port}/e${e}`, convention: e % 2 ? 'A' : 'B' }, { allowInsecure: true });
    }
    runner.start();

    // (a) drain: fill the outbox first (subscriber only), then one sender empties it.
    const drainTotal = COUNTS.drainEvents * ENDPOINTS;
    await appendAll(store, bulk, COUNTS.drainEvents);
    await waitFor(async () => (await database.pool.query('select count(*)::int as n from webhook_deliveries')).rows[0].n === drainTotal, 120_000);
    const bodies = (await database.pool.query('select body from webhook_deliveries limit 100')).rows.map((r) => r.body as string);
    const baseMs = await postPlain(receiver.port, bodies, drainTotal, CONCURRENCY);
    await receiver.count().then(() => receiver.child.send('reset'));
    let sender = newSender(database);
    const t0 = process.hrtime.bigint();
    sender.start();
    await waitFor(async () => (await receiver.count()) >= drainTotal, 300_000, 20);
    const receivedMs = msSince(t0);
    await waitFor(async () => (await succeeded(database)) === drainTotal, 60_000, 20);
    const recordedMs = msSince(t0);

    // (b) pipeline: appends while everything runs.
    const t1 = process.hrtime.bigint();
    await appendAll(store, bulk, COUNTS.pipelineEvents);
    const appendMs = msSince(t1);
    const pipelineTotal = drainTotal + COUNTS.pipelineEvents * ENDPOINTS;
    await waitFor(async () => (await succeeded(database)) === pipelineTotal, 300_000, 20);
    const pipelineMs = msSince(t1);
    await sender.stop();

    // (c) latency while idle: a receiver in this process, so one clock.
    await new Promise<void>((r) => localServer.listen(0, '127.0.0.1', r));
    const quiet = await org();
    await addEndpoint(database.db, { organizationId: quiet, url: `http://127.0.0.1:${(localServer.address() as AddressInfo).port}/l`, convention: 'B' }, { allowInsecure: true });
    sender = newSender(database);
    sender.start();
    const latencies: number[] = [];
    for (let i = 0; i < COUNTS.latency + 20; i++) {
      const before = local.length;
      const sent = performance.now();
      await store.appendToStream(`invoice-lat-${i}-${quiet}`, invoiceEvents(quiet), 'any');
      await waitFor(async () => local.length > before, 10_000, 1);
      if (i >= 20) latencies.push(local[before] - sent); // the first 20 warm up
      await new Promise((r) => setTimeout(r, 30));
    }
    await sender.stop();
    const lat = summarize(latencies);

    const rows: Cell[][] = [
      ['(a) drain, received by the receiver', `${fmtInt(perSecond(drainTotal, receivedMs))}/s`, `${fmtInt(perSecond(drainTotal, baseMs))}/s`, fmtPct(baseMs / receivedMs), '>= 1,000/s'],
      ['(a) drain, recorded in the database', `${fmtInt(perSecond(drainTotal, recordedMs))}/s`, '', '', '>= 1,000/s'],
      ['(b) pipeline: append -> recorded', `${fmtInt(perSecond(COUNTS.pipelineEvents * ENDPOINTS, pipelineMs))}/s`, '', '', '>= 1,000/s'],
      ['(b) ... of which appends (events x 4)', `${fmtInt(perSecond(COUNTS.pipelineEvents * ENDPOINTS, appendMs))}/s`, '', '', ''],
      ['(c) append -> first attempt, p50', fmtMs(lat.p50), '', '', '< 50 ms'],
      ['(c) append -> first attempt, p99', fmtMs(lat.p99), '', '', '< 200 ms'],
      ['(c) append -> first attempt, max', fmtMs(lat.max), '', '', ''],
    ];
    const headers = ['case', 'ours', 'baseline (plain POSTs)', 'ratio', 'target'];
    console.log(`\n${formatTable(headers, rows)}\n\n${markdownTable(headers, rows)}`);
  } finally {
    localServer.close();
    await runner.stop();
    receiver.child.disconnect();
    await store.close();
    await database.drop();
    await server.stop();
  }
}
