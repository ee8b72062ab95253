/**
 * `npm run bench -- recurring`: one scheduler tick that finds 5,000 due
 * occurrences (auto_finalize on: every invoice is numbered through the
 * gapless protocol) against the baseline of the issue, measured in the same
 * run on the same PostgreSQL: `POST /invoices` (create, 5 lines) over HTTP at
 * concurrency 32, as `npm run bench -- invoices` (a) measures it, before the
 * tick and again after it (the ratio is to the mean of the two).
 *
 * The service runs in its own process (`src/main.ts --role
 * api,projector,webhooks`: it serves the API and projects what the tick
 * writes, while it writes); the schedules are created through the schedule
 * command handler (not timed); the tick runs in the benchmark's process through
 * the scheduler's own code (runSchedulerTick), so exactly one tick is timed,
 * on the event store a scheduler process gives it (src/workers/scheduler.ts
 * schedulerDeps: the runtime's store without its inline projections, so the
 * service's runners project the tick's writes, in batches, while it runs).
 * Two times: the tick's, and until the read models hold all it wrote.
 * Afterwards every invoice is checked: 5,000 of them, numbered, the numbers
 * of each organization exactly 1..N.
 *
 * BENCH_SCALE multiplies the counts (occurrences in steps of 500: one
 * organization holds at most its plan's 500 schedules).
 *
 * Two knobs for comparisons (docs/performance.md "The scheduler's tick
 * without inline projections"):
 *  - BENCH_PROBE=1: a client creates invoices one at a time in the tick's
 *    first organization while the tick runs (and for as long before it, as
 *    the idle reference): what the tick, and the runners' batches, cost a
 *    client's write. It slows the tick by the CPU it takes.
 *  - BENCH_TICK_INLINE=1: the tick through the store with the inline
 *    projections, as it ran until 2026-11-27.
 *  - BENCH_TICK_IN_SERVICE=1: the tick of the all-in-one process instead
 *    (`npm start`'s: every role, so its tick shares one Node thread with the
 *    API and the runners that project it): once the schedules are due, the
 *    service is started again with every role and SCHEDULER_CRON every
 *    second, and its tick's duration is read from its 'scheduler tick' log
 *    line; the baseline after it is measured on a service started as before.
 */
import { spawn } from 'node:child_process';
import { sql } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { createAccount } from '../src/accounts/accounts.ts';
import { insertKey } from '../src/accounts/keys.ts';
import { bundleScopes } from '../src/accounts/scopes.ts';
import { businessToday } from '../src/commands/schedule/calendar.ts';
import { createSchedule } from '../src/commands/schedule/handler.ts';
import { readModelFacts } from '../src/queries/invoice-facts.ts';
import { freePort } from '../src/db/embedded.ts';
import { createPostgresEventStore } from '../src/eventstore/postgres.ts';
import { inlineProjections } from '../src/projections/inline.ts';
import { readModelProjectors } from '../src/read-models.ts';
import { silentLogger } from '../src/shared/logger.ts';
import { runSchedulerTick } from '../src/workers/scheduler.ts';
import { expectStatus, request } from './invoices-http.ts';
import { runConcurrently } from './support/concurrency.ts';
import { createBenchDatabase, startBenchServer, type BenchDatabase } from './support/postgres.ts';
import { fmtInt, fmtMs, msSince, perSecond, summarize } from './support/stats.ts';
import { formatTable, markdownTable } from './support/table.ts';

const SCALE = Number(process.env.BENCH_SCALE ?? '1') || 1;
const PER_ORGANIZATION = 500; // the fiduciaire plan's schedule quota
const ORGANIZATIONS = Math.max(1, Math.round(10 * SCALE));
const OCCURRENCES = ORGANIZATIONS * PER_ORGANIZATION;
const CREATES = Math.max(500, Math.round(2000 * SCALE));
const CONCURRENCY = 32;
const PROBE = process.env.BENCH_PROBE === '1';
const TICK_INLINE = process.env.BENCH_TICK_INLINE === '1';
const IN_SERVICE = process.env.BENCH_TICK_IN_SERVICE === '1';

