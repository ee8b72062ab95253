/**
 * Reads of the recurring-schedule read models (every GET and list, the
 * answers of writes, the scheduler's due list, the organization's quota
 * figures). Every query is scoped by organization: another organization's
 * schedule is simply not found.
 */
import { sql, type Kysely } from 'kysely';
import type { Frequency } from '../commands/schedule/calendar.ts';
import { upcomingRunDates } from '../commands/schedule/calendar.ts';
import type { SchedulePublic, ScheduleStatus } from '../commands/schedule/events.ts';
import type { Database } from '../db/schema.ts';
import type { RecurringSchedulesTable, ScheduleRunsTable } from '../db/tables/schedules.ts';
import { containsPattern } from '../shared/search.ts';

/** Shown on single reads: the next run dates if every run succeeds. */
export const UPCOMING_RUN_DATES = 5;
export const HISTORY_DEFAULT = 20;

export interface HistoryEntry {
  id: string;
  run_date: string;
  invoice_id: string | null;
  invoice_number: string | null;
  status: 'success' | 'failed';
  error: { code: string; message: string } | null;
  created_at: string;
}

export interface ScheduleView extends SchedulePublic {
  upcoming_run_dates: string[];
  history: HistoryEntry[];
}

const iso = (value: Date | string) => (value instanceof Date ? value : new Date(value)).toISOString();
const json = <T>(value: T | string): T => (typeof value === 'string' ? (JSON.parse(value) as T) : value);

/** A recurring_schedules row as the docs/recurring.md representation. */
export function toSchedule(row: RecurringSchedulesTable): SchedulePublic {
  return {
    id: row.id,
    name: row.name,
    customer_id: row.customer_id,
    frequency: row.frequency as Frequency,
    interval_count: row.interval_count,
    day_of_month: row.day_of_month,
    day_of_week: row.day_of_week,
    start_date: row.start_date,
    end_date: row.end_date,
    max_occurrences: row.max_occurrences,
    occurrences: row.occurrences,
    next_run_date: row.next_run_date,
    auto_finalize: row.auto_finalize,
    auto_send: row.auto_send,
    days_until_due: row.days_until_due,
    currency: row.currency,
    // jsonb does not keep key order: restore the documented one
    items: json(row.items).map(({ description, quantity, unit_price, tax_rate }) => ({ description, quantity, unit_price, tax_rate })),
    status: row.status as ScheduleStatus,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    version: row.version,
  };
}

/** The next run dates of an active schedule (none for the others: they do not run). */
export function upcomingOf(row: RecurringSchedulesTable, n = UPCOMING_RUN_DATES): string[] {
  if (row.status !== 'active') return [];
  return upcomingRunDates({ ...row, frequency: row.frequency as Frequency }, n);
}

function toHistoryEntry(row: ScheduleRunsTable): HistoryEntry {
  return {
    id: row.id,
    run_date: row.run_date,
    invoice_id: row.invoice_id,
    invoice_number: row.invoice_number,
    status: row.status as HistoryEntry['status'],
    error: row.error_code ? { code: row.error_code, message: row.error_message ?? '' } : null,
    created_at: iso(row.created_at),
  };
}

/**
 * The schedule's runs, latest occurrence first. A run's invoice_number is its invoice's as it is now: a draft
 * the run left is numbered when someone finalizes it, and the history says so (the run's own number, recorded
 * when the scheduler finalized it, stands while the invoices read model has not caught up).
 */
export async function scheduleHistory(db: Kysely<Database>, organizationId: string, scheduleId: string, limit = HISTORY_DEFAULT): Promise<HistoryEntry[]> {
  const rows = await db
    .selectFrom('schedule_runs as r')
    .leftJoin('invoices as i', (join) => join.onRef('i.id', '=', 'r.invoice_id').onRef('i.organization_id', '=', 'r.organization_id'))
    .selectAll('r')
    .select(sql<string | null>`coalesce(i.invoice_number, r.invoice_number)`.as('current_number'))
    .where('r.schedule_id', '=', scheduleId)
    .where('r.organization_id', '=', organizationId)
    .orderBy('r.seq', 'desc')
    .limit(limit)
    .execute();
  return rows.map(({ current_number, ...row }) => ({ ...toHistoryEntry(row), invoice_number: current_number }));
}

export async function findScheduleRow(db: Kysely<Database>, organizationId: string, scheduleId: string): Promise<RecurringSchedulesTable | null> {
  const row = await db.selectFrom('recurring_schedules').selectAll().where('id', '=', scheduleId).executeTakeFirst();
  return row && row.organization_id === organizationId ? row : null;
}

/** A single read: the schedule, its next run dates and its latest 20 runs. */
export async function getSchedule(db: Kysely<Database>, organizationId: string, scheduleId: string): Promise<ScheduleView | null> {
  const row = await findScheduleRow(db, organizationId, scheduleId);
  if (!row) return null;
  const history = await scheduleHistory(db, organizationId, scheduleId);
  return { ...toSchedule(row), upcoming_run_dates: upcomingOf(row), history };
}

