/**
 * The RequestContext a handler receives: who calls, on which organization,
 * the If-Match revision, and the metadata its events carry.
 */
import type { Request, Response } from 'express';
import { v7 as uuidv7 } from 'uuid';
import { derivedV7 } from '../../shared/derived-id.ts';
import type { Runtime } from '../../runtime.ts';
import { validationError } from '../../shared/errors.ts';
import type { ApiKeyInfo, RequestContext } from '../route.ts';
import type { Prefetched } from './prefetch.ts';
import { withStreamRead } from '../../eventstore/stream-rider.ts';

const CORRELATION = /^[\w.:-]{1,128}$/;

/**
 * If-Match as a stream revision. ETags are strong, `"<version>"`; we also
 * accept the bare number (clients are loose about quotes). `*` (any version)
 * is the same as no precondition. A weak tag (`W/"3"`) is refused with
 * VALIDATION_ERROR: If-Match uses the strong comparison (RFC 9110, 13.1.1),
 * under which a weak tag never matches, so the write could never succeed
 * with it, and a 409 would send the client to re-read and fail again
 * (docs/api-decisions.md "Beyond the reference", ETag and If-Match).
 */
export function parseIfMatch(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  if (value === '*' || value === '') return undefined;
  if (/^W\//i.test(value)) {
    throw validationError([{ field: 'If-Match', message: 'must be a strong ETag such as "3": a weak ETag (W/...) never matches (RFC 9110 strong comparison)' }]);
  }
  // Quoted or bare, never half-quoted; a version as this API writes it, so `"02"` (which the strong
  // comparison tells apart from `"2"`) is no tag of ours rather than a match.
  const m = /^(?:"(0|[1-9]\d{0,14})"|(0|[1-9]\d{0,14}))$/.exec(value);
  if (!m) throw validationError([{ field: 'If-Match', message: 'must be an ETag of this API, e.g. "3"' }]);
  return Number(m[1] ?? m[2]);
}

export function createContext(
  rt: Runtime,
  req: Request,
  res: Response,
  key: ApiKeyInfo,
  organizationId: string | null,
  prefetched: Prefetched = {},
): RequestContext {
  const requestId = res.locals.requestId as string;
  const given = req.header('x-correlation-id');
  const correlationId = given && CORRELATION.test(given) ? given : requestId;
  const ctx: RequestContext = {
    rt,
    req,
    res,
    requestId,
    key,
    organizationId,
    prefetched,
    // A stream the key's statement brought answers the command's first read of it (prefetch.ts).
    store: prefetched.stream ? withStreamRead(rt.store, prefetched.stream.name, prefetched.stream.events) : rt.store,
    idempotencySeed: null,
    newId: (kind) => (ctx.idempotencySeed ? derivedV7(ctx.idempotencySeed, kind) : uuidv7()),
    ifMatch: parseIfMatch(req.header('if-match')),
    metadata: () => ({
      organization_id: organizationId,
      actor: key.id,
      request_id: requestId,
      correlation_id: correlationId,
      causation_id: null,
      occurred_at: new Date().toISOString(),
    }),
  };
  return ctx;
}

/** Facts fetched with the key are as old as the request: a request that waited (for another attempt of its Idempotency-Key) reads afresh. */
export function dropPrefetched(ctx: RequestContext): void {
  ctx.prefetched = {};
  ctx.store = ctx.rt.store;
}
