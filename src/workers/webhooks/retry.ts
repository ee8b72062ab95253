/**
 * The retry ladder (docs/api-decisions.md "Webhooks"): convention A's schedule for both
 * conventions, from configuration (default 1, 5, 15, 60, 240 minutes), each
 * delay with +-20% uniform jitter so a receiver that comes back is not hit by
 * every delayed delivery in the same second. With n delays a delivery gets
 * n + 1 attempts (the first and n retries); after the last failure it is
 * failed. A test delivery gets one attempt: it reports, it does not insist.
 * Pure: randomness arrives as an argument.
 */

export const JITTER = 0.2;

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export function maxAttempts(delaysMs: readonly number[], test = false): number {
  return test ? 1 : delaysMs.length + 1;
}

/**
 * Delay before the next attempt after `failedAttempts` attempts (1-based)
 * failed, or null when none is left. `random` in [0, 1).
 */
export function retryDelayMs(failedAttempts: number, delaysMs: readonly number[], random: () => number = Math.random): number | null {
  if (failedAttempts < 1 || failedAttempts > delaysMs.length) return null;
  const base = delaysMs[failedAttempts - 1];
  return Math.round(base * (1 - JITTER + 2 * JITTER * random()));
}

export interface Outcome {
  status: DeliveryStatus;
  /** Attempts of the current series, this one included. */
  attemptCount: number;
  /** When pending: wait this long before the next attempt. */
  delayMs: number | null;
}

/** What one attempt makes of a delivery. */
export function outcomeOf(
  previousAttempts: number,
  succeeded: boolean,
  delaysMs: readonly number[],
  options: { test?: boolean; random?: () => number } = {},
): Outcome {
  const attemptCount = previousAttempts + 1;
  if (succeeded) return { status: 'succeeded', attemptCount, delayMs: null };
  if (attemptCount >= maxAttempts(delaysMs, options.test)) return { status: 'failed', attemptCount, delayMs: null };
  return { status: 'pending', attemptCount, delayMs: retryDelayMs(attemptCount, delaysMs, options.random) };
}

/** A 2xx, and only a 2xx, is a success (a 3xx is not followed: failure). */
export function isSuccess(statusCode: number | null): boolean {
  return statusCode !== null && statusCode >= 200 && statusCode < 300;
}