export interface ScheduleListQuery {
  page: number;
  per_page: number;
  order: 'asc' | 'desc';
  status?: ScheduleStatus;
  customer_id?: string;
  frequency?: Frequency;
  /** Case- and accent-insensitive substring of the schedule's name or its customer's name. */
  search?: string;
}

export async function listSchedules(db: Kysely<Database>, organizationId: string, q: ScheduleListQuery): Promise<{ data: SchedulePublic[]; total: number }> {
  const pattern = containsPattern(q.search);
  const filtered = (executor: Kysely<Database>) => {
    let query = executor.selectFrom('recurring_schedules').where('organization_id', '=', organizationId);
    if (q.status) query = query.where('status', '=', q.status);
    if (q.customer_id) query = query.where('customer_id', '=', q.customer_id.toLowerCase());
    if (q.frequency) query = query.where('frequency', '=', q.frequency);
    if (pattern) query = query.where((eb) => eb.or([eb('name_search', 'like', pattern), eb('customer_search', 'like', pattern)]));
    return query;
  };
  // Both statements on one snapshot, so `total` counts exactly the rows being paged.
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const { total } = await filtered(trx).select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow();
      const rows = await filtered(trx)
        .selectAll()
        .orderBy('created_at', q.order)
        .orderBy('id', q.order)
        .limit(q.per_page)
        .offset((q.page - 1) * q.per_page)
        .execute();
      return { data: rows.map(toSchedule), total: Number(total) };
    });
}

/** Active and paused schedules per organization (the quota's count, docs/recurring.md). */
export async function countQuotaSchedules(db: Kysely<Database>, organizationIds: string[]): Promise<Map<string, number>> {
  if (organizationIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('recurring_schedules')
    .select(['organization_id', (eb) => eb.fn.countAll<string>().as('n')])
    .where('organization_id', 'in', organizationIds)
    .where('status', 'in', ['active', 'paused'])
    .groupBy('organization_id')
    .execute();
  return new Map(rows.map((r) => [r.organization_id, Number(r.n)]));
}

/**
 * The organization's active and paused schedules, and how many of them hold a quota slot above `quota`: a
 * plan downgrade leaves those where they were (creates then keep to the slots below; docs/recurring.md "Quota").
 */
export async function quotaUse(db: Kysely<Database>, organizationId: string, quota: number): Promise<{ used: number; above: number }> {
  const { rows } = await sql<{ used: number; above: number }>`
    select count(*)::int as used, (count(*) filter (where quota_slot > ${quota}))::int as above
      from recurring_schedules where organization_id = ${organizationId} and status in ('active', 'paused')`.execute(db);
  return { used: rows[0]?.used ?? 0, above: rows[0]?.above ?? 0 };
}

/** The organization's plan (for its schedule quota). */
export async function planOf(db: Kysely<Database>, organizationId: string): Promise<string | null> {
  const { rows } = await sql<{ plan: string }>`
    select a.plan from organizations o join accounts a on a.id = o.account_id where o.id = ${organizationId}`.execute(db);
  return rows[0]?.plan ?? null;
}

export interface DueSchedule {
  id: string;
  organization_id: string;
  seq: number;
  next_run_date: string;
}

/**
 * Active schedules whose next run is due by `today`, oldest run first, of
 * organizations that are not archived (their schedules wait for the restore)
 * and with no reaction pending for their organization or customer.
 */
export async function dueSchedules(db: Kysely<Database>, today: string, limit: number, after?: { next_run_date: string; id: string }): Promise<DueSchedule[]> {
  let query = db
    .selectFrom('recurring_schedules as s')
    .innerJoin('organizations as o', 'o.id', 's.organization_id')
    .select(['s.id', 's.organization_id', 's.seq', 's.next_run_date'])
    .where('s.status', '=', 'active')
    .where('s.next_run_date', '<=', today)
    .where('o.archived', '=', false)
    // A restore or a customer's archiving not yet reacted to (src/workers/schedule-reactions.ts): wait for the reaction.
    .where(({ not, exists }) => not(exists(sql`(select 1 from schedule_reactions r where r.subject_id in (s.organization_id, s.customer_id))`)));
  if (after) query = query.where((eb) => eb.or([eb('s.next_run_date', '>', after.next_run_date), eb.and([eb('s.next_run_date', '=', after.next_run_date), eb('s.id', '>', after.id)])]));
  const rows = await query.orderBy('s.next_run_date').orderBy('s.id').limit(limit).execute();
  return rows as DueSchedule[];
}

/** Active schedules of one organization (its restore skips their frozen runs). */
export async function activeScheduleIds(db: Kysely<Database>, organizationId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('recurring_schedules')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('status', '=', 'active')
    .execute();
  return rows.map((r) => r.id);
}

/** Active and paused schedules of one customer (its archiving cancels them). */
export async function liveScheduleIdsOfCustomer(db: Kysely<Database>, organizationId: string, customerId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('recurring_schedules')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('customer_id', '=', customerId)
    .where('status', 'in', ['active', 'paused'])
    .execute();
  return rows.map((r) => r.id);
}
