/**
 * The two delivery conventions of the reference (Events, conventions A and
 * B), byte for byte: headers, timestamp unit, signature format.
 * Both sign `<timestamp>.<raw body>` with HMAC-SHA256 keyed by the secret
 * string's UTF-8 bytes, exactly as printed by `webhook add` (no decoding).
 * Pure: the clock arrives as an argument.
 */
import { createHmac } from 'node:crypto';

export type Convention = 'A' | 'B';

export const CONVENTIONS: readonly Convention[] = ['A', 'B'];

/** Lowercase hex HMAC-SHA256 of `${timestamp}.${body}`. */
export function hmacHex(secret: string, timestamp: number, body: string | Buffer): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(`${timestamp}.`, 'utf8')
    .update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body)
    .digest('hex');
}

/** The timestamp a convention sends: A in Unix seconds, B in Unix milliseconds. */
export function signatureTimestamp(convention: Convention, nowMs: number): number {
  return convention === 'A' ? Math.floor(nowMs / 1000) : Math.floor(nowMs);
}

export interface SignedRequest {
  headers: Record<string, string>;
  /** The timestamp in the headers (recorded with the attempt). */
  timestamp: number;
}

export interface SignInput {
  convention: Convention;
  secret: string;
  body: string | Buffer;
  eventName: string;
  deliveryId: string;
  nowMs: number;
  /**
   * A sample sent by `webhook test` or the dashboard (and its replays): marked by one more header,
   * `X-Webhook-Test: true` (A) or `X-Service-Test: true` (B), so a receiver can tell it from a real
   * event without parsing the body, whose fields the conventions fix.
   */
  test?: boolean;
}

/** Every header of one attempt (Content-Length is set by the sender). */
export function signedHeaders(input: SignInput): SignedRequest {
  const { convention, secret, body, eventName, deliveryId } = input;
  const timestamp = signatureTimestamp(convention, input.nowMs);
  const mac = hmacHex(secret, timestamp, body);
  const headers: Record<string, string> =
    convention === 'A'
      ? {
          'Content-Type': 'application/json',
          'X-Webhook-Signature': `v1=${mac}`,
          'X-Webhook-Timestamp': String(timestamp),
          'X-Webhook-Event': eventName,
          'X-Webhook-Delivery-Id': deliveryId,
          'User-Agent': 'Service-Webhooks/1.0',
        }
      : {
          'Content-Type': 'application/json',
          'X-Service-Signature': mac,
          'X-Service-Timestamp': String(timestamp),
          'X-Service-Event': eventName,
          'X-Service-Delivery-ID': deliveryId,
          'User-Agent': 'Service-Webhook/1.0',
        };
  if (input.test) headers[convention === 'A' ? 'X-Webhook-Test' : 'X-Service-Test'] = 'true';
  return { headers, timestamp };
}

export interface PublishedEvent {
  /** Event id (convention B's `id`, the de-duplication key there). */
  id: string;
  /** Public name, e.g. invoice.paid. */
  name: string;
  organizationId: string;
  /** ISO 8601 time the event happened. */
  createdAt: string;
  /** The resource snapshot as of that event. */
  data: Record<string, unknown>;
}

/** The body of one delivery, frozen when the delivery is created. */
export function deliveryBody(convention: Convention, e: PublishedEvent): string {
  return convention === 'A'
    ? JSON.stringify({ event: e.name, data: e.data, organization_id: e.organizationId, created_at: e.createdAt })
    : JSON.stringify({ id: e.id, type: e.name, created: e.createdAt, data: e.data, organization_id: e.organizationId });
}
