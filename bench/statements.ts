/**
 * `npm run bench -- statements`: where a write's database work goes. Not a
 * benchmark against a baseline (`invoices` is that) but the profile behind
 * its figures: the server as `npm start` runs it, on an embedded PostgreSQL
 * with pg_stat_statements loaded, N creates then N finalizes (5-line
 * invoices) at concurrency C, and for each: throughput, latency, CPU per
 * request of the server and of all its PostgreSQL connections
 * (`invoicing%`), statements per request, and the statements by total time
 * per request (execution + planning; nested statements of es_append
 * included). BENCH_N (default 3,000), BENCH_C (default 32), BENCH_CASES
 * (default create,finalize). The embedded server only: DATABASE_URL's server
 * would need the extension preloaded.
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

const N = Number(process.env.BENCH_N ?? 3000);
const C = Number(process.env.BENCH_C ?? 32);
const CASES = (process.env.BENCH_CASES ?? 'create,finalize').split(',');
const items = Array.from({ length: 5 }, (_, i) => ({ description: `Prestation de conseil ${i + 1}`, quantity: i + 1, unit_price: 1250.5, tax_rate: i === 4 ? 10 : 20 }));

async function serviceCpuMs(database: BenchDatabase, serverPid: number): Promise<{ node: number; pg: Map<number, number> }> {
  const { rows } = await database.pool.query("select pid from pg_stat_activity where application_name like 'invoicing%'");
  return { node: processCpuMs(serverPid), pg: new Map(rows.map((r) => [r.pid as number, processCpuMs(r.pid)])) };
}

export async function run(): Promise<void> {
  if (process.env.DATABASE_URL) {
    console.log('skipped: needs the embedded PostgreSQL (pg_stat_statements preloaded); unset DATABASE_URL');
    return;
  }
  const server = await startBenchServer({ settings: { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all' } });
  const database = await createBenchDatabase(server, { poolSize: 8, prefix: 'bench_statements' });
  const ours = await startProcess('src/main.ts', await freePort(), { DATABASE_URL: database.url, LOG_LEVEL: 'warn', SERVICE_MODE: 'test' });
  try {
    await database.pool.query('create extension if not exists pg_stat_statements');
    console.log(`server: ${server.description}`);
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
    const create = async () => ids.push((await expectStatus(request(`${api}/invoices`, 'POST', { customer_id: customer.id, issue_date: '2026-03-14', items }, auth), 201)).body.data.id);
    const finalize = (i: number) => expectStatus(request(`${api}/invoices/${ids[i]}/finalize`, 'POST', undefined, auth), 200);
    await runConcurrently(300, C, create);
    await runConcurrently(300, C, finalize);
    ids.length = 0;
    for (const what of CASES) {
      await database.pool.query('select pg_stat_statements_reset()');
      const before = await serviceCpuMs(database, ours.pid);
      const r = await runConcurrently(N, C, what === 'finalize' ? finalize : create, { latencies: true });
      const after = await serviceCpuMs(database, ours.pid);
      let pgMs = 0;
      for (const [pid, ms] of after.pg) pgMs += Math.max(0, ms - (before.pg.get(pid) ?? 0));
      const lat = summarize(r.latencies);
      const { rows } = await database.pool.query(`
        select calls, total_exec_time + total_plan_time as ms, left(regexp_replace(query, '\\s+', ' ', 'g'), 100) as query
          from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
           and query not like '%pg_stat_statements%' and query not like '%pg_stat_activity%'
         order by ms desc`);
      const calls = rows.reduce((a, x) => a + Number(x.calls), 0);
      const ms = rows.reduce((a, x) => a + x.ms, 0);
      console.log(`\n${what} x ${N} at concurrency ${C}: ${((N / r.elapsedMs) * 1000).toFixed(0)}/s, p50 ${fmtMs(lat.p50)}, p99 ${fmtMs(lat.p99)}; ` +
        `CPU per request: server ${((after.node - before.node) / N).toFixed(2)} ms, PostgreSQL ${(pgMs / N).toFixed(2)} ms; ` +
        `${(calls / N).toFixed(2)} statements and ${((ms / N) * 1000).toFixed(0)} us of execution + planning per request`);
      console.log('  calls/req   us/req  statement');
      for (const x of rows.slice(0, 16)) console.log(`  ${(Number(x.calls) / N).toFixed(2).padStart(9)}  ${((x.ms / N) * 1000).toFixed(0).padStart(7)}  ${x.query}`);
    }
  } finally {
    await ours.stop();
    await database.drop();
    await server.stop();
  }
}
