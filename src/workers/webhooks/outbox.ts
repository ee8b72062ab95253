/**
 * The senders' SQL over webhook_deliveries (the outbox).
 * Claiming is one statement: pick due pending rows FOR UPDATE SKIP LOCKED and
 * move their next_attempt_at forward by a lease, tagged with a claim token.
 * The send happens outside any transaction; its result is written back only
 * where the token still matches, so a sender whose lease ran out (crash,
 * stall) never overwrites the newer attempt. Any number of processes can
 * claim at once; a delivery is never in two senders' hands at the same time.
 * Not claimed: deliveries of an archived organization (organizations read
 * model) or a disabled endpoint. They wait, uncounted, and flow once
 * restored; the same filter keeps minDueAt from spinning on them.
 */
import { randomUUID } from 'node:crypto';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { guardPool } from '../../db/connection.ts';
import type { Outcome } from './retry.ts';
import type { Convention } from './signing.ts';
import type { Database } from '../../db/schema.ts';

export const DELIVERIES_CHANNEL = 'webhook_deliveries';

export interface ClaimedDelivery {
  id: string;
  endpoint_id: string;
  organization_id: string;
  event_type: string;
  body: string;
  attempt_count: number;
  test: boolean;
  url: string;
  /** Sealed (see secrets.ts). */
  secret: string;
  convention: Convention;
  claim_token: string;
}

export interface ClaimOptions {
  limit: number;
  /** Most deliveries of one endpoint in this process's hands. */
  perEndpoint: number;
  /** Deliveries of each endpoint this process is already sending. */
  busy: ReadonlyMap<string, number>;
  leaseMs: number;
}

// Scalar subqueries, not joins: the planner keeps them as per-row checks, so
// the scan walks the partial index in due order and stops at the limit instead
// of reading every pending row and sorting (the backlog can be large).
const sendable = sql`coalesce((select e.enabled from webhook_endpoints e where e.id = d.endpoint_id), false)
  and coalesce((select not o.archived from organizations o where o.id = d.organization_id), true)`;

/**
 * A sender's own connection for claims (they run one at a time). Its session
 * turns off bitmap and sequential scans: after a burst of new deliveries the
 * statistics are stale, and the planner would read every pending row and sort
 * them (cost growing with the backlog, dead index entries never cleared)
 * instead of walking the due index in order up to the limit.
 */
export function claimConnection(url: string): Kysely<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max: 1,
    application_name: 'invoicing:webhook-sender:claims',
    options: '-c enable_bitmapscan=off -c enable_seqscan=off',
  });
  // A dropped connection (idle or mid-claim) is replaced on next use; the claim is retried.
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool: guardPool(pool) }) });
}

/**
 * Claims up to o.limit due deliveries. Run it on a claimConnection(): the
 * due scan must walk the partial index in order and stop at the limit.
 */
export async function claimDue(db: Kysely<Database>, o: ClaimOptions): Promise<ClaimedDelivery[]> {
  const full = [...o.busy].filter(([, n]) => n >= o.perEndpoint).map(([id]) => id);
  const busyIds = [...o.busy.keys()];
  const busyCounts = busyIds.map((id) => o.busy.get(id)!);
  const token = randomUUID();
  // Scan a little more than the limit: rows beyond an endpoint's share are left for later.
  const { rows } = await sql<ClaimedDelivery>`
    with due as (
      select d.id, d.endpoint_id, d.next_attempt_at from webhook_deliveries d
      where d.status = 'pending' and d.next_attempt_at <= now() and ${sendable} and d.endpoint_id <> all(${full}::uuid[])
      order by d.next_attempt_at
      limit ${o.limit * 4}
      for update of d skip locked
    ), ranked as (
      select due.id, due.next_attempt_at,
             row_number() over (partition by due.endpoint_id order by due.next_attempt_at) + coalesce(b.n, 0) as slot
      from due left join unnest(${busyIds}::uuid[], ${busyCounts}::int[]) as b(endpoint_id, n) on b.endpoint_id = due.endpoint_id
    ), chosen as (
      select id from ranked where slot <= ${o.perEndpoint} order by next_attempt_at limit ${o.limit}
    )
    update webhook_deliveries d
    set next_attempt_at = now() + ${o.leaseMs} * interval '1 millisecond', claim_token = ${token}, updated_at = now()
    from chosen c, webhook_endpoints e
    where d.id = c.id and e.id = d.endpoint_id
    returning d.id, d.endpoint_id, d.organization_id, d.event_type, d.body, d.attempt_count, d.test,
              e.url, e.secret, e.convention, d.claim_token`.execute(db);
  return rows;
}

