/**
 * The webhook subscriber: a checkpointed log consumer (run by a
 * ProjectionRunner, so one active instance and exactly-once batches) that
 * turns each published event into one delivery row per subscribed, enabled
 * endpoint of the event's organization, in its checkpoint's transaction.
 * It does no I/O beyond that insert: a slow receiver can never hold the log.
 * Not in src/projections/index.ts: writes must not wait for it.
 *
 * - Published: the nine invoice.* and customer.* events (public-event-names);
 *   the body (convention A or B) is frozen here, with the snapshot as of the
 *   event, so retries and replays send the very same bytes.
 * - An endpoint gets the events that happen after it was configured (event
 *   time >= endpoint created_at, compared at the millisecond the event time has): a subscriber catching up after downtime
 *   does not flood a new endpoint with history.
 * - unique (event_id, endpoint_id) + on conflict do nothing: a batch handled
 *   twice (or a checkpoint moved back) creates nothing new.
 * - pg_notify in the same transaction wakes the senders when it commits.
 * - A batch whose organizations have no enabled endpoint opens no
 *   transaction (`relevant`: one read instead of a transaction of three round
 *   trips after every write of such an organization; the runner then stores
 *   its checkpoint lazily). An organization found with an endpoint is
 *   remembered for a minute, so a busy subscribed organization pays no
 *   read; one found without is asked again at its next batch. An endpoint
 *   whose creation commits after that read gets none of the batch's events
 *   (as before this read, one committing after the subscriber's insert got
 *   none: the window now opens at the read instead of the insert).
 * - That read is asked at most once every QUESTION_EVERY_MS: a batch that
 *   needs it sooner waits for the rest of the interval, and the events
 *   written meanwhile come in the next batch, with one read for all. Lone
 *   writes of organizations without webhooks (one batch each) otherwise pay
 *   a read each after their answer, beside the next request: measured, a
 *   lone create's p50 fell by about a tenth without it (docs/performance.md
 *   "The webhook subscriber's read, at most every 25 ms"). A read that
 *   comes later only opens the window later, so no endpoint gets fewer
 *   events; an isolated write does not wait (the last read is old).
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import { PUBLIC_EVENT_NAMES, toPublicEvent } from '../../commands/public-event-names.ts';
import type { RecordedEvent } from '../../eventstore/types.ts';
import type { Projector } from '../../projections/projector.ts';
import { isUuid } from '../../shared/ids.ts';
import { DELIVERIES_CHANNEL } from './outbox.ts';
import { deliveryBody, type PublishedEvent } from './signing.ts';
import type { Database } from '../../db/schema.ts';

export const SUBSCRIBER_NAME = 'webhooks';

/** The published form of a recorded event, or null (internal, or no organization). */
export function publishedEvent(e: RecordedEvent): PublishedEvent | null {
  const pub = toPublicEvent(e.type, e.data);
  const org = e.metadata?.organization_id;
  if (!pub || typeof org !== 'string' || !isUuid(org) || !isUuid(e.id)) return null;
  const createdAt = typeof e.metadata.occurred_at === 'string' ? e.metadata.occurred_at : e.created_at.toISOString();
  return { id: e.id, name: pub.name, organizationId: org, createdAt, data: pub.data };
}

/** The subscriber's read of which organizations have an enabled endpoint, at most this often (the module's comment). */
export const QUESTION_EVERY_MS = 25;
/** How long an organization seen with an enabled endpoint is trusted to have one, and how many are remembered. */
const SUBSCRIBED_FOR_MS = 60_000;
const SUBSCRIBED_MAX = 10_000;

/** The subscriber's clock: what its reads are spaced by (a test's own clock makes the spacing observable without timing it). */
export interface SubscriberClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

// Monotonic: a wall clock stepped back (NTP, a resumed VM) would make the next read wait as long.
const realClock: SubscriberClock = { now: () => performance.now(), sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) };

/**
 * Which of a batch's organizations have an enabled endpoint: those seen with one lately, else one read, at most
 * every `everyMs` (its runner asks one batch at a time). One per subscriber.
 */
class EndpointQuestion {
  /** Organizations last seen with an enabled endpoint, and until when that is trusted (bounded: see remember). */
  private readonly subscribed = new Map<string, number>();
  private lastRead = -Infinity;
  constructor(private readonly clock: SubscriberClock, private readonly everyMs: number) {}

