/**
 * Request bodies are read raw (limit 1 MiB, 413 beyond) before anything else,
 * but only parsed as JSON at the validation step, after authentication, so
 * the order of checks is the contract's (docs/api-decisions.md "Keys, plans and quotas"). The raw bytes
 * stay available for the Idempotency-Key fingerprint.
 */
import type { Request } from 'express';
import { DomainError } from '../shared/errors.ts';

export const BODY_LIMIT = '1mb';

function rawOf(req: Request): Buffer | null {
  return Buffer.isBuffer(req.body) && req.body.length > 0 ? req.body : null;
}

export function rawBody(req: Request): Buffer {
  return rawOf(req) ?? Buffer.alloc(0);
}

/** Parses the JSON body (undefined when there is none). Throws 415 / INVALID_JSON. */
export function parseJsonBody(req: Request): unknown {
  const raw = rawOf(req);
  if (!raw) return undefined;
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json' && !type.endsWith('+json')) {
    throw new DomainError('UNSUPPORTED_MEDIA_TYPE', 'Send the request body as JSON with Content-Type: application/json.');
  }
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (err) {
    const message = (err as Error).message;
    throw new DomainError('INVALID_JSON', 'The request body is not valid JSON.', {
      fields: [{ field: 'body', message }],
    });
  }
}
