/**
 * `npm run bench -- api`: throughput and latency of authenticated requests
 * through the whole request pipeline (Bearer key lookup, plan and
 * organization checks, scope, PostgreSQL rate limiter, validation, reply),
 * beside a baseline measured in the same run on the same database: a minimal
 * express handler doing one indexed read. Three cases, at concurrency 32:
 *
 *  baseline       GET /baseline/organizations/:id    (no auth, one read)
 *  pipeline       GET /api/v1/_bench/organization   (the pipeline + the same read)
 *  organization   GET /api/v1/organization          (the real endpoint: profile, plan, quotas)
 *
 * Servers run as child processes (as in production; the client gets this
 * process). Each case runs in two halves, interleaved (baseline, pipeline,
 * organization, then again), so noise on a shared machine hits all alike.
 * The key's account has a huge requests_per_minute so the limiter runs but
 * never refuses. BENCH_SCALE (default 1) multiplies the request counts.
 */
import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { createAccount } from '../src/accounts/accounts.ts';
import { insertKey } from '../src/accounts/keys.ts';
import { bundleScopes } from '../src/accounts/scopes.ts';
import { sampleServer as sample, serverCpuUsed as used } from './support/cpu.ts';
import { runConcurrently } from './support/concurrency.ts';
import { createBenchDatabase, startBenchServer } from './support/postgres.ts';
import { fmtInt, fmtMs, fmtPct, perSecond, summarize } from './support/stats.ts';
import { formatTable, markdownTable, type Cell } from './support/table.ts';

const SCALE = Number(process.env.BENCH_SCALE ?? '1') || 1;
const REQUESTS = Math.max(100, Math.round(10_000 * SCALE)); // per half
const WARMUP = 1_000;
const CONCURRENCY = 32;
const here = path.dirname(fileURLToPath(import.meta.url));

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });

function get(url: string, headers: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`${url}: HTTP ${res.statusCode}`))));
    });
    req.on('error', reject);
  });
}

function start(script: string, env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(path.join(here, 'api', script), [], {
    // BENCH_CPU_PROF=<dir>: V8 CPU profiles of the servers, written when they stop.
    execArgv: ['--import', 'tsx', ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [])],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (m: any) => resolve({ child, url: m.url }));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

interface Case {
  name: string;
  url: string;
  headers: Record<string, string>;
  /** The serving process and the application_name of its PostgreSQL connections. */
  pid: number;
  app: string;
  latencies: number[];
  elapsedMs: number;
  count: number;
  serverCpuMs: number;
  postgresCpuMs: number;
}

async function measure(pool: pg.Pool, c: Case, total: number): Promise<void> {
  const before = await sample(pool, c.pid, c.app);
  const r = await runConcurrently(total, CONCURRENCY, () => get(c.url, c.headers), { latencies: true });
  const cpu = used(before, await sample(pool, c.pid, c.app));
  c.latencies.push(...r.latencies);
  c.elapsedMs += r.elapsedMs;
  c.count += r.count;
  c.serverCpuMs += cpu.server;
  c.postgresCpuMs += cpu.postgres;
}

function makeCase(name: string, url: string, headers: Record<string, string>, pid: number, app: string): Case {
  return { name, url, headers, pid, app, latencies: [], elapsedMs: 0, count: 0, serverCpuMs: 0, postgresCpuMs: 0 };
}

export async function run(): Promise<void> {
  const server = await startBenchServer();
  const database = await createBenchDatabase(server, { poolSize: 4 });
  const children: ChildProcess[] = [];
  try {
    const db = database.db;
    const account = await createAccount(db, { name: 'Bench', plan: 'fiduciaire', requestsPerMinute: 1_000_000_000 });
    const orgId = uuidv7();
    const now = new Date().toISOString();
    await db
      .insertInto('organizations')
      .values({ id: orgId, account_id: account.id, legal_name: 'Bench SARL', ice: '001234567000089', billing_address: JSON.stringify({ street: 'Bd Zerktouni', city: 'Casablanca', postal_code: '20000', country: 'MA' }), created_at: now, updated_at: now, version: 0 })
      .execute();
    const { secret } = await insertKey(db, { accountId: account.id, organizationId: orgId, mode: 'test', scopes: bundleScopes('full_access') });

    const env = { DATABASE_URL: database.url, SERVICE_MODE: 'test', PORT: '0', LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' };
    const api = await start('server.ts', env);
    children.push(api.child);
    const base = await start('baseline.ts', env);
    children.push(base.child);

    const auth = { authorization: `Bearer ${secret}` };
    const cases: Case[] = [
      makeCase('baseline (express + 1 read)', `${base.url}/baseline/organizations/${orgId}`, {}, base.child.pid!, 'bench-baseline'),
      makeCase('pipeline + the same read', `${api.url}/_bench/organization`, auth, api.child.pid!, 'invoicing:api'),
      makeCase('GET /organization', `${api.url}/organization`, auth, api.child.pid!, 'invoicing:api'),
    ];
    console.log(`PostgreSQL: ${server.description}`);
    console.log(`${REQUESTS * 2} requests per case at concurrency ${CONCURRENCY}, in two interleaved halves, after ${WARMUP} warm-up requests each`);
    for (const c of cases) await runConcurrently(WARMUP, CONCURRENCY, () => get(c.url, c.headers));
    for (let half = 0; half < 2; half++) for (const c of cases) await measure(database.pool, c, REQUESTS);

    const baseline = perSecond(cases[0].count, cases[0].elapsedMs);
    const cpuPerRequest = (c: Case) => (c.serverCpuMs + c.postgresCpuMs) / c.count;
    const headers = ['case', 'requests', 'req/s', 'p50', 'p99', 'vs baseline', 'CPU/req node', 'CPU/req pg', 'CPU vs baseline'];
    const rows: Cell[][] = cases.map((c) => {
      const s = summarize(c.latencies);
      const rate = perSecond(c.count, c.elapsedMs);
      return [
        c.name, fmtInt(c.count), fmtInt(rate), fmtMs(s.p50), fmtMs(s.p99), fmtPct(rate / baseline),
        fmtMs(c.serverCpuMs / c.count), fmtMs(c.postgresCpuMs / c.count), fmtPct(cpuPerRequest(cases[0]) / cpuPerRequest(c)),
      ];
    });
    console.log(`\n${formatTable(headers, rows)}\n\n${markdownTable(headers, rows)}`);
    const rss = process.memoryUsage().rss;
    console.log(`\n(bench client RSS ${(rss / 1024 / 1024).toFixed(0)} MiB)`);
  } finally {
    await Promise.all(children.map(stop));
    agent.destroy();
    await database.drop();
    await server.stop();
  }
}
