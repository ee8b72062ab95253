/**
 * One HTTP POST of a webhook, never trusting the receiver:
 * - a deadline covers connect, TLS and headers (default 30 s); a 2xx status
 *   received before it is a success;
 * - redirects are not followed (Node never follows them; a 3xx is a failure),
 *   so a receiver cannot bounce us to an internal address;
 * - the response body is read bounded: the first 1 KiB is kept for the
 *   attempt's excerpt, reading stops at 64 KiB or at the deadline, so a
 *   huge or never-ending body never stalls a sender slot;
 * - unless insecure mode is on, only https:// and only checked addresses
 *   (address-guard: IP literals here, names in the agent's lookup).
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { assertLiteralAllowed } from './address-guard.ts';

export const EXCERPT_BYTES = 1024;
export const MAX_READ_BYTES = 64 * 1024;

export interface PostResult {
  statusCode: number | null;
  durationMs: number;
  /** First 1 KiB of the response body (UTF-8, NUL bytes dropped). */
  excerpt: string | null;
  error: string | null;
  /** Location header of a 3xx (reported, never followed). */
  location: string | null;
}

export interface PostOptions {
  url: string;
  headers: Record<string, string>;
  body: Buffer;
  timeoutMs: number;
  allowInsecure: boolean;
  agents: { http: http.Agent; https: https.Agent };
  signal?: AbortSignal;
}

/** Keep-alive agents whose sockets only ever reach checked addresses. */
export function createAgents(lookup: LookupFunction | undefined, maxSockets = 256): { http: http.Agent; https: https.Agent } {
  const options = { keepAlive: true, maxSockets, scheduling: 'lifo' as const, ...(lookup ? { lookup } : {}) };
  return { http: new http.Agent(options), https: new https.Agent(options) };
}

function excerptOf(chunks: Buffer[]): string | null {
  if (chunks.length === 0) return null;
  // PostgreSQL text cannot hold NUL; an invalid UTF-8 tail becomes U+FFFD.
  return Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8').replaceAll('\u0000', '').slice(0, EXCERPT_BYTES);
}

function describe(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const text = e?.code && !String(e.message).includes(e.code) ? `${e.code}: ${e.message}` : String(e?.message ?? err);
  return text.slice(0, 500);
}

export function postWebhook(o: PostOptions): Promise<PostResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let settled = false;
    let statusCode: number | null = null;
    let location: string | null = null;
    const chunks: Buffer[] = [];
    // complete: the response ended normally and its socket went back to the pool.
    const finish = (error: string | null, complete = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      if (!complete) req.destroy();
      resolve({ statusCode, durationMs: elapsed(), excerpt: excerptOf(chunks), error, location });
    };
    let url: URL;
    try {
      url = new URL(o.url);
      if (!o.allowInsecure) {
        if (url.protocol !== 'https:') throw new Error('the endpoint URL is not https://');
        assertLiteralAllowed(url);
      }
    } catch (err) {
      return resolve({ statusCode: null, durationMs: elapsed(), excerpt: null, error: describe(err), location: null });
    }
    const secure = url.protocol === 'https:';
    const req = (secure ? https : http).request(url, {
      method: 'POST',
      headers: { ...o.headers, 'Content-Length': String(o.body.length) },
      agent: secure ? o.agents.https : o.agents.http,
    });
    const timer = setTimeout(() => finish(statusCode === null ? `timeout: no response within ${o.timeoutMs} ms` : null), o.timeoutMs);
    const onAbort = () => finish('aborted: the sender is stopping');
    o.signal?.addEventListener('abort', onAbort);
    req.on('error', (err) => finish(statusCode === null ? describe(err) : null));
    req.on('response', (res) => {
      statusCode = res.statusCode ?? null;
      location = typeof res.headers.location === 'string' ? res.headers.location.slice(0, 200) : null;
      let read = 0;
      let kept = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (kept < EXCERPT_BYTES) {
          chunks.push(chunk);
          kept += chunk.length;
        }
        // Enough: drop the connection rather than drain an endless body.
        if (read >= MAX_READ_BYTES) finish(null);
      });
      res.on('end', () => finish(null, true));
      res.on('error', () => finish(null));
      res.on('close', () => finish(null));
    });
    req.end(o.body);
  });
}

/** The error text of a non-2xx answer (3xx says where it wanted us to go). */
export function failureText(result: PostResult): string | null {
  if (result.error) return result.error;
  const code = result.statusCode;
  if (code === null) return 'no response';
  if (code >= 300 && code < 400) return `redirect not followed (${code}${result.location ? ` to ${result.location}` : ''})`;
  if (code < 200 || code >= 300) return `HTTP ${code}`;
  return null;
}
