/**
 * `npm run bench -- invoices`: the invoice API over HTTP at concurrency 32,
 * the server started as `npm start` starts it (one process, every role) on
 * a durable PostgreSQL (embedded in a temp dir with fsync on, or
 * DATABASE_URL), each figure beside a baseline measured in the same run
 * (bench/invoices-baseline.ts, its own process too):
 *
 *  (a) create, 5 lines: invoices/s and latency   vs plain INSERTs of the same rows
 *  (b) finalize (numbering, read-your-writes wait included)  vs a counter row update
 *  (c) list 20 with a status filter in an organization holding 100,000
 *      invoices (seeded in bulk through the event store, projected by the
 *      running server): latency   vs one indexed select + one count
 * and each again one request at a time (a1, b1, c1): the service time,
 * without the queueing of 32 clients on a 2-core machine.
 *
 * Cases alternate halves (baseline, ours, baseline, ours) so drifting noise
 * on a shared machine hits both alike. BENCH_SCALE multiplies the request
 * counts; BENCH_SEED sets the list organization's size (default 100,000).
 */
import { sql } from 'kysely';
import { freePort } from '../src/db/embedded.ts';
import { createPostgresEventStore } from '../src/eventstore/postgres.ts';
import { comparePositions } from '../src/eventstore/types.ts';
import { runConcurrently } from './support/concurrency.ts';
import { createBenchDatabase, startBenchServer, type BenchDatabase } from './support/postgres.ts';
import { fmtInt, fmtMs, msSince, perSecond } from './support/stats.ts';
import { formatTable, markdownTable, type Cell } from './support/table.ts';
import { expectStatus, request, startProcess, type ServerProcess } from './invoices-http.ts';
import { alternating, CONCURRENCY, type Measured } from './invoices-measure.ts';
import { BASELINE_TABLES } from './invoices-baseline.ts';
import { seedInvoices } from './invoices-seed.ts';
import { tenant } from './support/tenant.ts';

const SCALE = Number(process.env.BENCH_SCALE ?? '1') || 1;
const n = (count: number) => Math.max(64, Math.round(count * SCALE));
const COUNTS = { warmup: n(300), create: n(4000), list: n(4000), alone: n(1000), seed: Number(process.env.BENCH_SEED ?? 100_000) };

const items = Array.from({ length: 5 }, (_, i) => ({ description: `Prestation de conseil ${i + 1}`, quantity: i + 1, unit_price: 1250.5, tax_rate: i === 4 ? 10 : 20 }));

