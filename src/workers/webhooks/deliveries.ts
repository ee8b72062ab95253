/**
 * Operator actions on deliveries: list, replay, and test sends.
 * - Replay keeps the delivery id and the frozen body; the senders sign it
 *   with a fresh timestamp. It starts a new attempt series (attempt_count 0,
 *   due now) whatever the status; the earlier attempts stay on record.
 *   Refused while a sender holds it (the lease): never sent twice at once.
 * - A test send is a delivery flagged `test` with a sample body, claimed by
 *   the caller at creation and attempted once, right away, in this process.
 */
import { randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { sql, type Kysely } from 'kysely';
import { DomainError } from '../../shared/errors.ts';
import { attemptDelivery, type AttemptDeps } from './attempt.ts';
import { checkId } from './endpoints.ts';
import { DELIVERIES_CHANNEL, recordAttempts, type AttemptRecord, type ClaimedDelivery } from './outbox.ts';
import { sampleEvent } from './sample.ts';
import { deliveryBody, type Convention } from './signing.ts';
import type { Database } from '../../db/schema.ts';
import { isoDateTime, isoOrNull as iso } from '../../shared/time.ts';

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

export interface DeliveryView {
  id: string;
  endpoint_id: string;
  organization_id: string;
  event_id: string;
  event_type: string;
  test: boolean;
  status: string;
  attempt_count: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  created_at: string;
  last_status_code: number | null;
  last_error: string | null;
}

function view(r: any): DeliveryView {
  return {
    ...r,
    // A leased delivery's next_attempt_at is its lease, not a scheduled retry.
    next_attempt_at: r.status === 'pending' && !r.claim_token ? iso(r.next_attempt_at) : null,
    last_attempt_at: iso(r.last_attempt_at),
    created_at: iso(r.created_at)!,
    claim_token: undefined,
  };
}

/**
 * A delivery's created_at to the microsecond, as a page's `before` names it: `created_at` is to the
 * millisecond, and the deliveries one transaction creates share their microseconds, so a cursor cut to the
 * millisecond skipped the rest of a page boundary's transaction.
 */
const CURSOR_AT = sql`, to_char(d.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_at`;

/** The deliveries' select, with `extra` columns (a leading comma each). */
const selectDeliveries = (extra = sql``) => sql`
  select d.id, d.endpoint_id, d.organization_id, d.event_id, d.event_type, d.test, d.status, d.attempt_count,
         d.next_attempt_at, d.last_attempt_at, d.created_at, d.claim_token${extra},
         a.status_code as last_status_code, a.error as last_error
  from webhook_deliveries d
  left join lateral (select status_code, error from webhook_attempts where delivery_id = d.id order by id desc limit 1) a on true`;

export async function listDeliveries(db: Kysely<Database>, organizationId: string, status?: string, limit = 100): Promise<DeliveryView[]> {
  return (await searchDeliveries(db, organizationId, { status, limit })).map(({ cursor: _cursor, ...view }) => view);
}

export interface DeliveryFilter {
  endpointId?: string;
  eventType?: string;
  status?: string;
  /** created_at bounds, inclusive (ISO datetimes). */
  from?: string;
  to?: string;
  /** Only deliveries older than this one (created_at, id): the next page of a newest-first list. */
  before?: { createdAt: string; id: string };
  limit?: number;
}

/** A delivery found by searchDeliveries, with its place for the next page's `before`. */
export type FoundDelivery = DeliveryView & { cursor: { createdAt: string; id: string } };

/** An organization's deliveries matching `f`, newest first. */
export async function searchDeliveries(db: Kysely<Database>, organizationId: string, f: DeliveryFilter): Promise<FoundDelivery[]> {
  if (f.status !== undefined && !(DELIVERY_STATUSES as readonly string[]).includes(f.status)) {
    throw new DomainError('VALIDATION_ERROR', `status "${f.status}" is not one of ${DELIVERY_STATUSES.join(', ')}`);
  }
  const org = checkId(organizationId, 'organization');
  const conditions = [sql`d.organization_id = ${org}`];
  if (f.status) conditions.push(sql`d.status = ${f.status}`);
  if (f.endpointId) conditions.push(sql`d.endpoint_id = ${checkId(f.endpointId, 'endpoint')}`);
  if (f.eventType) conditions.push(sql`d.event_type = ${f.eventType}`);
  if (f.from) conditions.push(sql`d.created_at >= ${f.from}::timestamptz`);
  if (f.to) conditions.push(sql`d.created_at <= ${f.to}::timestamptz`);
  if (f.before) conditions.push(sql`(d.created_at, d.id) < (${f.before.createdAt}::timestamptz, ${checkId(f.before.id, 'delivery')})`);
  const { rows } = await sql<any>`${selectDeliveries(CURSOR_AT)}
    where ${sql.join(conditions, sql` and `)}
    order by d.created_at desc, d.id desc limit ${f.limit ?? 100}`.execute(db);
  return rows.map(({ cursor_at, ...r }) => ({ ...view(r), cursor: { createdAt: cursor_at as string, id: r.id as string } }));
}

/** A cursor's instant as CURSOR_AT writes it, and one PostgreSQL reads (a real day, a year from 1). */
export function isCursorInstant(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/.test(value) || value.startsWith('0000')) return false;
  const parsed = new Date(`${value.slice(0, 23)}Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 19) === value.slice(0, 19);
}

export interface AttemptView {
  attempt_number: number;
  attempted_at: string;
  status_code: number | null;
  duration_ms: number;
  response_excerpt: string | null;
  error: string | null;
}

/** Every attempt of a delivery, every series (replays) included, oldest first. */
export async function listAttempts(db: Kysely<Database>, deliveryId: string): Promise<AttemptView[]> {
  const rows = await db
    .selectFrom('webhook_attempts')
    .select(['attempt_number', 'attempted_at', 'status_code', 'duration_ms', 'response_excerpt', 'error'])
    .where('delivery_id', '=', checkId(deliveryId, 'delivery'))
    .orderBy('attempted_at')
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ ...r, attempted_at: isoDateTime(r.attempted_at) }) as AttemptView);
}

export async function getDelivery(db: Kysely<Database>, id: string): Promise<DeliveryView> {
  const { rows } = await sql`${selectDeliveries()} where d.id = ${checkId(id, 'delivery')}`.execute(db);
  if (rows.length === 0) throw new DomainError('NOT_FOUND', `delivery ${id} not found`);
  return view(rows[0]);
}

export async function replayDelivery(db: Kysely<Database>, id: string): Promise<DeliveryView> {
  const deliveryId = checkId(id, 'delivery');
  const replayed = await db.transaction().execute(async (trx) => {
    const { rows } = await sql`
      update webhook_deliveries set status = 'pending', attempt_count = 0, next_attempt_at = now(), claim_token = null, updated_at = now()
      where id = ${deliveryId} and (claim_token is null or next_attempt_at <= now())
      returning id`.execute(trx);
    if (rows.length > 0) await sql`select pg_notify(${DELIVERIES_CHANNEL}, '')`.execute(trx);
    return rows.length > 0;
  });
  if (!replayed) {
    await getDelivery(db, deliveryId); // NOT_FOUND when absent
    throw new DomainError('INVALID_STATE', `delivery ${deliveryId} is being sent right now; replay it once this attempt is over`);
  }
  return getDelivery(db, deliveryId);
}

/** Sends a sample event of `eventName` to one endpoint now; returns the delivery and its attempt. */
export async function sendTestEvent(
  db: Kysely<Database>,
  endpointId: string,
  eventName: string,
  deps: AttemptDeps,
): Promise<{ delivery: DeliveryView; attempt: AttemptRecord }> {
  const id = checkId(endpointId, 'endpoint');
  const endpoint = await db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
  if (!endpoint) throw new DomainError('NOT_FOUND', `endpoint ${endpointId} not found`);
  const org = await db.selectFrom('organizations').select('archived').where('id', '=', endpoint.organization_id).executeTakeFirst();
  if (org?.archived) throw new DomainError('INVALID_STATE', `organization ${endpoint.organization_id} is archived: its webhooks wait until it is restored`);
  const event = sampleEvent(eventName, endpoint.organization_id);
  const claimed: ClaimedDelivery = {
    id: uuidv7(),
    endpoint_id: id,
    organization_id: endpoint.organization_id,
    event_type: event.name,
    body: deliveryBody(endpoint.convention as Convention, event),
    attempt_count: 0,
    test: true,
    url: endpoint.url,
    secret: endpoint.secret,
    convention: endpoint.convention,
    claim_token: randomUUID(),
  };
  // Inserted already claimed (lease = timeout + 1 min), so no sender takes it meanwhile.
  await sql`
    insert into webhook_deliveries (id, endpoint_id, organization_id, event_id, event_type, body, test, next_attempt_at, claim_token)
    values (${claimed.id}, ${id}, ${claimed.organization_id}, ${event.id}, ${event.name}, ${claimed.body}, true,
            now() + ${deps.timeoutMs + 60_000} * interval '1 millisecond', ${claimed.claim_token})`.execute(db);
  const attempt = await attemptDelivery(claimed, deps);
  await recordAttempts(db, [attempt]);
  return { delivery: await getDelivery(db, claimed.id), attempt };
}
