/**
 * A known path with a method it does not take answers `405
 * METHOD_NOT_ALLOWED` with `Allow` listing the methods it does (RFC 9110,
 * 15.5.6), instead of a 404 that would tell the client the resource does
 * not exist; `OPTIONS` answers 204 with the same `Allow`. This is routing:
 * the methods of a path are public (the OpenAPI document lists them), so no
 * key is needed; under /api/v1 a request that names one is authenticated and
 * counted first (`keyed`, src/api/pipeline/keyed.ts), as every answer there
 * carries the rate-limit headers. docs/api-decisions.md "Status codes".
 */
import type { RequestHandler } from 'express';
import { DomainError } from '../shared/errors.ts';
import { sendError } from './errors.ts';
import type { KeyedAnswer } from './pipeline/keyed.ts';

/** Express path ('/invoices/:id/pay') to a matcher of request paths (':param' is one segment; a trailing slash is allowed, as express allows it). */
function matcher(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}/?$`);
}

/** `paths`: every (method, express path) the router serves; `keyed`: gives the answer (default: as it is). */
export function methodNotAllowed(paths: readonly { method: string; path: string }[], keyed?: KeyedAnswer): RequestHandler {
  const byPath = new Map<string, Set<string>>();
  for (const { method, path } of paths) {
    const methods = byPath.get(path) ?? new Set<string>();
    methods.add(method.toUpperCase());
    if (method.toLowerCase() === 'get') methods.add('HEAD');
    byPath.set(path, methods);
  }
  const known = [...byPath].map(([path, methods]) => ({ test: matcher(path), methods }));
  return (req, res, next) => {
    const allowed = new Set<string>();
    for (const k of known) if (k.test.test(req.path)) for (const m of k.methods) allowed.add(m);
    if (allowed.size === 0 || allowed.has(req.method)) return next();
    allowed.add('OPTIONS');
    const allow = [...allowed].sort().join(', ');
    const answer = () => {
      res.setHeader('Allow', allow);
      if (req.method === 'OPTIONS') return void res.status(204).end();
      sendError(res, new DomainError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${req.path}. Allowed: ${allow}.`, { allowed: [...allowed].sort() }));
    };
    if (!keyed) return answer();
    keyed(req, res, answer).catch(next);
  };
}
