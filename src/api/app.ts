/**
 * The express application: request id and access log, response compression, raw body capture,
 * health endpoints at the root, the web apps the composition root mounts
 * (e.g. /dashboard, with their own body parsing), the versioned API under
 * /api/v1, and the single error renderer.
 */
import { randomUUID } from 'node:crypto';
import compression from 'compression';
import express, { type Express, type Router } from 'express';
import type { Runtime } from '../runtime.ts';
import { DomainError } from '../shared/errors.ts';
import { BODY_LIMIT } from './body.ts';
import { errorHandler, sendError } from './errors.ts';
import { healthRouter } from './health.ts';
import type { RouteSpec } from './route.ts';
import { strictHost } from './pipeline/host.ts';
import { apiRouter, rootRoutes } from './routes.ts';

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
  app.use(strictHost);

  app.use((req, res, next) => {
    const given = req.header('x-request-id');
    const requestId = given && /^[\w.-]{1,128}$/.test(given) ? given : randomUUID();
    const started = process.hrtime.bigint();
    res.locals.requestId = requestId;
    res.locals.logger = rt.logger.child({ request_id: requestId });
    res.setHeader('X-Request-Id', requestId);
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      res.locals.logger.info(
        { method: req.method, path: req.path, status: res.statusCode, ms: Math.round(ms * 10) / 10, key_id: res.locals.keyId },
        'request',
      );
    });
    next();
  });

  // gzip or br (by Accept-Encoding) for answers over 2 KiB of a compressible type: JSON lists,
  // XML, dashboard pages; PDFs are compressed already and go as they are. Only the transfer
  // changes: the decoded bytes are the answer (an Idempotency-Key replay's included) and the
  // ETag, which names the resource version, stays the same (docs/api-decisions.md "Compression").
  app.use(compression({ threshold: 2048 }));
  app.use(healthRouter(rt));
  for (const m of mounts) app.use(m.path, m.router(rt));
  app.use(express.raw({ type: () => true, limit: BODY_LIMIT }));
  rootRoutes(app, routes);
  app.use('/api/v1', apiRouter(rt, routes));
  app.use((_req, res) => sendError(res, new DomainError('NOT_FOUND', 'No such route. See GET /api/v1/openapi.json.')));
  app.use(errorHandler);
  return app;
}