async function caughtUp(database: BenchDatabase, projector: string, timeoutMs: number): Promise<void> {
  const store = await createPostgresEventStore(database.pool, database.url);
  try {
    const head = await store.headPosition();
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await sql<{ position: string | null }>`select position from projection_checkpoints where name = ${projector}`.execute(database.db);
      if (comparePositions(rows[0]?.position ?? null, head) >= 0) return;
      if (Date.now() > deadline) throw new Error(`projector ${projector} did not catch up in ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await store.close();
  }
}

export async function run(): Promise<void> {
  const started = process.hrtime.bigint();
  const step = (s: string) => console.log(`  ${s} (${(msSince(started) / 1000).toFixed(0)} s)`);
  const server = await startBenchServer();
  const database = await createBenchDatabase(server, { poolSize: 8, prefix: 'bench_invoices' });
  const processes: ServerProcess[] = [];
  try {
    console.log(`server: ${server.description}`);
    console.log(`concurrency ${CONCURRENCY}; create ${fmtInt(COUNTS.create)}, finalize ${fmtInt(COUNTS.create)}, list ${fmtInt(COUNTS.list)} requests; list organization ${fmtInt(COUNTS.seed)} invoices`);
    await database.pool.query(BASELINE_TABLES);
    const env = { DATABASE_URL: database.url, LOG_LEVEL: 'warn', SERVICE_MODE: 'test' };
    const ours = await startProcess('src/main.ts', await freePort(), env);
    processes.push(ours);
    const base = await startProcess('bench/invoices-baseline.ts', await freePort(), { ...env, BASELINE_SERVER: '1' });
    processes.push(base);
    step('servers up');

    const t = await tenant(database, '000000000000002');
    const auth = { authorization: `Bearer ${t.secret}` };
    const api = `${ours.url}/api/v1`;
    const customer = (await expectStatus(request(`${api}/customers`, 'POST', { name: 'Client Casablanca SA', type: 'b2b', ice: '000000000000003' }, auth), 201)).body.data;
    const body = { customer_id: customer.id, issue_date: '2026-03-14', items };
    const baseBody = { ...body, organization_id: t.organizationId };

    const ourIds: string[] = [];
    const baseIds: string[] = [];
    const createOurs = async () => ourIds.push((await expectStatus(request(`${api}/invoices`, 'POST', body, auth), 201)).body.data.id);
    const createBase = async () => baseIds.push((await expectStatus(request(`${base.url}/invoices`, 'POST', baseBody), 201)).body.data.id);
    await runConcurrently(COUNTS.warmup, CONCURRENCY, () => Promise.all([createOurs(), createBase()]));
    await runConcurrently(COUNTS.warmup, CONCURRENCY, (i) => Promise.all([
      expectStatus(request(`${api}/invoices/${ourIds[i]}/finalize`, 'POST', undefined, auth), 200),
      expectStatus(request(`${base.url}/invoices/${baseIds[i]}/finalize`, 'POST'), 200),
    ]));
    ourIds.length = 0;
    baseIds.length = 0;
    step('warm-up done');

    const side = (server: ServerProcess, applicationName: string, task: (i: number) => Promise<unknown>) => ({ pid: server.pid, applicationName, task });
    const oursSide = (task: (i: number) => Promise<unknown>) => side(ours, 'invoicing%', task);
    const baseSide = (task: (i: number) => Promise<unknown>) => side(base, 'bench-baseline', task);
    const create = await alternating(database.pool, COUNTS.create, oursSide(createOurs), baseSide(createBase));
    const createAlone = await alternating(database.pool, COUNTS.alone, oursSide(createOurs), baseSide(createBase), 1);
    step('create measured');
    const finalize = await alternating(
      database.pool,
      COUNTS.create,
      oursSide((i) => expectStatus(request(`${api}/invoices/${ourIds[i]}/finalize`, 'POST', undefined, auth), 200)),
      baseSide((i) => expectStatus(request(`${base.url}/invoices/${baseIds[i]}/finalize`, 'POST'), 200)),
    );
    const at = COUNTS.create; // the drafts of createAlone
    const finalizeAlone = await alternating(
      database.pool,
      COUNTS.alone,
      oursSide((i) => expectStatus(request(`${api}/invoices/${ourIds[at + i]}/finalize`, 'POST', undefined, auth), 200)),
      baseSide((i) => expectStatus(request(`${base.url}/invoices/${baseIds[at + i]}/finalize`, 'POST'), 200)),
      1,
    );
    step('finalize measured');

    const big = await tenant(database, '000000000000004');
    const seedStart = process.hrtime.bigint();
    const seeded = await seedInvoices(database.pool, big.organizationId, { ...customer, status: 'active' }, COUNTS.seed);
    step(`seeded ${fmtInt(seeded.invoices)} invoices (${fmtInt(seeded.events)} events) into the event store`);
    await caughtUp(database, 'invoices', 30 * 60_000);
    const replayMs = msSince(seedStart);
    step(`projected by the running server: ${fmtInt(perSecond(seeded.events, replayMs))} events/s including the bulk insert`);
    await database.pool.query(`
      insert into bl_invoices select id, organization_id, invoice_number, status, customer_id, currency, issue_date, subtotal, total_tax, total, created_at, updated_at
        from invoices where organization_id = $1`, [big.organizationId]);
    // What autovacuum would have done by now on a live system (visibility map for index-only counts, statistics).
    for (const table of ['invoices', 'invoice_lines', 'invoice_tax_breakdown', 'bl_invoices']) await database.pool.query(`vacuum analyze ${table}`);
    const bigAuth = { authorization: `Bearer ${big.secret}` };
    const listOurs = oursSide(async () => {
      const r = await expectStatus(request(`${api}/invoices?status=paid&per_page=20`, 'GET', undefined, bigAuth), 200);
      if (r.body.data.length !== 20) throw new Error('list returned fewer than 20 invoices');
    });
    const listBase = baseSide(() => expectStatus(request(`${base.url}/invoices?status=paid&organization_id=${big.organizationId}`, 'GET'), 200));
    const list = await alternating(database.pool, COUNTS.list, listOurs, listBase);
    // The same one request at a time: the service time, without the queueing of 32 clients on 2 cores.
    const listAlone = await alternating(database.pool, COUNTS.alone, listOurs, listBase, 1);
    step('list measured');

    // Issue 16's targets: ratios to the baseline of the same run (docs/performance.md "Invoices").
    const headers = ['case', 'ours /s', 'base /s', 'ratio', 'ours p50', 'base p50', 'ours p99', 'base p99', 'CPU/req ours node+pg', 'base', 'target', 'met'];
    const cpu = (m: Measured) => `${m.cpuNode.toFixed(2)}+${m.cpuPg.toFixed(2)} ms`;
    const ratio = (m: { ours: Measured; base: Measured }) => m.ours.perSecond / m.base.perSecond;
    const p50s = (m: { ours: Measured; base: Measured }) => m.ours.latency.p50 / m.base.latency.p50;
    const cpuRatio = (m: { ours: Measured; base: Measured }) => (m.ours.cpuNode + m.ours.cpuPg) / (m.base.cpuNode + m.base.cpuPg);
    const row = (name: string, m: { ours: Measured; base: Measured }, target: string, met: boolean): Cell[] => [
      name, fmtInt(m.ours.perSecond), fmtInt(m.base.perSecond), `${ratio(m).toFixed(2)}x`,
      fmtMs(m.ours.latency.p50), fmtMs(m.base.latency.p50), fmtMs(m.ours.latency.p99), fmtMs(m.base.latency.p99), cpu(m.ours), cpu(m.base), target, met ? 'yes' : 'NO',
    ];
    const rows = [
      row('(a) create, 5 lines', create, `>= 0.6x, CPU <= 2x (${cpuRatio(create).toFixed(1)}x)`, ratio(create) >= 0.6 && cpuRatio(create) <= 2),
      row('(a1) the same, concurrency 1', createAlone, `p50 <= 2x base (${p50s(createAlone).toFixed(1)}x)`, p50s(createAlone) <= 2),
      row('(b) finalize', finalize, '>= 0.75x', ratio(finalize) >= 0.75),
      row('(b1) the same, concurrency 1', finalizeAlone, `p50 <= 3x base (${p50s(finalizeAlone).toFixed(1)}x)`, p50s(finalizeAlone) <= 3),
      row(`(c) list 20 of ${fmtInt(COUNTS.seed)}, status filter`, list, '>= 1.2x (at 100,000)', ratio(list) >= 1.2),
      row('(c1) the same, concurrency 1', listAlone, 'p99 < 20 ms', listAlone.ours.latency.p99 < 20),
    ];
    console.log('');
    console.log(formatTable(headers, rows));
    if (process.argv.includes('--markdown')) console.log(`\n${markdownTable(headers, rows)}`);
    console.log(`\ntotal ${(msSince(started) / 1000).toFixed(0)} s`);
  } finally {
    for (const p of processes) await p.stop().catch(() => {});
    await database.drop().catch(() => {});
    await server.stop();
  }
}
