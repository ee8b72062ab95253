/**
 * Every route of /api/v1, by resource. A router file exports a RouteSpec[];
 * add it to `allRoutes`. The pipeline mounts them and OpenAPI documents them.
 */
import { Router, type Express } from 'express';
import type { Runtime } from '../runtime.ts';
import { customerRoutes } from './customers.ts';
import { invoiceRoutes } from './invoices.ts';
import { openapiHandler } from './openapi.ts';
import { organizationRoutes } from './organization.ts';
import { organizationsRoutes } from './organizations.ts';
import { mountRoutes } from './pipeline/index.ts';
import { scheduleRoutes } from './schedules.ts';
import type { RouteSpec } from './route.ts';

export const allRoutes: RouteSpec[] = [
  ...customerRoutes,
  ...invoiceRoutes,
  ...organizationRoutes,
  ...organizationsRoutes,
  ...scheduleRoutes,
];

/** Routes outside /api/v1 (e.g. /openapi.json). */
export function rootRoutes(app: Express, _rt: Runtime): void {
  app.get('/openapi.json', openapiHandler(allRoutes));
}

export function apiRouter(rt: Runtime): Router {
  const router = Router();
  router.get('/openapi.json', openapiHandler(allRoutes)); // no auth (CONTRACT section 13)
  mountRoutes(router, rt, allRoutes);
  return router;
}
