/**
 * Where resource routers are mounted. One router file per resource.
 */
import { Router, type Express } from 'express';
import type { Runtime } from '../runtime.ts';

/** Routes outside /api/v1 (e.g. /openapi.json). */
export function rootRoutes(_app: Express, _rt: Runtime): void {}

export function apiRouter(_rt: Runtime): Router {
  const router = Router();
  return router;
}
