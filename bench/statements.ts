/**
 * `npm run bench -- statements`: where a request's database work goes, in
 * statements (docs/performance.md, "Statements per request"). Not a
 * benchmark against a baseline (`invoices` is that) but the profile behind
 * its figures: the server as `npm start` runs it, on an embedded PostgreSQL
 * with pg_stat_statements loaded (track = all, so the statements inside
 * es_append are seen too), and for each case N requests at concurrency C
 * and again one at a time: create (5-line invoice), finalize, list (20 with
 * a status filter). For each: throughput, latency, CPU per request of the
 * server and of all its PostgreSQL connections (`invoicing%`), statements
 * per request that the server sent (top level; a message of several, like
 * `begin; select es_append(...)`, counts each) and those run inside them
 * (nested: es_append's own), and the statements by calls per request.
 * Everything the request caused is counted, the log consumers' work
 * included (runners, webhook subscriber, notifications). BENCH_N (default
 * 2,000; BENCH_N1 one at a time, default N / 7), BENCH_C (default 32), BENCH_CASES (default
 * create,finalize,list), BENCH_MODES (default auto,inline,async: the server with
 * INLINE_PROJECTIONS=auto, true, then false). The embedded server only:
 * DATABASE_URL's server would need the extension preloaded.
 */
import { v7 as uuidv7 } from 'uuid';
import { createAccount } from '../src/accounts/accounts.ts';
import { insertKey } from '../src/accounts/keys.ts';
import { bundleScopes } from '../src/accounts/scopes.ts';
import { freePort } from '../src/db/embedded.ts';
import { expectStatus, request, startProcess } from './invoices-http.ts';
import { runConcurrently } from './support/concurrency.ts';
import { processCpuMs } from './support/cpu.ts';
import { createBenchDatabase, startBenchServer, type BenchDatabase } from './support/postgres.ts';
import { fmtMs, summarize } from './support/stats.ts';

const N = Number(process.env.BENCH_N ?? 2000);
const N1 = Number(process.env.BENCH_N1 ?? Math.max(50, Math.round(N / 7)));
const C = Number(process.env.BENCH_C ?? 32);
const CASES = (process.env.BENCH_CASES ?? 'create,finalize,list').split(',');
const MODES = (process.env.BENCH_MODES ?? 'auto,inline,async').split(',');
/** Each mode's INLINE_PROJECTIONS. */
const MODE_SETTINGS: Record<string, string> = { auto: 'auto', inline: 'true', async: 'false' };
const items = Array.from({ length: 5 }, (_, i) => ({ description: `Prestation de conseil ${i + 1}`, quantity: i + 1, unit_price: 1250.5, tax_rate: i === 4 ? 10 : 20 }));

async function serviceCpuMs(database: BenchDatabase, serverPid: number): Promise<{ node: number; pg: Map<number, number>; names: Map<number, string> }> {
  const { rows } = await database.pool.query("select pid, application_name from pg_stat_activity where application_name like 'invoicing%'");
  return {
    node: processCpuMs(serverPid),
    pg: new Map(rows.map((r) => [r.pid as number, processCpuMs(r.pid)])),
    names: new Map(rows.map((r) => [r.pid as number, r.application_name as string])),
  };
}

