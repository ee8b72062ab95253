/**
 * The one place where errors become the reference's envelope:
 * { success: false, error: { code, message, details? } }.
 * Anything that is not a DomainError is a 500 that names only the request id.
 */
import type { ErrorRequestHandler, Response } from 'express';
import { isConnectionError, RETRY_AFTER_SECONDS } from '../db/connection.ts';
import { DomainError } from '../shared/errors.ts';

/** The error envelope of a DomainError (also stored for Idempotency-Key replays). */
export function errorEnvelope(err: DomainError): { success: false; error: Record<string, unknown> } {
  const body: Record<string, unknown> = { code: err.code, message: err.message };
  if (err.details !== undefined) body.details = err.details;
  return { success: false, error: body };
}

export function sendError(res: Response, err: DomainError): void {
  res.status(err.status).json(errorEnvelope(err));
}

/**
 * What the request is refused for when the body reader or the router refused it before any route ran
 * (src/api/pipeline/keyed.ts gives the answer its rate-limit headers); null for any other error.
 */
export function refusalBeforeRoute(err: any): DomainError | null {
  if (err?.type === 'entity.too.large') return new DomainError('PAYLOAD_TOO_LARGE', 'The request body is larger than 1 MiB.');
  if (err?.type === 'encoding.unsupported' || err?.type === 'charset.unsupported') {
    return new DomainError('UNSUPPORTED_MEDIA_TYPE', 'The request body must be JSON encoded as UTF-8.');
  }
  // A path segment whose percent-encoding does not decode (%ZZ, a cut UTF-8 sequence): express's router
  // refuses it before any route runs. Such a path names no resource, as a path id that is not a UUID.
  if (err instanceof URIError && (err as URIError & { status?: number }).status === 400) return new DomainError('NOT_FOUND', 'No such resource: the path is not valid percent-encoding.');
  // Any other client error of the body reader (e.g. a gzip body that does not inflate).
  if (err?.type !== 'request.aborted' && typeof err?.status === 'number' && err.status >= 400 && err.status < 500 && err.expose) {
    return new DomainError('INVALID_JSON', 'The request body could not be read.', { fields: [{ field: 'body', message: String(err.message) }] });
  }
  return null;
}

export const errorHandler: ErrorRequestHandler = (err, req, res, _next) => {
  if (res.headersSent) return;
  if (err instanceof DomainError) return sendError(res, err);
  if (err?.type === 'request.aborted') return;
  const refusal = refusalBeforeRoute(err);
  if (refusal) return sendError(res, refusal);
  // The database went away under this request (failover, restart, terminated session):
  // nothing was acknowledged, so the client may retry (docs/reliability.md).
  if (isConnectionError(err)) {
    res.locals.logger?.warn({ err: String(err?.message ?? err), request_id: res.locals.requestId }, 'database unavailable');
    res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
    return sendError(res, new DomainError('SERVICE_UNAVAILABLE', 'The database is unavailable. Retry after a few seconds.', { retry_after: RETRY_AFTER_SECONDS }));
  }
  const requestId = res.locals.requestId as string | undefined;
  res.locals.logger?.error({ err, request_id: requestId }, 'unhandled error');
  sendError(
    res,
    new DomainError('INTERNAL_ERROR', `An internal error occurred. Quote request id ${requestId ?? 'unknown'} to support.`, {
      request_id: requestId,
    }),
  );
};
