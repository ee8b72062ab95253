/**
 * What one sender holds: deliveries in flight (at most `concurrency`, at most
 * `perEndpoint` per endpoint) and a claimed-ahead queue of as many again, so
 * a finished attempt is followed by the next one at once, without waiting for
 * a database round trip, and one claim statement serves many attempts.
 * Per endpoint the sender holds at most 2 x perEndpoint (in flight + queued):
 * a slow receiver occupies its share, never the whole sender, and its queued
 * deliveries cannot starve other endpoints (the queue skips over them).
 */
import type { ClaimedDelivery } from './outbox.ts';

export class Slots {
  private readonly ready: ClaimedDelivery[] = [];
  private readonly running = new Map<string, number>();
  private readonly held = new Map<string, number>();
  private inFlight = 0;

  constructor(
    readonly concurrency: number,
    readonly perEndpoint: number,
  ) {}

  /** Deliveries held per endpoint (in flight + queued), for the claim's fair share. */
  get holdings(): ReadonlyMap<string, number> {
    return this.held;
  }

  /** The most one endpoint may hold. */
  get share(): number {
    return 2 * this.perEndpoint;
  }

  /** How many more deliveries may be claimed. */
  room(): number {
    return 2 * this.concurrency - this.inFlight - this.ready.length;
  }

  get active(): number {
    return this.inFlight;
  }

  get queued(): number {
    return this.ready.length;
  }

  add(batch: readonly ClaimedDelivery[]): void {
    for (const d of batch) {
      this.ready.push(d);
      bump(this.held, d.endpoint_id, 1);
    }
  }

  /** The next delivery to start (oldest first, skipping endpoints at their in-flight share), or null. */
  next(): ClaimedDelivery | null {
    if (this.inFlight >= this.concurrency) return null;
    const i = this.ready.findIndex((d) => (this.running.get(d.endpoint_id) ?? 0) < this.perEndpoint);
    if (i < 0) return null;
    const [d] = this.ready.splice(i, 1);
    this.inFlight++;
    bump(this.running, d.endpoint_id, 1);
    return d;
  }

  done(d: ClaimedDelivery): void {
    this.inFlight--;
    bump(this.running, d.endpoint_id, -1);
    bump(this.held, d.endpoint_id, -1);
  }

  /** Empties the queue (a stopping sender hands these back untried). */
  drainQueue(): ClaimedDelivery[] {
    const all = this.ready.splice(0);
    for (const d of all) bump(this.held, d.endpoint_id, -1);
    return all;
  }
}

function bump(map: Map<string, number>, key: string, by: number): void {
  const n = (map.get(key) ?? 0) + by;
  if (n > 0) map.set(key, n);
  else map.delete(key);
}