const items = Array.from({ length: 5 }, (_, i) => ({ description: `Prestation de conseil ${i + 1}`, quantity: i + 1, unit_price: 1250.5, tax_rate: i === 4 ? 10 : 20 }));

interface Tenant {
  organizationId: string;
  auth: Record<string, string>;
}

async function tenant(database: BenchDatabase, n: number): Promise<Tenant> {
  const account = await createAccount(database.db, { name: `Bench ${n}`, plan: 'fiduciaire', requestsPerMinute: 100_000_000 });
  const organizationId = uuidv7();
  const now = new Date().toISOString();
  await database.db.insertInto('organizations').values({
    id: organizationId, account_id: account.id, legal_name: 'Bench SARL', ice: String(100_000_000_000_000 + n),
    billing_address: JSON.stringify({ street: null, city: null, postal_code: null, country: 'MA' }),
    api_enabled: true, archived: false, created_at: now, updated_at: now, version: 0,
  }).execute();
  const { secret } = await insertKey(database.db, { accountId: account.id, organizationId, scopes: bundleScopes('full_access') });
  return { organizationId, auth: { authorization: `Bearer ${secret}` } };
}

interface Service {
  url: string;
  /** Resolves with the first log line (parsed JSON) whose msg is `message`, and the bench's clock when it arrived. */
  logged(message: string): Promise<{ line: Record<string, any>; at: bigint }>;
  stop(): Promise<void>;
}

/**
 * The service, by default without the scheduler role (the tick timed below is then the only one);
 * `roles` null: every role, as `npm start` runs it.
 */
