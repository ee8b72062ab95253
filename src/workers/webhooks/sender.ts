/**
 * A webhook sender: claims due deliveries (outbox.ts) on its own connection,
 * ahead of need (slots.ts), posts them with up to `concurrency` requests in
 * flight, and writes the attempts back in batches (one statement for every
 * attempt that finished meanwhile: at 1,000 deliveries a second, a commit per
 * attempt would be the bottleneck).
 * - No endpoint gets more than `perEndpoint` requests in flight, so a slow or
 *   dead receiver holds its share and everyone else keeps flowing; the log
 *   never waits for senders at all (deliveries are rows).
 * - Woken by pg_notify on new or replayed deliveries and by its own finished
 *   attempts; otherwise it sleeps until the next retry is due (database
 *   clock), at most `pollMs` (the fallback for lost notifications and for
 *   organizations being restored).
 * - Stopping: no new claims, in-flight requests get `stopGraceMs`, the rest
 *   are aborted and handed back untried (due at once, for another sender).
 */
import { webhookAttempts } from '../../shared/metrics.ts';
import type { Kysely } from 'kysely';
import { Notifier } from '../../eventstore/notifier.ts';
import { Alarm } from '../../shared/alarm.ts';
import type { Logger } from '../../shared/logger.ts';
import { guardedLookup, type Resolver } from './address-guard.ts';
import { attemptDelivery, DEFAULT_TIMEOUT_MS, type AttemptDeps } from './attempt.ts';
import { claimConnection, claimDue, DELIVERIES_CHANNEL, msUntilNextDue, recordAttempts, releaseClaims, type AttemptRecord, type ClaimedDelivery } from './outbox.ts';
import { createAgents } from './post.ts';
import { SecretCache } from './secrets.ts';
import { Slots } from './slots.ts';
import type { Database } from '../../db/schema.ts';

export interface SenderOptions {
  db: Kysely<Database>;
  /** Database URL, for the LISTEN connection. */
  url: string;
  logger: Logger;
  retryDelaysMs: readonly number[];
  allowInsecure: boolean;
  timeoutMs?: number;
  concurrency?: number;
  perEndpoint?: number;
  pollMs?: number;
  stopGraceMs?: number;
  /** DNS for the address guard (tests inject one). */
  resolve?: Resolver;
  random?: () => number;
}

export class WebhookSender {
  private readonly deps: AttemptDeps;
  private readonly notifier: Notifier;
  private readonly claims: Kysely<Database>;
  private readonly slots: Slots;
  private readonly flights = new Map<string, { promise: Promise<void>; abort: AbortController }>();
  private records: AttemptRecord[] = [];
  private releases: { id: string; token: string }[] = [];
  private flushing: Promise<void> | null = null;
  private loop: Promise<void> | null = null;
  private unlisten: (() => void) | null = null;
  private stopped = false;
  private dirty = false;
  /** When the latest claim pass that left nothing claimable began (ms since epoch): tests wait for it instead of sleeping. */
  drainedAt = 0;
  private readonly alarm = new Alarm();
  private readonly claimBatch: number;
  private readonly leaseMs: number;

  constructor(private readonly o: SenderOptions) {
    const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const concurrency = o.concurrency ?? 32;
    this.slots = new Slots(concurrency, Math.min(o.perEndpoint ?? 8, concurrency));
    this.claimBatch = Math.max(1, Math.floor(concurrency / 4));
    // A queued delivery may wait for one attempt ahead of it before its own.
    this.leaseMs = 2 * timeoutMs + 60_000;
    this.deps = {
      retryDelaysMs: o.retryDelaysMs,
      timeoutMs,
      allowInsecure: o.allowInsecure,
      agents: createAgents(o.allowInsecure ? undefined : guardedLookup(o.resolve)),
      secrets: new SecretCache(),
      random: o.random,
    };
    this.notifier = new Notifier(o.url, DELIVERIES_CHANNEL);
    this.claims = claimConnection(o.url);
  }

  start(): void {
    this.unlisten = this.notifier.subscribe(() => this.signal());
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.signal();
    await this.loop;
    this.releases.push(...this.slots.drainQueue().map((d) => ({ id: d.id, token: d.claim_token })));
    const grace = new Promise((r) => setTimeout(r, this.o.stopGraceMs ?? 5000).unref());
    await Promise.race([Promise.all([...this.flights.values()].map((f) => f.promise)), grace]);
    for (const f of this.flights.values()) f.abort.abort();
    await Promise.all([...this.flights.values()].map((f) => f.promise));
    for (let i = 0; i < 3 && (this.flushing || this.records.length > 0 || this.releases.length > 0); i++) await this.flush();
    this.unlisten?.();
    await this.notifier.close();
    await this.claims.destroy();
    this.deps.agents.http.destroy();
    this.deps.agents.https.destroy();
  }

