/**
 * Request bodies of /api/v1 are read raw (limit 1 MiB, 413 beyond) before its
 * routes run (src/api/routes.ts), but only parsed as JSON at the validation
 * step, after authentication, so the order of checks is the contract's
 * (docs/api-decisions.md "Keys, plans and quotas"). The raw bytes stay
 * available for the Idempotency-Key fingerprint.
 */
import type { Request } from 'express';
import { Decimal } from '../shared/money.ts';
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
 * A text that may hold a number a double cannot: 16 digits or more (a dot between them or not), or an
 * exponent. A number of at most 15 significant digits and no exponent survives a double unchanged.
 */
const MAYBE_INEXACT = /(?:\d\.?){16}|\d[eE]/;
/**
 * In a text JSON.parse accepted: strings whole (so the digits inside them are skipped), and the numbers that
 * may be inexact (16 digits or more, or an exponent); short numbers are not even matched, so a body of many
 * of them costs a scan, not a conversion each.
 */
const TOKENS = /"(?:[^"\\]|\\.)*"|-?(?:\d\.?){16}[\d.]*(?:[eE][+-]?\d+)?|-?\d+(?:\.\d+)?[eE][+-]?\d+/g;

/** Whether a JSON number token is exactly the double JSON.parse makes of it (1e400 is Infinity, 1e-400 is 0). */
function exactAsDouble(token: string): boolean {
  const value = Number(token);
  if (!Number.isFinite(value)) return false;
  if (value === 0) return !/[1-9]/.test(token.split(/[eE]/)[0]); // underflow: decimal.js would call it 0 too
  return new Decimal(token).eq(String(value));
}

/**
 * The JSON text with each number a double cannot hold (1.00000000000000001, 12345678901234567890, 1e400,
 * 1e-400) written as a string of the same characters, so what the API reads is what the client wrote:
 * JSON.parse alone would round it silently (to 1, 12345678901234567000, Infinity, 0). A decimal field then
 * reads the digits as sent and applies its rules to them (more than 4 decimals, an exponent: refused); any
 * other field refuses a string (docs/money.md "Inputs"). Every other number stays a number.
 */
function keepExactNumbers(text: string): string {
  return text.replace(TOKENS, (token) => (token.startsWith('"') || exactAsDouble(token) ? token : `"${token}"`));
}

/** Strings whole, and the characters that shape objects and arrays (a text JSON.parse accepted, so nothing else matters). */
const STRUCTURE = /"[^"\\]*(?:\\.[^"\\]*)*"|[{}[\]:]/g; // a string as one run between escapes: fast on long texts

/**
 * The first name that appears twice in one object of a text JSON.parse accepted, or null. JSON.parse keeps the
 * last silently, so `{"quantity": 1, "quantity": 1000}` would be read as 1000 where the client may have meant
 * either: RFC 8259 says names SHOULD be unique, I-JSON (RFC 7493) that they MUST. Names compare decoded
 * ("a" and "\u0061" are one name).
 */
export function duplicateName(text: string): string | null {
  const objects: (Set<string> | null)[] = []; // null: an array
  let previous: string | null = null; // the string just read: a name if ':' follows
  STRUCTURE.lastIndex = 0;
  for (let m = STRUCTURE.exec(text); m !== null; m = STRUCTURE.exec(text)) {
    const token = m[0];
    if (token === ':') {
      const names = objects.at(-1);
      if (previous !== null && names) {
        const name = previous.includes('\\') ? (JSON.parse(previous) as string) : previous.slice(1, -1);
        if (names.has(name)) return name;
        names.add(name);
      }
    } else if (token === '{') objects.push(new Set());
    else if (token === '[') objects.push(null);
    else if (token === '}' || token === ']') objects.pop();
    previous = token.startsWith('"') ? token : null;
  }
  return null;
}

/**
 * Parses the JSON body (undefined when there is none). Throws 415 /
 * INVALID_JSON. JSON is UTF-8 (RFC 8259): a declared charset other than
 * UTF-8 is 415, and bytes that are not UTF-8 are INVALID_JSON, never decoded
 * into U+FFFD replacement characters and stored (docs/reliability.md). A name
 * twice in one object is INVALID_JSON too (duplicateName).
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
    const parsed = JSON.parse(text); // first: keepExactNumbers and duplicateName read only text JSON accepts
    const twice = duplicateName(text);
    if (twice !== null) throw new Error(`has the name ${JSON.stringify(twice)} twice in one object`);
    if (!MAYBE_INEXACT.test(text)) return parsed;
    const exact = keepExactNumbers(text);
    return exact === text ? parsed : JSON.parse(exact); // parsed again only when a number changed
  } catch (err) {
    const message = (err as Error).message;
    throw new DomainError('INVALID_JSON', 'The request body is not valid JSON.', {
      fields: [{ field: 'body', message }],
    });
  }
}
