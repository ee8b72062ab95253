/**
 * Headers that point elsewhere: `Location` on a 201 (the created resource,
 * RouteSpec.location) and `Link` on a list (RFC 8288 first, prev, next,
 * last), so a client pages without computing URLs and without a change to
 * `meta.pagination` (docs/api-decisions.md "Lists"). Both are paths below
 * the server root (relative references, resolved against the request URL),
 * never built from the Host header.
 */
import type { Request } from 'express';
import type { RouteSpec } from '../route.ts';
import type { Rendered } from './reply.ts';

/** Adds `Location` to a 201 of a route that declares what it creates (kept for Idempotency-Key replays). */
export function withLocation(spec: RouteSpec, baseUrl: string, r: Rendered): Rendered {
  if (r.status !== 201 || !spec.location) return r;
  const id = (r.json as { data?: { id?: unknown } } | null)?.data?.id;
  if (typeof id !== 'string') return r;
  return { ...r, headers: { ...r.headers, Location: `${baseUrl}${spec.location.replace(':id', encodeURIComponent(id))}` } };
}

interface Pagination {
  page: number;
  perPage: number;
  totalPages: number;
}

/** The Link header of a page of a list, or null when the answer is not a list. */
export function linkHeader(req: Request, r: Rendered): string | null {
  const pagination = (r.json as { meta?: { pagination?: Pagination } } | null)?.meta?.pagination;
  if (!pagination || r.status !== 200) return null;
  const { page, perPage, totalPages } = pagination;
  const path = `${req.baseUrl}${req.path}`;
  const query = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?') + 1) : '';
  const to = (n: number) => {
    const params = new URLSearchParams(query);
    params.set('page', String(n));
    params.set('per_page', String(perPage));
    return `<${path}?${params}>`;
  };
  const last = Math.max(1, totalPages);
  const links = [`${to(1)}; rel="first"`];
  if (page > 1) links.push(`${to(Math.min(page - 1, last))}; rel="prev"`);
  if (page < totalPages) links.push(`${to(page + 1)}; rel="next"`);
  links.push(`${to(last)}; rel="last"`);
  return links.join(', ');
}