export async function run(): Promise<void> {
  if (process.env.DATABASE_URL) {
    console.log('skipped: needs the embedded PostgreSQL (pg_stat_statements preloaded); unset DATABASE_URL');
    return;
  }
  const server = await startBenchServer({ settings: { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all', 'pg_stat_statements.track_planning': 'on' } });
  try {
    console.log(`server: ${server.description}`);
    for (const mode of MODES) {
      const database = await createBenchDatabase(server, { poolSize: 8, prefix: `bench_statements_${mode}` });
      try {
        await profile(database, mode);
      } finally {
        await database.drop();
      }
    }
  } finally {
    await server.stop();
  }
}

async function profile(database: BenchDatabase, mode: string): Promise<void> {
  const setting = MODE_SETTINGS[mode];
  if (!setting) throw new Error(`BENCH_MODES: unknown mode ${mode} (${Object.keys(MODE_SETTINGS).join(', ')})`);
  const ours = await startProcess('src/main.ts', await freePort(), {
    DATABASE_URL: database.url, LOG_LEVEL: 'warn', SERVICE_MODE: 'test', INLINE_PROJECTIONS: setting,
  });
  try {
    await database.pool.query('create extension if not exists pg_stat_statements');
    console.log(`\n=== projections: ${mode} (INLINE_PROJECTIONS=${setting}) ===`);
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
    const api = `${ours.url}/api/v1`;
    const customer = (await expectStatus(request(`${api}/customers`, 'POST', { name: 'Client Casablanca SA', type: 'b2b', ice: '000000000000003' }, auth), 201)).body.data;
    const ids: string[] = [];
    let finalized = 0;
    const create = async () => ids.push((await expectStatus(request(`${api}/invoices`, 'POST', { customer_id: customer.id, issue_date: '2026-03-14', items }, auth), 201)).body.data.id);
    const finalize = () => expectStatus(request(`${api}/invoices/${ids[finalized++]}/finalize`, 'POST', undefined, auth), 200);
    const list = () => expectStatus(request(`${api}/invoices?status=finalized&per_page=20`, 'GET', undefined, auth), 200);
    await runConcurrently(300, C, create);
    await runConcurrently(300, C, finalize);
    await runConcurrently(300, C, list);
    const tasks: Record<string, () => Promise<unknown>> = { create, finalize, list };
    for (const concurrency of [C, 1]) {
      for (const what of CASES) {
        const n = concurrency === 1 ? N1 : N;
        await measure(database, ours.pid, `${what} x ${n} at concurrency ${concurrency}`, n, concurrency, tasks[what]);
      }
    }
  } finally {
    await ours.stop();
  }
}

async function measure(database: BenchDatabase, serverPid: number, label: string, n: number, concurrency: number, task: () => Promise<unknown>): Promise<void> {
  await database.pool.query('select pg_stat_statements_reset()');
  const before = await serviceCpuMs(database, serverPid);
  const r = await runConcurrently(n, concurrency, task, { latencies: true });
  // What the requests set off after their answers (runners, subscriber, notifications) belongs to them too.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const after = await serviceCpuMs(database, serverPid);
  let pgMs = 0;
  const byName = new Map<string, { ms: number; connections: number }>();
  for (const [pid, ms] of after.pg) {
    const spent = Math.max(0, ms - (before.pg.get(pid) ?? 0));
    pgMs += spent;
    const name = after.names.get(pid) ?? '?';
    const entry = byName.get(name) ?? { ms: 0, connections: 0 };
    byName.set(name, { ms: entry.ms + spent, connections: entry.connections + 1 });
  }
  const lat = summarize(r.latencies);
  const { rows } = await database.pool.query(`
    select toplevel, calls, total_exec_time + total_plan_time as ms, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) as query
      from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
       and query not like '%pg_stat_statements%' and query not like '%pg_stat_activity%'
     order by calls desc, ms desc`);
  const sum = (top: boolean) => rows.filter((x) => x.toplevel === top).reduce((a, x) => a + Number(x.calls), 0);
  const ms = rows.filter((x) => x.toplevel).reduce((a, x) => a + x.ms, 0);
  console.log(`\n${label}: ${((n / r.elapsedMs) * 1000).toFixed(0)}/s, p50 ${fmtMs(lat.p50)}, p99 ${fmtMs(lat.p99)}; ` +
    `CPU per request: server ${((after.node - before.node) / n).toFixed(2)} ms, PostgreSQL ${(pgMs / n).toFixed(2)} ms; ` +
    `statements per request: ${(sum(true) / n).toFixed(2)} top level, ${(sum(false) / n).toFixed(2)} nested; ` +
    `${((ms / n) * 1000).toFixed(0)} us of execution + planning`);
  // Which of the service's connections spent PostgreSQL's CPU: the pool that answers requests, or the consumers behind it.
  const spenders = [...byName].filter(([, v]) => v.ms / n >= 0.01).sort((a, b) => b[1].ms - a[1].ms);
  console.log(`  PostgreSQL CPU per request by connection: ${spenders.map(([name, v]) => `${name} (${v.connections}) ${(v.ms / n).toFixed(2)} ms`).join(', ')}`);
  console.log('  calls/req   us/req  statement (top level; nested ones marked "  >")');
  for (const x of rows.filter((x) => Number(x.calls) / n >= 0.01).slice(0, 24)) {
    console.log(`  ${(Number(x.calls) / n).toFixed(2).padStart(9)}  ${((x.ms / n) * 1000).toFixed(0).padStart(7)}  ${x.toplevel ? '' : '  > '}${x.query}`);
  }
}
