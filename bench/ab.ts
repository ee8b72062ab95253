/**
 * `AB_OTHER=<checkout> npm run bench -- ab`: this checkout's server against
 * another checkout's (an older commit, say: `git worktree add /tmp/old
 * <commit>`, with its node_modules), for a change too small to see across
 * two runs of `invoices` on a shared machine, whose speed drifts by more
 * than 10 % within minutes. Both servers run as `npm start` runs them, each
 * on its own database of one PostgreSQL, and take the same requests in
 * short alternating rounds (AB_ROUNDS, default 4, each run by `alternating`
 * as two halves per side, the side that goes first alternating), so drift
 * hits both alike: create (5 lines) and finalize, at concurrency 32 and one
 * at a time. Prints throughput, p50 and CPU per request of each side and
 * the ratio this/other. BENCH_SCALE multiplies the request counts. A
 * diagnostic, run only when named.
 */
import path from 'node:path';
import { freePort } from '../src/db/embedded.ts';
import { expectStatus, request, startProcess, type ServerProcess } from './invoices-http.ts';
import { alternating, CONCURRENCY, type Measured, type Side } from './invoices-measure.ts';
import { createBenchDatabase, startBenchServer, type BenchDatabase } from './support/postgres.ts';
import { fmtInt, fmtMs } from './support/stats.ts';
import { formatTable } from './support/table.ts';
import { tenant } from './support/tenant.ts';

const SCALE = Number(process.env.BENCH_SCALE ?? '1') || 1;
const ROUNDS = Number(process.env.AB_ROUNDS ?? 4);
const n = (count: number) => Math.max(16, Math.round(count * SCALE));
const items = Array.from({ length: 5 }, (_, i) => ({ description: `Prestation de conseil ${i + 1}`, quantity: i + 1, unit_price: 1250.5, tax_rate: i === 4 ? 10 : 20 }));

interface Server {
  label: string;
  process: ServerProcess;
  database: BenchDatabase;
  api: string;
  auth: Record<string, string>;
  customerId: string;
  drafts: string[];
  finalized: number;
}

async function startSide(label: string, checkout: string, database: BenchDatabase): Promise<Server> {
  const server = await startProcess(path.join(checkout, 'src/main.ts'), await freePort(), { DATABASE_URL: database.url, LOG_LEVEL: 'warn', SERVICE_MODE: 'test' }, [], ['--max-semi-space-size=8']);
  const t = await tenant(database, '000000000000002');
  const auth = { authorization: `Bearer ${t.secret}` };
  const api = `${server.url}/api/v1`;
  const customer = (await expectStatus(request(`${api}/customers`, 'POST', { name: 'Client Casablanca SA', type: 'b2b', ice: '000000000000003' }, auth), 201)).body.data;
  return { label, process: server, database, api, auth, customerId: customer.id, drafts: [], finalized: 0 };
}

const create = (s: Server) => async () => {
  s.drafts.push((await expectStatus(request(`${s.api}/invoices`, 'POST', { customer_id: s.customerId, issue_date: '2026-03-14', items }, s.auth), 201)).body.data.id);
};
const finalize = (s: Server) => () => expectStatus(request(`${s.api}/invoices/${s.drafts[s.finalized++]}/finalize`, 'POST', undefined, s.auth), 200);
const side = (s: Server, task: () => Promise<unknown>): Side => ({ pid: s.process.pid, applicationName: 'invoicing%', database: s.database.name, task });

/** Figures of several alternating() runs, summed: requests over time, CPU over requests, p50 of the rounds' p50s. */
function combine(parts: Measured[]): Measured & { p50: number } {
  const requests = parts.map((p) => p.requests);
  const total = requests.reduce((a, b) => a + b, 0);
  const seconds = parts.reduce((a, p) => a + p.requests / p.perSecond, 0);
  const weighted = (f: (m: Measured) => number) => parts.reduce((a, p, i) => a + f(p) * requests[i], 0) / total;
  const p50s = parts.map((p) => p.latency.p50).sort((a, b) => a - b);
  return { ...parts[0], perSecond: total / seconds, cpuNode: weighted((m) => m.cpuNode), cpuPg: weighted((m) => m.cpuPg), p50: p50s[Math.floor(p50s.length / 2)] };
}

export async function run(): Promise<void> {
  const other = process.env.AB_OTHER;
  if (!other) {
    console.log('skipped: set AB_OTHER to another checkout of this project (with its node_modules) to compare with');
    return;
  }
  const server = await startBenchServer();
  const sides: Server[] = [];
  try {
    console.log(`server: ${server.description}`);
    console.log(`this: ${process.cwd()}; other: ${path.resolve(other)}; ${ROUNDS} rounds`);
    const ours = await startSide('this', process.cwd(), await createBenchDatabase(server, { poolSize: 4, prefix: 'bench_ab_this' }));
    sides.push(ours);
    // Its own server migrates its database (an older checkout may not know this one's newest migrations).
    const theirs = await startSide('other', other, await createBenchDatabase(server, { poolSize: 4, prefix: 'bench_ab_other', migrate: false }));
    sides.push(theirs);
    const cases: { name: string; count: number; concurrency: number; task: (s: Server) => () => Promise<unknown> }[] = [
      { name: 'create, concurrency 32', count: n(1000), concurrency: CONCURRENCY, task: create },
      { name: 'create, concurrency 1', count: n(300), concurrency: 1, task: create },
      { name: 'finalize, concurrency 32', count: n(1000), concurrency: CONCURRENCY, task: finalize },
      { name: 'finalize, concurrency 1', count: n(300), concurrency: 1, task: finalize },
    ];
    // Warm-up: each server's JIT and connections, and drafts enough for the finalizes.
    for (const s of sides) for (let i = 0; i < 200; i++) await create(s)();
    const rows = [];
    for (const c of cases) {
      const parts: { ours: Measured; base: Measured }[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const [a, b] = r % 2 === 0 ? [ours, theirs] : [theirs, ours];
        const m = await alternating(ours.database.pool, c.count, side(a, c.task(a)), side(b, c.task(b)), c.concurrency);
        parts.push(a === ours ? m : { ours: m.base, base: m.ours });
      }
      const mine = combine(parts.map((p) => p.ours));
      const their = combine(parts.map((p) => p.base));
      rows.push([
        c.name, fmtInt(mine.perSecond), fmtInt(their.perSecond), `${(mine.perSecond / their.perSecond).toFixed(3)}`,
        fmtMs(mine.p50), fmtMs(their.p50), `${(mine.p50 / their.p50).toFixed(3)}`,
        `${(mine.cpuNode + mine.cpuPg).toFixed(2)} ms`, `${(their.cpuNode + their.cpuPg).toFixed(2)} ms`, `${((mine.cpuNode + mine.cpuPg) / (their.cpuNode + their.cpuPg)).toFixed(3)}`,
      ]);
      console.log(`  ${c.name} measured`);
    }
    console.log('');
    console.log(formatTable(['case', 'this /s', 'other /s', 'ratio', 'this p50', 'other p50', 'ratio', 'CPU/req this', 'other', 'ratio'], rows));
  } finally {
    for (const s of sides) {
      await s.process.stop().catch(() => {});
      await s.database.drop().catch(() => {});
    }
    await server.stop();
  }
}
