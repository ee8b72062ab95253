/**
 * CPU time spent by the processes serving a case: the server process and
 * its PostgreSQL backends (found by application_name). Throughput on a shared
 * 2-core machine swings with other load; CPU per request does not, so the
 * bench reports both.
 */
import { readFileSync } from 'node:fs';
import type pg from 'pg';

const TICK_MS = 10; // USER_HZ = 100 on Linux

function cpuOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS; // utime + stime
  } catch {
    return 0; // gone (or not Linux)
  }
}

export async function backendPids(pool: pg.Pool, applicationName: string): Promise<number[]> {
  const { rows } = await pool.query('select pid from pg_stat_activity where application_name = $1', [applicationName]);
  return rows.map((r) => r.pid as number);
}

export interface CpuSample {
  server: number;
  postgres: Map<number, number>;
}

export async function sample(pool: pg.Pool, serverPid: number, applicationName: string): Promise<CpuSample> {
  const pids = await backendPids(pool, applicationName);
  return { server: cpuOf(serverPid), postgres: new Map(pids.map((p) => [p, cpuOf(p)])) };
}

/** CPU ms used between two samples (backends that appeared in between count from 0). */
export function used(before: CpuSample, after: CpuSample): { server: number; postgres: number } {
  let postgres = 0;
  for (const [pid, ms] of after.postgres) postgres += ms - (before.postgres.get(pid) ?? 0);
  return { server: after.server - before.server, postgres };
}
