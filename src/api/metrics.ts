/**
 * GET /metrics: the process's Prometheus metrics in the text format
 * (src/shared/metrics.ts; docs/operations.md "Metrics"). No authentication,
 * like /healthz and /readyz: labels carry route templates, projector names and
 * outcomes, never tenant ids or secrets. An operator who does not want it on
 * the public port sets METRICS_PORT: it is then served there only
 * (src/server.ts), and the API port answers 404.
 *
 * Gauges that are state rather than events are read at each scrape: projector
 * lag (from the checkpoints, so an api-only process reports the projectors
 * other processes run), webhook deliveries waiting, and the pool's use. A
 * scrape during a database outage still answers, with `database_up 0` and the
 * last values it read.
 */
import { Router } from 'express';
import { sql } from 'kysely';
import { projectionStatus } from '../projections/status.ts';
import type { Runtime } from '../runtime.ts';
import {
  databaseUp,
  dbPoolConnections,
  dbPoolMax,
  projectorFailing,
  projectorLagEvents,
  projectorLagSeconds,
  registry,
  webhookQueue,
} from '../shared/metrics.ts';

async function readState(rt: Runtime): Promise<void> {
  const pool = rt.database.pool;
  dbPoolConnections.set({ state: 'total' }, pool.totalCount);
  dbPoolConnections.set({ state: 'idle' }, pool.idleCount);
  dbPoolConnections.set({ state: 'waiting' }, pool.waitingCount);
  dbPoolMax.set(pool.options.max ?? 0);
  try {
    const status = await projectionStatus(rt.database.db, rt.store, rt.projectors.map((p) => p.name));
    for (const s of status) {
      projectorLagEvents.set({ projector: s.name }, s.lag_events);
      projectorLagSeconds.set({ projector: s.name }, s.lag_ms / 1000);
      projectorFailing.set({ projector: s.name }, s.error === null ? 0 : 1);
    }
    const { rows } = await sql<{ due: string; scheduled: string }>`
      select count(*) filter (where next_attempt_at is null or next_attempt_at <= now()) as due,
             count(*) filter (where next_attempt_at > now()) as scheduled
        from webhook_deliveries where status = 'pending'`.execute(rt.database.db);
    webhookQueue.set({ state: 'due' }, Number(rows[0]?.due ?? 0));
    webhookQueue.set({ state: 'scheduled' }, Number(rows[0]?.scheduled ?? 0));
    databaseUp.set(1);
  } catch {
    databaseUp.set(0);
  }
}

export function metricsRouter(rt: Runtime): Router {
  const router = Router({ caseSensitive: true });
  router.get('/metrics', async (_req, res, next) => {
    try {
      await readState(rt);
      res.setHeader('Content-Type', registry.contentType);
      res.send(await registry.metrics());
    } catch (err) {
      next(err);
    }
  });
  return router;
}
