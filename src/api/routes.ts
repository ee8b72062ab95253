/**
 * Every route of /api/v1, by resource. A router file exports a RouteSpec[];
 * add it to `allRoutes`. The pipeline mounts them and OpenAPI documents them.
 */
import { Router, type Express } from 'express';
import type { Runtime } from '../runtime.ts';
import type { RouteSpec } from './route.ts';

export const allRoutes: RouteSpec[] = [];

/** Routes outside /api/v1 (e.g. /openapi.json). */
export function rootRoutes(_app: Express, _rt: Runtime): void {}

export function apiRouter(_rt: Runtime): Router {
  const router = Router();
  return router;
}
