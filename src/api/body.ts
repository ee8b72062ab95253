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

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** The `charset` parameter of a Content-Type, lower-cased (null when absent). */
export function charsetOf(contentType: string): string | null {
  for (const param of contentType.split(';').slice(1)) {
    const eq = param.indexOf('=');
    if (eq < 0) continue;
    if (param.slice(0, eq).trim().toLowerCase() === 'charset') return param.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase();
  }
  return null;
}

/**
 * Parses the JSON body (undefined when there is none). Throws 415 /
 * INVALID_JSON. JSON is UTF-8 (RFC 8259): a declared charset other than
 * UTF-8 is 415, and bytes that are not UTF-8 are INVALID_JSON, never decoded
 * into U+FFFD replacement characters and stored (docs/reliability.md).
 */
export function parseJsonBody(req: Request): unknown {
  const raw = rawOf(req);
  if (!raw) return undefined;
  const contentType = req.headers['content-type'] ?? '';
  const type = contentType.split(';')[0].trim().toLowerCase();
  if (type !== 'application/json' && !type.endsWith('+json')) {
    throw new DomainError('UNSUPPORTED_MEDIA_TYPE', 'Send the request body as JSON with Content-Type: application/json.');
  }
  const charset = charsetOf(contentType);
  if (charset !== null && charset !== 'utf-8' && charset !== 'utf8') {
    throw new DomainError('UNSUPPORTED_MEDIA_TYPE', `The request body must be JSON encoded as UTF-8 (charset "${charset}" is not accepted).`);
  }
  let text: string;
  try {
    text = UTF8.decode(raw);
  } catch {
    throw new DomainError('INVALID_JSON', 'The request body is not valid UTF-8.', {
      fields: [{ field: 'body', message: 'must be encoded as UTF-8' }],
    });
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    const message = (err as Error).message;
    throw new DomainError('INVALID_JSON', 'The request body is not valid JSON.', {
      fields: [{ field: 'body', message }],
    });
  }
}
