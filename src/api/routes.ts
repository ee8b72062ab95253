/**
 * Mounts the routes of /api/v1 (every RouteSpec the composition root,
 * src/main.ts, lists) and the unauthenticated OpenAPI document, which
 * describes exactly those routes.
 */
import express, { Router, type ErrorRequestHandler, type Express } from 'express';
import type { Runtime } from '../runtime.ts';
import { DomainError } from '../shared/errors.ts';
import { BODY_LIMIT } from './body.ts';
import { refusalBeforeRoute, sendError } from './errors.ts';
import { openapiHandler } from './openapi.ts';
import { methodNotAllowed } from './method-not-allowed.ts';
import { mountRoutes } from './pipeline/index.ts';
import { keyedAnswer } from './pipeline/keyed.ts';
import { UnauthenticatedLimiter } from './pipeline/unauthenticated.ts';
import type { RouteSpec } from './route.ts';

/** Routes outside /api/v1 (e.g. /openapi.json). */
export function rootRoutes(app: Express, routes: readonly RouteSpec[]): void {
  app.get('/openapi.json', openapiHandler(routes));
  app.use('/openapi.json', methodNotAllowed([{ method: 'get', path: '/' }]));
}

export const NO_SUCH_ROUTE = 'No such route. See GET /api/v1/openapi.json.';

/**
 * /api/v1: the body read as bytes (the routes parse it after authentication), the routes, then the answers
 * where none ran (405, 404, the body reader's and the router's refusals), each with the rate-limit headers of
 * the key the request names (src/api/pipeline/keyed.ts).
 */
export function apiRouter(rt: Runtime, routes: readonly RouteSpec[]): Router {
  const router = Router({ caseSensitive: true });
  const unauthenticated = new UnauthenticatedLimiter(rt.config?.unauthenticatedPerMinute ?? 60);
  const keyed = keyedAnswer(rt, unauthenticated);
  router.use(express.raw({ type: () => true, limit: BODY_LIMIT }));
  router.get('/openapi.json', openapiHandler(routes)); // no auth (docs/api-decisions.md "Beyond the reference")
  mountRoutes(router, rt, routes, unauthenticated);
  router.use(methodNotAllowed([...routes, { method: 'get', path: '/openapi.json' }], keyed));
  router.use((req, res, next) => void keyed(req, res, () => sendError(res, new DomainError('NOT_FOUND', NO_SUCH_ROUTE))).catch(next));
  const refusedBeforeRoute: ErrorRequestHandler = (err, req, res, next) => {
    const refusal = res.headersSent || err instanceof DomainError ? null : refusalBeforeRoute(err);
    if (!refusal) return next(err);
    // Defensive: a reader-like error thrown inside a route, after its authentication counted the request and
    // set the headers; none does today (a route's refusals are DomainErrors).
    if (res.locals.keyId !== undefined) return sendError(res, refusal);
    keyed(req, res, () => sendError(res, refusal)).catch(next);
  };
  router.use(refusedBeforeRoute);
  return router;
}
