/**
 * One attempt of one claimed delivery: sign with a fresh timestamp, post,
 * judge the answer, decide the delivery's next state. Shared by the senders
 * and `webhook test` (which sends immediately, in the CLI process).
 */
import type http from 'node:http';
import type https from 'node:https';
import type { ClaimedDelivery, AttemptRecord } from './outbox.ts';
import { failureText, postWebhook } from './post.ts';
import { isSuccess, outcomeOf } from './retry.ts';
import type { SecretCache } from './secrets.ts';
import { signedHeaders } from './signing.ts';

export interface AttemptDeps {
  retryDelaysMs: readonly number[];
  timeoutMs: number;
  allowInsecure: boolean;
  agents: { http: http.Agent; https: https.Agent };
  secrets: SecretCache;
  random?: () => number;
}

export const DEFAULT_TIMEOUT_MS = 30_000;


export async function attemptDelivery(d: ClaimedDelivery, deps: AttemptDeps, signal?: AbortSignal): Promise<AttemptRecord> {
  const attemptedAt = new Date();
  let secret: string;
  try {
    secret = deps.secrets.open(d.secret);
  } catch (err) {
    // A missing WEBHOOK_SECRET_KEY is a failed attempt, not a crashed sender.
    return record(d, deps, attemptedAt, 0, { statusCode: null, durationMs: 0, excerpt: null, error: (err as Error).message });
  }
  const body = Buffer.from(d.body, 'utf8');
  const { headers, timestamp } = signedHeaders({
    convention: d.convention,
    secret,
    body,
    eventName: d.event_type,
    deliveryId: d.id,
    nowMs: attemptedAt.getTime(),
    test: d.test,
  });
  const result = await postWebhook({ url: d.url, headers, body, timeoutMs: deps.timeoutMs, allowInsecure: deps.allowInsecure, agents: deps.agents, signal });
  return record(d, deps, attemptedAt, timestamp, { ...result, error: isSuccess(result.statusCode) ? null : failureText(result) });
}

function record(
  d: ClaimedDelivery,
  deps: AttemptDeps,
  attemptedAt: Date,
  signatureTimestamp: number,
  r: { statusCode: number | null; durationMs: number; excerpt: string | null; error: string | null },
): AttemptRecord {
  const ok = r.error === null && isSuccess(r.statusCode);
  return {
    deliveryId: d.id,
    claimToken: d.claim_token,
    attemptedAt,
    signatureTimestamp,
    statusCode: r.statusCode,
    durationMs: r.durationMs,
    excerpt: r.excerpt,
    error: r.error,
    outcome: outcomeOf(d.attempt_count, ok, deps.retryDelaysMs, { test: d.test, random: deps.random }),
  };
}