  /** The published events whose organization has an enabled endpoint. */
  async relevant(events: RecordedEvent[], db: Kysely<Database>): Promise<RecordedEvent[]> {
    const published = events.flatMap((e) => {
      const pub = publishedEvent(e);
      // Lower case, as PostgreSQL prints a uuid (an organization id written in capitals is the same organization).
      return pub ? [{ e, org: pub.organizationId.toLowerCase() }] : [];
    });
    // Decided from this set, not from the map, which remember() may empty.
    const withEndpoints = new Set<string>();
    const unknown: string[] = [];
    for (const org of new Set(published.map((p) => p.org))) {
      if ((this.subscribed.get(org) ?? -Infinity) > this.clock.now()) withEndpoints.add(org);
      else unknown.push(org);
    }
    if (unknown.length > 0) {
      const wait = this.lastRead + this.everyMs - this.clock.now();
      if (wait > 0) await this.clock.sleep(wait);
      this.lastRead = this.clock.now();
      const { rows } = await sql<{ organization_id: string }>`
        select distinct organization_id from webhook_endpoints where organization_id = any(${unknown}::uuid[]) and enabled`.execute(db);
      for (const r of rows) withEndpoints.add(r.organization_id);
      this.remember(rows.map((r) => r.organization_id), this.lastRead);
    }
    return published.filter((p) => withEndpoints.has(p.org)).map((p) => p.e);
  }

  private remember(organizationIds: string[], now: number): void {
    if (this.subscribed.size + organizationIds.length > SUBSCRIBED_MAX) {
      for (const [org, until] of this.subscribed) if (until <= now) this.subscribed.delete(org);
      if (this.subscribed.size + organizationIds.length > SUBSCRIBED_MAX) this.subscribed.clear();
    }
    for (const org of organizationIds) this.subscribed.set(org, now + SUBSCRIBED_FOR_MS);
  }
}

/** A subscriber (the module's comment), one per runner; `clock` and `questionEveryMs` for tests. */
export function createWebhookSubscriber(clock: SubscriberClock = realClock, questionEveryMs = QUESTION_EVERY_MS): Projector {
  const question = new EndpointQuestion(clock, questionEveryMs);
  return { ...subscriber, relevant: (events, db) => question.relevant(events, db) };
}

const subscriber: Projector = {
  name: SUBSCRIBER_NAME,
  handles: Object.keys(PUBLIC_EVENT_NAMES),
  // Not a read model: nothing for a rebuild to copy.
  tables: [],
  async apply(events: RecordedEvent[], trx: Transaction<Database>): Promise<void> {
    const rows = events.flatMap((e) => {
      const pub = publishedEvent(e);
      return pub ? [{ pub, at: e.created_at }] : [];
    });
    if (rows.length === 0) return;
    const { numAffectedRows } = await sql`
      insert into webhook_deliveries (id, endpoint_id, organization_id, event_id, event_type, body, next_attempt_at)
      -- Log order as due order (1 µs apart), so senders take a backlog oldest event first.
      select invoicing_uuid_v7(), e.id, x.org, x.event_id, x.name, case e.convention when 'A' then x.body_a else x.body_b end,
             now() + x.n * interval '1 microsecond'
      from unnest(${rows.map((r) => r.pub.organizationId)}::uuid[], ${rows.map((r) => r.pub.id)}::uuid[],
                  ${rows.map((r) => r.pub.name)}::text[], ${rows.map((r) => deliveryBody('A', r.pub))}::text[],
                  ${rows.map((r) => deliveryBody('B', r.pub))}::text[], ${rows.map((r) => r.at.toISOString())}::timestamptz[])
           with ordinality as x(org, event_id, name, body_a, body_b, at, n)
      join webhook_endpoints e on e.organization_id = x.org and e.enabled and x.name = any(e.events) and date_trunc('milliseconds', e.created_at) <= x.at
      order by x.n, e.created_at
      on conflict (event_id, endpoint_id) do nothing`.execute(trx);
    if (numAffectedRows && numAffectedRows > 0n) await sql`select pg_notify(${DELIVERIES_CHANNEL}, '')`.execute(trx);
  },
};
