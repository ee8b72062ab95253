/**
 * The one place where errors become the reference's envelope:
 * { success: false, error: { code, message, details? } }.
 * Anything that is not a DomainError is a 500 that names only the request id.
 */
import type { ErrorRequestHandler, Response } from 'express';
import { DomainError } from '../shared/errors.ts';

export function sendError(res: Response, err: DomainError): void {
  const body: Record<string, unknown> = { code: err.code, message: err.message };
  if (err.details !== undefined) body.details = err.details;
  res.status(err.status).json({ success: false, error: body });
}

export const errorHandler: ErrorRequestHandler = (err, req, res, _next) => {
  if (res.headersSent) return;
  if (err instanceof DomainError) return sendError(res, err);
  // body-parser errors (raised before any route ran)
  if (err?.type === 'entity.too.large') {
    return sendError(res, new DomainError('PAYLOAD_TOO_LARGE', 'The request body is larger than 1 MiB.'));
  }
  if (err?.type === 'encoding.unsupported' || err?.type === 'charset.unsupported') {
    return sendError(res, new DomainError('UNSUPPORTED_MEDIA_TYPE', 'The request body must be JSON encoded as UTF-8.'));
  }
  if (err?.type === 'request.aborted') return;
  const requestId = res.locals.requestId as string | undefined;
  res.locals.logger?.error({ err, request_id: requestId }, 'unhandled error');
  sendError(
    res,
    new DomainError('INTERNAL_ERROR', `An internal error occurred. Quote request id ${requestId ?? 'unknown'} to support.`, {
      request_id: requestId,
    }),
  );
};
