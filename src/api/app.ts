/**
 * The express application: request id and access log, raw body capture,
 * health endpoints at the root, the versioned API under /api/v1, and the
 * single error renderer.
 */
import { randomUUID } from 'node:crypto';
import express, { type Express } from 'express';
import { dashboardRouter } from '../dashboard/router.ts';
import type { Runtime } from '../runtime.ts';
import { DomainError } from '../shared/errors.ts';
import { BODY_LIMIT } from './body.ts';
import { errorHandler, sendError } from './errors.ts';
import { healthRouter } from './health.ts';
import type { RouteSpec } from './route.ts';
import { strictHost } from './pipeline/host.ts';
import { apiRouter, rootRoutes } from './routes.ts';

export function createApp(rt: Runtime, routes: readonly RouteSpec[]): Express {
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

  app.use(healthRouter(rt));
  app.use('/dashboard', dashboardRouter(rt)); // its own body parser (forms), sessions and error pages
  app.use(express.raw({ type: () => true, limit: BODY_LIMIT }));
  rootRoutes(app, routes);
  app.use('/api/v1', apiRouter(rt, routes));
  app.use((_req, res) => sendError(res, new DomainError('NOT_FOUND', 'No such route. See GET /api/v1/openapi.json.')));
  app.use(errorHandler);
  return app;
}
