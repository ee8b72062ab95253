/**
 * `npm run bench -- scaling` (docs/scaling.md): the same service split into
 * processes by role on one database, against the all-in-one process that
 * `npm start` runs: (all-in-one) one process with every role; (split) two
 * API processes (`--role api`, requests alternating between them) and one
 * worker process (`--role projector,webhooks,scheduler`). Cases: create
 * (5 lines) and list (20 with a status filter, in an organization of a few
 * thousand invoices), at concurrency 32, in two halves each, the two
 * layouts alternating so drifting load hits both. Reports throughput,
 * latency and CPU per request of all the layout's processes and their
 * PostgreSQL connections. Embedded PostgreSQL (durable) or DATABASE_URL;
 * BENCH_SCALE multiplies the counts.
 */
import { v7 as uuidv7 } from 'uuid';
import { createAccount } from '../src/accounts/accounts.ts';
import { insertKey } from '../src/accounts/keys.ts';
import { bundleScopes } from '../src/accounts/scopes.ts';
import { freePort } from '../src/db/embedded.ts';
import { expectStatus, request, startProcess, type ServerProcess } from './invoices-http.ts';
import { runConcurrently } from './support/concurrency.ts';
import { processCpuMs } from './support/cpu.ts';
import { createBenchDatabase, startBenchServer, type BenchDatabase } from './support/postgres.ts';
import { fmtMs, summarize } from './support/stats.ts';
import { formatTable, type Cell } from './support/table.ts';

const SCALE = Number(process.env.BENCH_SCALE ?? '1') || 1;
const COUNT = Math.max(200, Math.round(3000 * SCALE));
const C = 32;
const items = Array.from({ length: 5 }, (_, i) => ({ description: `Prestation ${i + 1}`, quantity: i + 1, unit_price: 1250.5, tax_rate: i === 4 ? 10 : 20 }));

interface Layout {
  name: string;
  apis: ServerProcess[];
  all: ServerProcess[];
}

async function startLayout(database: BenchDatabase, split: boolean): Promise<Layout> {
  const env = { DATABASE_URL: database.url, LOG_LEVEL: 'warn', SERVICE_MODE: 'test' };
  if (!split) {
    const one = await startProcess('src/main.ts', await freePort(), env);
    return { name: 'all-in-one (1 process)', apis: [one], all: [one] };
  }
  const worker = await startProcess('src/main.ts', await freePort(), { ...env, LOG_LEVEL: 'info' }, ['--role', 'projector,webhooks,scheduler']);
  const apis = [
    await startProcess('src/main.ts', await freePort(), env, ['--role', 'api']),
    await startProcess('src/main.ts', await freePort(), env, ['--role', 'api']),
  ];
  return { name: '2 API + 1 worker', apis, all: [...apis, worker] };
}

/** CPU so far of the layout's API processes, its worker (if any), and all their PostgreSQL connections, in ms. */
async function cpuOf(database: BenchDatabase, layout: Layout): Promise<Cpu> {
  const { rows } = await database.pool.query("select pid from pg_stat_activity where application_name like 'invoicing%'");
  const worker = layout.all.filter((p) => !layout.apis.includes(p));
  return {
    api: layout.apis.reduce((a, p) => a + processCpuMs(p.pid), 0),
    worker: worker.reduce((a, p) => a + processCpuMs(p.pid), 0),
    pg: rows.reduce((a, r) => a + processCpuMs(r.pid), 0),
  };
}

interface Cpu {
  api: number;
  worker: number;
  pg: number;
}

interface Tally {
  count: number;
  ms: number;
  cpu: Cpu;
  latencies: number[];
}

const total = (c: Cpu) => c.api + c.worker + c.pg;

