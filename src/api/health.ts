/**
 * GET /healthz (the process is alive) and GET /readyz (database and event
 * store reachable, every projector running and caught up within 5 s),
 * at the server root, without authentication (docs/api-decisions.md "Beyond the reference").
 */
import { Router } from 'express';
import { sql } from 'kysely';
import { documentsStatus } from '../documents/for-runtime.ts';
import { projectionStatus } from '../projections/status.ts';
import type { Runtime } from '../runtime.ts';

const CAUGHT_UP_MS = 5000;

export function healthRouter(rt: Runtime): Router {
  const router = Router({ caseSensitive: true });
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const checks: Record<string, unknown> = {};
    let ready = true;
    try {
      await sql`select 1`.execute(rt.database.db);
      checks.database = 'ok';
    } catch (err) {
      ready = false;
      checks.database = `unreachable: ${(err as Error).message}`;
    }
    try {
      const readModels = rt.projectors.map((p) => p.name);
      const status = await projectionStatus(rt.database.db, rt.store, readModels);
      checks.event_store = 'ok';
      checks.projections = status.map((s) => {
        const ok = s.error === null && s.lag_ms <= CAUGHT_UP_MS;
        // Reads depend on the read models only; other consumers are shown, not gating.
        if (!ok && readModels.includes(s.name)) ready = false;
        return { name: s.name, ok, position: s.position, lag_events: s.lag_events, lag_ms: s.lag_ms, failed_event_id: s.failed_event_id, error: s.error };
      });
    } catch (err) {
      ready = false;
      checks.event_store = `unreachable: ${(err as Error).message}`;
    }
    // Reported, not gating: without Chromium only the PDF endpoint answers 503.
    checks.pdf = documentsStatus(rt);
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks });
  });
  return router;
}