/**
 * Milliseconds until the next delivery this process could claim is due, by
 * the database's clock (so a skewed local clock cannot matter); negative when
 * one is due already, null when none is waiting.
 */
export async function msUntilNextDue(db: Kysely<Database>, fullEndpoints: string[]): Promise<number | null> {
  const { rows } = await sql<{ ms: number }>`
    select extract(epoch from (d.next_attempt_at - now())) * 1000 as ms from webhook_deliveries d
    where d.status = 'pending' and ${sendable} and d.endpoint_id <> all(${fullEndpoints}::uuid[])
    order by d.next_attempt_at limit 1`.execute(db);
  return rows.length ? Number(rows[0].ms) : null;
}

export interface AttemptRecord {
  deliveryId: string;
  claimToken: string;
  attemptedAt: Date;
  signatureTimestamp: number;
  statusCode: number | null;
  durationMs: number;
  excerpt: string | null;
  error: string | null;
  outcome: Outcome;
}

/**
 * Writes a batch of finished attempts and their deliveries' new state: one
 * statement (one round trip, one commit) for the whole batch.
 */
export async function recordAttempts(db: Kysely<Database>, records: readonly AttemptRecord[]): Promise<void> {
  if (records.length === 0) return;
  const col = <T>(f: (r: AttemptRecord) => T) => records.map(f);
  await sql`
    with x as (
      select * from unnest(${col((r) => r.deliveryId)}::uuid[], ${col((r) => r.claimToken)}::uuid[], ${col((r) => r.outcome.status)}::text[],
        ${col((r) => r.outcome.attemptCount)}::int[], ${col((r) => r.outcome.delayMs ?? 0)}::float8[],
        ${col((r) => r.attemptedAt.toISOString())}::timestamptz[], ${col((r) => String(r.signatureTimestamp))}::bigint[],
        ${col((r) => r.statusCode)}::int[], ${col((r) => r.durationMs)}::int[], ${col((r) => r.excerpt)}::text[], ${col((r) => r.error)}::text[])
        as x(id, token, status, attempt_count, delay_ms, attempted_at, signature_timestamp, status_code, duration_ms, excerpt, error)
    ), attempts as (
      insert into webhook_attempts (delivery_id, attempt_number, attempted_at, signature_timestamp, status_code, duration_ms, response_excerpt, error)
      select id, attempt_count, attempted_at, signature_timestamp, status_code, duration_ms, excerpt, error from x
    )
    update webhook_deliveries d
    set status = x.status, attempt_count = x.attempt_count, last_attempt_at = x.attempted_at, claim_token = null, updated_at = now(),
        next_attempt_at = case when x.status = 'pending' then now() + x.delay_ms * interval '1 millisecond' end
    from x
    where d.id = x.id and d.claim_token = x.token`.execute(db);
}

/** Gives claimed deliveries back untried (a stopping sender): due at once, for anyone. */
export async function releaseClaims(db: Kysely<Database>, claims: readonly { id: string; token: string }[]): Promise<void> {
  if (claims.length === 0) return;
  await sql`
    update webhook_deliveries d set next_attempt_at = now(), claim_token = null, updated_at = now()
    from unnest(${claims.map((c) => c.id)}::uuid[], ${claims.map((c) => c.token)}::uuid[]) as x(id, token)
    where d.id = x.id and d.claim_token = x.token`.execute(db);
  await sql`select pg_notify(${DELIVERIES_CHANNEL}, '')`.execute(db);
}
