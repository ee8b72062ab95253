/**
 * CPU time used by this process and by its PostgreSQL backends (those of a
 * pool, found by application_name; the embedded server, or any server on this
 * machine: /proc). Throughput on a shared machine swings with other load; CPU
 * per operation hardly does, so benchmarks can report both.
 */
import { readFileSync } from 'node:fs';
import type pg from 'pg';

const TICK_MS = 10; // USER_HZ = 100 on Linux

/** utime + stime of a process in ms (0 when it is gone or /proc is not there). */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return 0;
  }
}

export interface CpuSample {
  self: number;
  backends: Map<number, number>;
}

export interface CpuUsed {
  /** This Node.js process, ms. */
  self: number;
  /** The PostgreSQL backends, ms (0 when the server is not on this machine). */
  postgres: number;
}

/** Samples this process and the backends of `pool` whose application_name is `applicationName`. */
export class CpuMeter {
  constructor(
    private readonly pool: pg.Pool,
    private readonly applicationName: string,
  ) {}

  async sample(): Promise<CpuSample> {
    const { rows } = await this.pool.query('select pid from pg_stat_activity where application_name = $1', [this.applicationName]);
    const usage = process.cpuUsage();
    return {
      self: (usage.user + usage.system) / 1000,
      backends: new Map(rows.map((r) => [r.pid as number, processCpuMs(r.pid)])),
    };
  }

  /** CPU used between two samples (a backend that appeared in between counts from 0). */
  static used(before: CpuSample, after: CpuSample): CpuUsed {
    let postgres = 0;
    for (const [pid, ms] of after.backends) postgres += Math.max(0, ms - (before.backends.get(pid) ?? 0));
    return { self: after.self - before.self, postgres };
  }

  /** Runs fn and returns its result with the CPU it used. */
  async measure<T>(fn: () => Promise<T>): Promise<{ result: T; cpu: CpuUsed }> {
    const before = await this.sample();
    const result = await fn();
    const after = await this.sample();
    return { result, cpu: CpuMeter.used(before, after) };
  }
}

/** CPU of another process (a server under test) and of its PostgreSQL backends. */
export interface ServerCpuSample {
  server: number;
  postgres: Map<number, number>;
}

export async function sampleServer(pool: pg.Pool, serverPid: number, applicationName: string): Promise<ServerCpuSample> {
  const { rows } = await pool.query('select pid from pg_stat_activity where application_name = $1', [applicationName]);
  return { server: processCpuMs(serverPid), postgres: new Map(rows.map((r) => [r.pid as number, processCpuMs(r.pid)])) };
}

/** CPU ms used between two samples (a backend that appeared in between counts from 0). */
export function serverCpuUsed(before: ServerCpuSample, after: ServerCpuSample): { server: number; postgres: number } {
  let postgres = 0;
  for (const [pid, ms] of after.postgres) postgres += Math.max(0, ms - (before.postgres.get(pid) ?? 0));
  return { server: after.server - before.server, postgres };
}
