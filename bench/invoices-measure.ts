/**
 * Measuring one case of the invoice benchmark: ours and the baseline in two
 * alternating halves each (baseline, ours, baseline, ours), at concurrency
 * 32 (or 1, for the service time without queueing), with throughput, latency, and the CPU each side used per request: the
 * server process's (from /proc) and its PostgreSQL backends' (found by
 * application_name). On the shared 2-core machine throughput swings with
 * other load; CPU per request hardly does, so it is the figure to compare.
 */
import type pg from 'pg';
import { runConcurrently } from './support/concurrency.ts';
import { processCpuMs } from './support/cpu.ts';
import { perSecond, summarize, type LatencySummary } from './support/stats.ts';

export const CONCURRENCY = 32;

export interface Side {
  /** The server process. */
  pid: number;
  /** LIKE pattern of the application_name of its PostgreSQL connections. */
  applicationName: string;
  /** Its database, when another server's connections share the application name (bench ab). */
  database?: string;
  task(i: number): Promise<unknown>;
}

export interface Measured {
  requests: number;
  perSecond: number;
  latency: LatencySummary;
  /** CPU ms per request: the server process, and its PostgreSQL backends. */
  cpuNode: number;
  cpuPg: number;
}

async function cpuOf(pool: pg.Pool, side: Side): Promise<{ node: number; pg: Map<number, number> }> {
  const { rows } = await pool.query('select pid from pg_stat_activity where application_name like $1 and ($2::text is null or datname = $2)', [
    side.applicationName,
    side.database ?? null,
  ]);
  return { node: processCpuMs(side.pid), pg: new Map(rows.map((r) => [r.pid as number, processCpuMs(r.pid)])) };
}

export async function alternating(pool: pg.Pool, count: number, ours: Side, base: Side, concurrency = CONCURRENCY): Promise<{ ours: Measured; base: Measured }> {
  const zero = () => ({ ms: 0, lat: [] as number[], done: 0, node: 0, pg: 0 });
  const acc = { ours: zero(), base: zero() };
  const half = Math.floor(count / 2);
  for (const [name, side] of [['base', base], ['ours', ours], ['base', base], ['ours', ours]] as const) {
    const a = acc[name];
    const size = a.done === 0 ? half : count - half;
    const offset = a.done;
    const before = await cpuOf(pool, side);
    const r = await runConcurrently(size, concurrency, (i) => side.task(offset + i), { latencies: true });
    const after = await cpuOf(pool, side);
    a.node += after.node - before.node;
    for (const [pid, ms] of after.pg) a.pg += Math.max(0, ms - (before.pg.get(pid) ?? 0));
    a.ms += r.elapsedMs;
    a.lat.push(...r.latencies);
    a.done += size;
  }
  const figures = (a: ReturnType<typeof zero>): Measured => ({
    requests: a.done,
    perSecond: perSecond(a.done, a.ms),
    latency: summarize(a.lat),
    cpuNode: a.node / a.done,
    cpuPg: a.pg / a.done,
  });
  return { ours: figures(acc.ours), base: figures(acc.base) };
}
