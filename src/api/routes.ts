/**
 * Mounts the routes of /api/v1 (every RouteSpec the composition root,
 * src/main.ts, lists) and the unauthenticated OpenAPI document, which
 * describes exactly those routes.
 */
import { Router, type Express } from 'express';
import type { Runtime } from '../runtime.ts';
import { openapiHandler } from './openapi.ts';
import { methodNotAllowed } from './method-not-allowed.ts';
import { mountRoutes } from './pipeline/index.ts';
import type { RouteSpec } from './route.ts';

/** Routes outside /api/v1 (e.g. /openapi.json). */
export function rootRoutes(app: Express, routes: readonly RouteSpec[]): void {
  app.get('/openapi.json', openapiHandler(routes));
  app.use('/openapi.json', methodNotAllowed([{ method: 'get', path: '/' }]));
}

export function apiRouter(rt: Runtime, routes: readonly RouteSpec[]): Router {
  const router = Router({ caseSensitive: true });
  router.get('/openapi.json', openapiHandler(routes)); // no auth (docs/api-decisions.md "Beyond the reference")
  mountRoutes(router, rt, routes);
  router.use(methodNotAllowed([...routes, { method: 'get', path: '/openapi.json' }]));
  return router;
}
