/** Running a fixed number of operations with a fixed number of concurrent workers. */
import { msSince } from './stats.ts';

export interface ConcurrentResult {
  count: number;
  elapsedMs: number;
  /** Per-operation latencies in ms (only when `latencies` was asked for). */
  latencies: number[];
}

/**
 * Runs task(index, worker) for index 0..total-1 on `concurrency` workers; each
 * worker takes the next index when its previous task is done (worker is
 * 0..concurrency-1, so a task can use state owned by its worker). The first
 * error stops every worker and is rethrown.
 */
export async function runConcurrently(
  total: number,
  concurrency: number,
  task: (index: number, worker: number) => Promise<unknown>,
  options: { latencies?: boolean } = {},
): Promise<ConcurrentResult> {
  let next = 0;
  let failed: unknown = null;
  const latencies: number[] = [];
  const start = process.hrtime.bigint();
  const worker = async (w: number) => {
    while (failed === null) {
      const i = next++;
      if (i >= total) return;
      const t0 = options.latencies ? process.hrtime.bigint() : 0n;
      try {
        await task(i, w);
      } catch (err) {
        failed ??= err;
        return;
      }
      if (options.latencies) latencies.push(msSince(t0));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(total, 1)) }, (_, w) => worker(w)));
  const elapsedMs = msSince(start);
  if (failed !== null) throw failed;
  return { count: total, elapsedMs, latencies };
}