  /** Something changed (notification, a free slot, a finished batch): look again. */
  private signal(): void {
    this.dirty = true;
    this.alarm.wake();
  }

  private sleep(ms: number): Promise<void> {
    return this.dirty || this.stopped ? Promise.resolve() : this.alarm.sleep(ms);
  }

  private fullEndpoints(): string[] {
    return [...this.slots.holdings].filter(([, n]) => n >= this.slots.share).map(([id]) => id);
  }

  private async run(): Promise<void> {
    const pollMs = this.o.pollMs ?? 1000;
    while (!this.stopped) {
      this.dirty = false;
      let waitMs = pollMs;
      try {
        let drained = false;
        const passStartedAt = Date.now();
        // Holding some: claim once a quarter of the room is free, not per finished attempt.
        const min = () => (this.slots.active + this.slots.queued > 0 ? this.claimBatch : 1);
        while (!this.stopped && this.slots.room() >= min()) {
          const limit = this.slots.room();
          const fullBefore = this.fullEndpoints().length;
          const batch = await claimDue(this.claims, { limit, perEndpoint: this.slots.share, busy: this.slots.holdings, leaseMs: this.leaseMs });
          if (this.stopped) this.releases.push(...batch.map((d) => ({ id: d.id, token: d.claim_token })));
          else this.slots.add(batch);
          this.launchReady();
          // Short because an endpoint reached its share: others may be due, ask again without it.
          if (batch.length < limit && this.fullEndpoints().length === fullBefore) {
            drained = true;
            break;
          }
        }
        if (drained && !this.stopped) {
          this.drainedAt = passStartedAt;
          const ms = await msUntilNextDue(this.claims, this.fullEndpoints());
          // Due but not claimable right now (another sender's claim in progress): look again soon.
          if (ms !== null) waitMs = Math.min(Math.max(ms, 20), pollMs);
        }
      } catch (err) {
        this.o.logger.error({ err }, 'webhook sender: claiming failed');
        waitMs = 1000;
      }
      await this.sleep(waitMs);
    }
  }

  private launchReady(): void {
    for (let d = this.stopped ? null : this.slots.next(); d; d = this.slots.next()) this.launch(d);
  }

  private launch(d: ClaimedDelivery): void {
    const abort = new AbortController();
    const promise = attemptDelivery(d, this.deps, abort.signal)
      .then((record) => {
        if (abort.signal.aborted) return void this.releases.push({ id: d.id, token: d.claim_token });
        this.log(d, record);
        this.records.push(record);
      })
      .catch((err) => {
        this.o.logger.error({ err, delivery_id: d.id }, 'webhook sender: attempt crashed');
        this.releases.push({ id: d.id, token: d.claim_token });
      })
      .finally(() => {
        this.flights.delete(d.id);
        this.slots.done(d);
        this.launchReady();
        void this.flush();
        this.signal();
      });
    this.flights.set(d.id, { promise, abort });
  }

  private log(d: ClaimedDelivery, r: AttemptRecord): void {
    // Ids only: URLs can carry receivers' tokens, and secrets never leave outbox rows.
    const fields = { delivery_id: d.id, endpoint_id: d.endpoint_id, event: d.event_type, attempt: r.outcome.attemptCount, status_code: r.statusCode, duration_ms: r.durationMs, outcome: r.outcome.status, error: r.error };
    webhookAttempts.inc({ outcome: r.outcome.status === 'pending' ? 'retrying' : r.outcome.status });
    if (r.outcome.status === 'failed') this.o.logger.warn(fields, 'webhook delivery failed for good');
    else this.o.logger.debug(fields, 'webhook attempt');
  }

  /** Writes every finished attempt; one flush at a time, the next takes what queued meanwhile. */
  private flush(): Promise<void> {
    this.flushing ??= (async () => {
      let failures = 0;
      while (this.records.length > 0 || this.releases.length > 0) {
        const records = this.records.splice(0, 1000);
        const releases = this.releases.splice(0, 1000);
        try {
          await recordAttempts(this.o.db, records);
          await releaseClaims(this.o.db, releases);
          failures = 0;
        } catch (err) {
          this.o.logger.error({ err }, 'webhook sender: recording attempts failed');
          // Stopping with the database gone: the leases expire and another sender retries.
          if (this.stopped && ++failures >= 3) return;
          this.records.unshift(...records);
          this.releases.unshift(...releases);
          await new Promise((r) => setTimeout(r, 1000));
        }
      }
    })().finally(() => {
      this.flushing = null;
      // An attempt may have finished between the loop's last look and now.
      if (!this.stopped && (this.records.length > 0 || this.releases.length > 0)) void this.flush();
      this.signal();
    });
    return this.flushing;
  }
}
