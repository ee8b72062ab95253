/**
 * The express application: request id and access log (src/api/access-log.ts),
 * response compression, health endpoints and /metrics at the root, the web
 * apps the composition root mounts (e.g. /dashboard, with their own body
 * parsing), the versioned API under /api/v1, and the single error renderer.
 */
import compression from 'compression';
import express, { type Express, type Router } from 'express';
import type { Runtime } from '../runtime.ts';
import { DomainError } from '../shared/errors.ts';
import { accessLog } from './access-log.ts';
import { errorHandler, sendError } from './errors.ts';
import { healthRouter } from './health.ts';
import { metricsRouter } from './metrics.ts';
import type { RouteSpec } from './route.ts';
import { strictHost } from './pipeline/host.ts';
import { apiRouter, NO_SUCH_ROUTE, rootRoutes } from './routes.ts';

/** A web app beside the API (its own body parser, sessions, error pages), mounted at `path`. */
export interface Mount {
  path: string;
  router(rt: Runtime): Router;
}

export function createApp(rt: Runtime, routes: readonly RouteSpec[], mounts: readonly Mount[] = []): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false); // ETags are resource versions, set by the routes
  app.set('query parser', 'simple'); // no nested objects from ?a[b]=c
  // /API/V1/Customers is not /api/v1/customers: one spelling per resource (404 otherwise).
  app.set('case sensitive routing', true);
  app.use(accessLog(rt.logger, rt.requests)); // first: every answer is logged and counted, a refused Host header's too
  app.use(strictHost);

  // gzip or br (by Accept-Encoding) for answers over 2 KiB of a compressible type: JSON lists,
  // XML, dashboard pages; PDFs are compressed already and go as they are. Only the transfer
  // changes: the decoded bytes are the answer (an Idempotency-Key replay's included) and the
  // ETag, which names the resource version, stays the same (docs/api-decisions.md "Compression").
  // A client that names no encoding gets identity whatever the middleware decides, so it is not
  // wrapped around such a request at all (its hooks on every write cost about 25 us a request);
  // the answer still says that it varies with Accept-Encoding, for caches, as the middleware would.
  const compress = compression({ threshold: 2048 });
  app.use((req, res, next) => {
    if (req.headers['accept-encoding']) return compress(req, res, next);
    res.vary('Accept-Encoding');
    next();
  });
  app.use(healthRouter(rt));
  if (!rt.config?.metricsPort) app.use(metricsRouter(rt)); // else on its own port (src/server.ts)
  for (const m of mounts) app.use(m.path, m.router(rt));
  rootRoutes(app, routes);
  app.use('/api/v1', apiRouter(rt, routes)); // reads its bodies itself
  app.use((_req, res) => sendError(res, new DomainError('NOT_FOUND', NO_SUCH_ROUTE)));
  app.use(errorHandler);
  return app;
}