async function startService(port: number, env: Record<string, string>, roles: string | null = 'api,projector,webhooks'): Promise<Service> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...(roles ? ['--role', roles] : [])], {
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let partial = '';
  const waiting: { message: string; resolve: (r: { line: Record<string, any>; at: bigint }) => void }[] = [];
  child.stdout!.on('data', (d) => {
    output = (output + d).slice(-4000);
    const lines = (partial + d).split('\n');
    partial = lines.pop()!;
    for (const text of lines) {
      if (!waiting.length || !text.startsWith('{')) continue;
      const line = JSON.parse(text);
      for (const w of waiting.filter((w) => w.message === line.msg)) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve({ line, at: process.hrtime.bigint() });
      }
    }
  });
  child.stderr!.on('data', (d) => (output = (output + d).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  while (!(await request(`${url}/healthz`, 'GET').then((r) => r.status === 200, () => false))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`service did not start: ${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    logged: (message) => new Promise((resolve) => waiting.push({ message, resolve })),
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export async function run(): Promise<void> {
  const started = process.hrtime.bigint();
  const step = (s: string) => console.log(`  ${s} (${(msSince(started) / 1000).toFixed(0)} s)`);
  const server = await startBenchServer();
  const database = await createBenchDatabase(server, { poolSize: 20, prefix: 'bench_recurring' });
  let service: Service | null = null;
  try {
    console.log(`server: ${server.description}`);
    console.log(`${fmtInt(OCCURRENCES)} due occurrences in ${ORGANIZATIONS} organizations (auto_finalize); baseline: ${fmtInt(CREATES)} POST /invoices at concurrency ${CONCURRENCY}`);
    const serviceEnv = { DATABASE_URL: database.url, LOG_LEVEL: 'warn', SERVICE_MODE: 'test' };
    const port = await freePort();
    service = await startService(port, serviceEnv);
    const api = `${service.url}/api/v1`;
    const tenants: Tenant[] = [];
    const customers: string[] = [];
    for (let i = 0; i < ORGANIZATIONS; i++) {
      const t = await tenant(database, i);
      tenants.push(t);
      const c = await expectStatus(request(`${api}/customers`, 'POST', { name: `Client ${i}`, type: 'b2b', ice: String(200_000_000_000_000 + i) }, t.auth), 201);
      customers.push(c.body.data.id);
    }
    step('service up, organizations ready');

    // Baseline: create-invoice throughput, in the first organization, before anything is due.
    const body = { customer_id: customers[0], issue_date: '2026-03-14', items };
    const warmUp = () => runConcurrently(200, CONCURRENCY, () => expectStatus(request(`${api}/invoices`, 'POST', body, tenants[0].auth), 201));
    await warmUp();
    // Measured before and again after the tick (a few seconds each, on a shared machine): the ratio is to their mean.
    const measureCreates = async () => {
      const creates = await runConcurrently(CREATES, CONCURRENCY, () => expectStatus(request(`${api}/invoices`, 'POST', body, tenants[0].auth), 201));
      return perSecond(creates.count, creates.elapsedMs);
    };
    const createsBefore = await measureCreates();
    step(`baseline measured: ${fmtInt(createsBefore)} creates/s`);

    // 500 schedules per organization, due today (Africa/Casablanca), through the schedule command handler
    // (the API's create path without HTTP: seeding is not what is measured).
    const today = businessToday(new Date());
    // The store of a process (src/runtime.ts), inline projections included: the seeding below writes through it,
    // the tick through its view without them, as schedulerDeps gives it.
    const inline = inlineProjections(readModelProjectors.filter((p) => p.inline), silentLogger);
    const store = await createPostgresEventStore(database.pool, database.url, { inline: inline.projections });
    const facts = readModelFacts(database.pool);
    const snapshots = await Promise.all(tenants.map((t, o) => facts.customer(t.organizationId, customers[o])));
    await runConcurrently(OCCURRENCES, CONCURRENCY, (i) => {
      const o = i % ORGANIZATIONS;
      const metadata = { organization_id: tenants[o].organizationId, actor: 'bench', request_id: null, correlation_id: null, causation_id: null, occurred_at: new Date().toISOString() };
      const input = { customer_id: customers[o], frequency: 'monthly' as const, start_date: today, auto_finalize: true, items };
      const used = Math.floor(i / ORGANIZATIONS);
      return createSchedule({ store, organizationId: tenants[o].organizationId, metadata }, { scheduleId: uuidv7(), input, customer: snapshots[o], quota: PER_ORGANIZATION, used, above: 0 });
    });
    const projected = async () => Number((await sql<{ n: string }>`select count(*) as n from recurring_schedules where status = 'active'`.execute(database.db)).rows[0].n);
    while ((await projected()) < OCCURRENCES) await new Promise((r) => setTimeout(r, 500));
    step(`${fmtInt(OCCURRENCES)} schedules created and projected`);

    // A client's lone creates in the tick's first organization, while `running` says so.
    const probe = async (running: () => boolean): Promise<number[]> => {
      const samples: number[] = [];
      while (running()) {
        const t = process.hrtime.bigint();
        await expectStatus(request(`${api}/invoices`, 'POST', body, tenants[0].auth), 201);
        samples.push(msSince(t));
      }
      return samples;
    };
    let idleProbe: number[] = [];
    if (PROBE) {
      const until = Date.now() + 20_000;
      idleProbe = await probe(() => Date.now() < until);
      step(`probe, idle: ${idleProbe.length} lone creates`);
    }

    // The tick, in this process, on its own pool and event store (as a scheduler process has); or the
    // all-in-one service's, which starts within a second of the service (SCHEDULER_CRON every second).
    let ticking = true;
    let tickStart: bigint;
    let tickMs: number;
    let report: { generated: number; failed: number };
    let duringProbe: number[];
    if (IN_SERVICE) {
      await service.stop();
      service = null;
      service = await startService(port, { ...serviceEnv, LOG_LEVEL: 'info', SCHEDULER_CRON: '* * * * * *' }, null);
      const tickProbe = PROBE ? probe(() => ticking) : Promise.resolve([]);
      const { line, at } = await service.logged('scheduler tick');
      ticking = false;
      duringProbe = await tickProbe;
      report = { generated: line.generated, failed: line.failed };
      tickMs = line.ms;
      tickStart = at - BigInt(Math.round(line.ms * 1e6));
    } else {
      tickStart = process.hrtime.bigint();
      const tickProbe = PROBE ? probe(() => ticking) : Promise.resolve([]);
      const tickStore = TICK_INLINE ? store : store.withoutInlineProjections!();
      report = await runSchedulerTick({ db: database.db, pool: database.pool, store: tickStore, logger: silentLogger }, new Date()).finally(() => (ticking = false));
      tickMs = msSince(tickStart);
      duringProbe = await tickProbe;
    }
    await store.close();
    const tickRate = perSecond(report.generated, tickMs);
    step(`tick: ${fmtInt(report.generated)} generated, ${report.failed} failed in ${fmtMs(tickMs)}`);

    // Every occurrence has its invoice, numbered, the numbers of each organization exactly 1..N.
    // (The service projects what the tick wrote: wait until its read models hold all of it.)
    const counts = async () => {
      const { rows } = await sql<{ runs: string; numbered: string }>`
        select (select count(*) from schedule_runs where status = 'success') as runs,
               (select count(*) from invoices where invoice_number is not null) as numbered`.execute(database.db);
      return { runs: Number(rows[0].runs), numbered: Number(rows[0].numbered) };
    };
    const deadline = Date.now() + 10 * 60_000;
    let seen = await counts();
    while ((seen.runs < report.generated || seen.numbered < report.generated) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      seen = await counts();
    }
    const projectedMs = msSince(tickStart);
    const projectedRate = perSecond(report.generated, projectedMs);
    step(`read models hold the tick's writes ${fmtMs(projectedMs - tickMs)} after it`);
    const { rows: numbers } = await sql<{ organization_id: string; numbers: string[] }>`
      select organization_id, array_agg(invoice_number order by invoice_number) as numbers
        from invoices where invoice_number is not null group by organization_id`.execute(database.db);
    const gapless = numbers.every((r) => r.numbers.every((num, i) => Number(num.slice(-6)) === i + 1));
    const { runs: generatedRuns, numbered } = seen;
    if (IN_SERVICE) {
      // The baseline after the tick on the service as it was measured before (its access log at info would cost it).
      await service.stop();
      service = null;
      service = await startService(port, serviceEnv);
      await warmUp(); // a fresh process, as before the first measure
    }
    const createsAfter = await measureCreates();
    const createRate = (createsBefore + createsAfter) / 2;
    step(`baseline measured again: ${fmtInt(createsAfter)} creates/s (before the tick ${fmtInt(createsBefore)}; the ratio is to their mean)`);

    const ratio = tickRate / createRate;
    const headers = ['case', 'ours /s', 'baseline /s', 'ratio', 'wall', 'checked', 'target', 'met'];
    const checked = `${fmtInt(generatedRuns)} runs, ${fmtInt(numbered)} numbered, gapless: ${gapless ? 'yes' : 'NO'}`;
    const whole = numbered === OCCURRENCES && gapless;
    const table = [
      [
        `one tick, ${fmtInt(OCCURRENCES)} due, auto_finalize`, fmtInt(tickRate), fmtInt(createRate), `${ratio.toFixed(2)}x`, fmtMs(tickMs),
        checked, '>= 0.50x of create, all numbered, gapless', ratio >= 0.5 && whole ? 'yes' : 'NO',
      ],
      [
        '  the same, until the read models hold it', fmtInt(projectedRate), fmtInt(createRate), `${(projectedRate / createRate).toFixed(2)}x`, fmtMs(projectedMs),
        checked, '(information)', '',
      ],
    ];
    console.log('');
    console.log(IN_SERVICE ? 'the all-in-one service\'s tick (every role in one process)' : `tick through the store ${TICK_INLINE ? 'WITH' : 'without'} inline projections`);
    console.log(formatTable(headers, table));
    if (PROBE) {
      const rows = [['idle, before the tick', idleProbe], ['during the tick', duringProbe]].map(([label, samples]) => {
        const s = summarize(samples as number[]);
        return [label as string, fmtInt(s.count), fmtMs(s.p50), fmtMs(s.p90), fmtMs(s.p99), fmtMs(s.max)];
      });
      console.log(`\nlone creates of a client in the tick's first organization`);
      console.log(formatTable(['when', 'creates', 'p50', 'p90', 'p99', 'max'], rows));
    }
    if (process.argv.includes('--markdown')) console.log(`\n${markdownTable(headers, table)}`);
    console.log(`\ntotal ${(msSince(started) / 1000).toFixed(0)} s`);
  } finally {
    await service?.stop().catch(() => {});
    await database.drop().catch(() => {});
    await server.stop();
  }
}
