/**
 * GET /healthz (the process is alive) and GET /readyz (database and event
 * store reachable, every projector running and caught up within 5 s),
 * at the server root, without authentication (docs/operations.md "Probes").
 *
 * /readyz shows states only (`ok`, `unreachable`, `caught_up`, `behind`,
 * `failed`), never an error's text, a failed event's id or a file path: it is
 * public, and those say too much about the inside. The details are in the log
 * and in `admin projections status`.
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
    } catch {
      ready = false;
      checks.database = 'unreachable';
    }
    try {
      const readModels = rt.projectors.map((p) => p.name);
      const status = await projectionStatus(rt.database.db, rt.store, readModels);
      checks.event_store = 'ok';
      checks.projections = status.map((s) => {
        const state = s.error !== null ? 'failed' : s.lag_ms <= CAUGHT_UP_MS ? 'caught_up' : 'behind';
        // Reads depend on the read models only; other consumers are shown, not gating.
        if (state !== 'caught_up' && readModels.includes(s.name)) ready = false;
        return { name: s.name, ok: state === 'caught_up', state, lag_events: s.lag_events, lag_ms: s.lag_ms };
      });
    } catch {
      ready = false;
      checks.event_store = 'unreachable';
    }
    // Reported, not gating: without Chromium only the PDF endpoint answers 503.
    const pdf = documentsStatus(rt) as { state: string; version?: string | null };
    checks.pdf = { state: pdf.state, version: pdf.version ?? null };
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks });
  });
  return router;
}