export async function run(): Promise<void> {
  const server = await startBenchServer();
  const database = await createBenchDatabase(server, { poolSize: 8, prefix: 'bench_scaling' });
  try {
    console.log(`server: ${server.description}; ${COUNT} requests per case and layout, concurrency ${C}`);
    const account = await createAccount(database.db, { name: 'Bench', plan: 'fiduciaire', requestsPerMinute: 100_000_000 });
    const organizationId = uuidv7();
    const now = new Date().toISOString();
    await database.db.insertInto('organizations').values({
      id: organizationId, account_id: account.id, legal_name: 'Bench SARL', ice: '000000000000002',
      billing_address: JSON.stringify({ street: null, city: null, postal_code: null, country: 'MA' }),
      api_enabled: true, archived: false, created_at: now, updated_at: now, version: 0,
    }).execute();
    const { secret } = await insertKey(database.db, { accountId: account.id, organizationId, scopes: bundleScopes('full_access') });
    const auth = { authorization: `Bearer ${secret}` };
    let customerId: string | null = null;
    const tallies = new Map<string, Tally>();
    for (const half of [0, 1]) {
      for (const split of half === 0 ? [false, true] : [true, false]) {
        const layout = await startLayout(database, split);
        try {
          const api = (i: number) => `${layout.apis[i % layout.apis.length].url}/api/v1`;
          customerId ??= (await expectStatus(request(`${api(0)}/customers`, 'POST', { name: 'Client SA', type: 'b2b', ice: '000000000000003' }, auth), 201)).body.data.id;
          const cases: Record<string, (i: number) => Promise<unknown>> = {
            create: (i) => expectStatus(request(`${api(i)}/invoices`, 'POST', { customer_id: customerId, issue_date: '2026-03-14', items }, auth), 201),
            list: (i) => expectStatus(request(`${api(i)}/invoices?status=draft&per_page=20`, 'GET', undefined, auth), 200),
          };
          await runConcurrently(200, C, cases.create); // warm-up: connections, plans
          for (const [what, task] of Object.entries(cases)) {
            const n = Math.round(COUNT / 2);
            const cpu0 = await cpuOf(database, layout);
            const r = await runConcurrently(n, C, task, { latencies: true });
            const cpu1 = await cpuOf(database, layout);
            const key = `${what}|${layout.name}`;
            const t = tallies.get(key) ?? { count: 0, ms: 0, cpu: { api: 0, worker: 0, pg: 0 }, latencies: [] };
            t.count += n;
            t.ms += r.elapsedMs;
            for (const part of ['api', 'worker', 'pg'] as const) t.cpu[part] += cpu1[part] - cpu0[part];
            t.latencies.push(...r.latencies);
            tallies.set(key, t);
          }
        } finally {
          await Promise.all(layout.all.map((p) => p.stop()));
        }
      }
    }
    const rows: Cell[][] = [];
    const parts: Cell[][] = [];
    for (const what of ['create', 'list']) {
      const base = tallies.get(`${what}|all-in-one (1 process)`)!;
      for (const name of ['all-in-one (1 process)', '2 API + 1 worker']) {
        const t = tallies.get(`${what}|${name}`)!;
        const lat = summarize(t.latencies);
        const rate = (t.count / t.ms) * 1000;
        rows.push([what, name, t.count, `${rate.toFixed(0)}/s`, fmtMs(lat.p50), fmtMs(lat.p99), `${(total(t.cpu) / t.count).toFixed(2)} ms`, `${(rate / ((base.count / base.ms) * 1000)).toFixed(2)}x`]);
        const per = (ms: number) => `${(ms / t.count).toFixed(2)} ms`;
        parts.push([what, name, per(t.cpu.api), t.cpu.worker === 0 ? '-' : per(t.cpu.worker), per(t.cpu.pg)]);
      }
    }
    console.log(formatTable(['case', 'layout', 'requests', 'throughput', 'p50', 'p99', 'CPU/req (all processes + pg)', 'vs all-in-one'], rows));
    console.log('\nCPU per request by part (the all-in-one process counts as its API process):');
    console.log(formatTable(['case', 'layout', 'API process(es)', 'worker', 'PostgreSQL'], parts));
  } finally {
    await database.drop();
    await server.stop();
  }
}
