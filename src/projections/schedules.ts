/**
 * recurring_schedules and schedule_runs read models. Every schedule event
 * carries the whole schedule (docs/events.md, snapshot rule) and occurrence
 * events carry their run, so applying a batch is: note each customer's
 * newest name (customer events, in schedule_customers), upsert the newest
 * snapshot per schedule, upsert the newest state per run, delete what was
 * deleted (leaving a tombstone), and give the schedules of the customers
 * concerned the newest name known, for search.
 *
 * Idempotent and order-safe: rows are only replaced by a snapshot of the
 * same or a newer version, a name only by a newer version of the customer,
 * and a deleted schedule's rows are never written again. So any stretch of
 * the log applied again (a batch delivered twice, a runner re-applying what
 * an append wrote inline), in any batching, gives the same rows (migrations
 * 0105, 0107). The customers' names are the projector's own table, not the
 * customers read model: a rebuild replays this projector alone, and must
 * find the names as they were at each point of the log.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import { CUSTOMER_EVENT_TYPES, type Customer } from '../commands/customer/events.ts';
import { SCHEDULE_EVENT_TYPES, type Schedule, type ScheduleEvent, type ScheduleRun } from '../commands/schedule/events.ts';
import type { RecordedEvent } from '../eventstore/types.ts';
import { foldForSearch } from '../shared/search.ts';
import { sqlLiteral } from '../eventstore/sql-literal.ts';
import type { Projector } from './projector.ts';
import type { Database } from '../db/schema.ts';
import type { RecurringSchedulesTable, ScheduleCustomersTable, ScheduleRunsTable } from '../db/tables/schedules.ts';

function scheduleRow(organizationId: string, s: Schedule, customerName: string): RecurringSchedulesTable {
  return {
    id: s.id,
    organization_id: organizationId,
    name: s.name,
    customer_id: s.customer_id,
    customer_name: customerName,
    customer_version: null, // set with the newest name known, after the upsert (apply())
    frequency: s.frequency,
    interval_count: s.interval_count,
    day_of_month: s.day_of_month,
    day_of_week: s.day_of_week,
    start_date: s.start_date,
    end_date: s.end_date,
    max_occurrences: s.max_occurrences,
    occurrences: s.occurrences,
    next_run_date: s.next_run_date,
    auto_finalize: s.auto_finalize,
    auto_send: s.auto_send,
    days_until_due: s.days_until_due,
    currency: s.currency,
    items: JSON.stringify(s.items),
    status: s.status,
    anchor_date: s.anchor_date,
    anchor_seq: s.anchor_seq,
    seq: s.seq,
    quota_slot: s.quota_slot,
    pending_failure: s.pending_failure ? JSON.stringify(s.pending_failure) : null,
    created_at: s.created_at,
    updated_at: s.updated_at,
    version: s.version,
    name_search: foldForSearch(s.name ?? ''),
    customer_search: foldForSearch(customerName),
  };
}

function runRow(organizationId: string, scheduleId: string, run: ScheduleRun, version: number, at: Date): ScheduleRunsTable {
  return {
    id: run.id,
    organization_id: organizationId,
    schedule_id: scheduleId,
    seq: run.seq,
    run_date: run.run_date,
    invoice_id: run.invoice_id,
    invoice_number: run.invoice_number,
    status: run.status,
    error_code: run.error?.code ?? null,
    error_message: run.error?.message ?? null,
    version,
    created_at: at,
    updated_at: at,
  };
}

interface BatchChanges {
  schedules: Map<string, RecurringSchedulesTable>;
  runs: Map<string, ScheduleRunsTable>;
  deleted: Map<string, { organizationId: string; at: Date }>;
  /** customer id -> its newest name and version in the batch. */
  customers: Map<string, ScheduleCustomersTable>;
}

function collect(events: RecordedEvent[]): BatchChanges {
  const changes: BatchChanges = { schedules: new Map(), runs: new Map(), deleted: new Map(), customers: new Map() };
  for (const e of events) {
    const organizationId = e.metadata.organization_id;
    if (!organizationId) throw new Error(`${e.type} ${e.id} lacks metadata.organization_id`);
    if ((CUSTOMER_EVENT_TYPES as readonly string[]).includes(e.type)) {
      const { id, name, version } = (e.data as { customer: Customer }).customer;
      const newest = changes.customers.get(id);
      if (!newest || newest.version < version) changes.customers.set(id, { id, organization_id: organizationId, name, name_search: foldForSearch(name), version });
      continue;
    }
    const event = { type: e.type, data: e.data } as ScheduleEvent;
    if (event.type === 'ScheduleDeleted') {
      changes.deleted.set(event.data.schedule_id, { organizationId, at: e.created_at });
      continue;
    }
    const s = event.data.schedule;
    const known = changes.schedules.get(s.id);
    // Only a creation says the customer's name; later events keep the row's.
    const customerName = event.type === 'ScheduleCreated' ? event.data.customer_name : (known?.customer_name ?? '');
    const row = scheduleRow(organizationId, s, customerName);
    if (!known || known.version <= s.version) changes.schedules.set(s.id, row);
    if (event.type === 'ScheduleOccurrenceGenerated' || event.type === 'ScheduleOccurrenceFailed') {
      const run = runRow(organizationId, s.id, event.data.run, s.version, e.created_at);
      const seen = changes.runs.get(run.id);
      if (seen) run.created_at = seen.created_at;
      if (!seen || seen.version <= run.version) changes.runs.set(run.id, run);
    }
  }
  return changes;
}

const SCHEDULE_UPDATED = [
  'name', 'frequency', 'interval_count', 'day_of_month', 'day_of_week', 'start_date', 'end_date', 'max_occurrences',
  'occurrences', 'next_run_date', 'auto_finalize', 'auto_send', 'days_until_due', 'currency', 'items', 'status',
  'anchor_date', 'anchor_seq', 'seq', 'quota_slot', 'pending_failure', 'updated_at', 'version', 'name_search',
] as const;
const RUN_UPDATED = ['run_date', 'invoice_id', 'invoice_number', 'status', 'error_code', 'error_message', 'version', 'updated_at'] as const;

/**
 * A run's state comes from its newest event; its created_at from its first, whichever came first here (a
 * retried run's failure applied again after its success, once a rebuild's swap took the row away).
 */
const RUN_IF_NEWER = {
  ...Object.fromEntries(RUN_UPDATED.map((c) => [c, sql`case
    when schedule_runs.version <= excluded.version then excluded.${sql.ref(c)} else schedule_runs.${sql.ref(c)} end`])),
  created_at: sql<Date>`least(schedule_runs.created_at, excluded.created_at)`,
};

/** Advisory lock class of a customer's turn ('SCHC'; ids hashed): see turnsText(). */
const CUSTOMER_TURN = 0x53434843;

/**
 * Renames and the writes of the customers' schedules take turns, per
 * customer: otherwise a schedule created while a rename commits sees
 * neither the new name (not committed yet when it reads schedule_customers)
 * nor is seen by the rename (its row not committed yet), and keeps the old
 * name. The statement that takes the batch's turns, first in its transaction
 * (Projector.opening: the runner sends it with its BEGIN, an inline append in
 * its message), or null. A customer's creation renames nothing (no schedule
 * can name a customer before it exists) and takes none; a deletion writes no
 * name. Taken in one order by everyone (the keys sorted), so two batches
 * cannot wait for each other.
 */
function turnsText(events: readonly Pick<RecordedEvent, 'type' | 'data'>[], literal: (value: string) => string): string | null {
  const ids = new Set<string>();
  for (const e of events) {
    if ((CUSTOMER_EVENT_TYPES as readonly string[]).includes(e.type)) {
      const { id, version } = (e.data as { customer: Customer }).customer;
      if (version > 0) ids.add(id);
    } else if (e.type !== 'ScheduleDeleted') {
      ids.add((e.data as { schedule: Schedule }).schedule.customer_id);
    }
  }
  if (ids.size === 0) return null;
  return `select count(pg_advisory_xact_lock(${CUSTOMER_TURN}, k))
            from (select distinct hashtext(id) as k from unnest(array[${[...ids].map(literal).join(', ')}]::text[]) as id order by k) keys`;
}

const excluded = (columns: readonly string[]) => Object.fromEntries(columns.map((c) => [c, sql.ref(`excluded.${c}`)]));

export const schedulesProjector: Projector = {
  name: 'schedules',
  handles: [...SCHEDULE_EVENT_TYPES, ...CUSTOMER_EVENT_TYPES],
  tables: ['recurring_schedules', 'schedule_runs', 'schedule_tombstones', 'schedule_customers'],
  opening: (events, literal) => turnsText(events, literal),
  async apply(events, transaction: Transaction<any>, options) {
    const trx = transaction as unknown as Kysely<Database>;
    const { schedules, runs, deleted, customers } = collect(events);
    const renamed = [...customers.values()].filter((c) => c.version > 0).map((c) => c.id);
    // The customers' turns, unless opening() took them in the runner's or the append's message.
    const turns = options?.opened ? null : turnsText(events, sqlLiteral);
    if (turns !== null) await sql.raw(turns).execute(trx);
    // First the customers' names: every schedule row below takes the newest one known.
    if (customers.size > 0) {
      await trx
        .insertInto('schedule_customers') // unqualified: a rebuild points search_path at its shadow schema
        .values([...customers.values()])
        .onConflict((oc) => oc.column('id').doUpdateSet(excluded(['name', 'name_search', 'version'])).where('schedule_customers.version', '<', sql.ref<number>('excluded.version')))
        .execute();
    }
    if (schedules.size > 0) {
      await trx
        .insertInto('recurring_schedules')
        .values([...schedules.values()])
        .onConflict((oc) => oc.column('id').doUpdateSet(excluded(SCHEDULE_UPDATED)).where('recurring_schedules.version', '<=', sql.ref<number>('excluded.version')))
        .execute();
    }
    if (runs.size > 0) {
      await trx
        .insertInto('schedule_runs')
        .values([...runs.values()])
        .onConflict((oc) =>
          oc
            .column('id')
            .doUpdateSet(RUN_IF_NEWER)
            .where((eb) => eb.or([eb('schedule_runs.version', '<=', sql.ref<number>('excluded.version')), eb(sql.ref('excluded.created_at'), '<', sql.ref('schedule_runs.created_at'))])),
        )
        .execute();
    }
    if (deleted.size > 0) {
      await trx
        .insertInto('schedule_tombstones')
        .values([...deleted].map(([id, { organizationId, at }]) => ({ id, organization_id: organizationId, deleted_at: at })))
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    }
    // A deleted schedule stays deleted: rows that events of this batch wrote for it (its deletion in this
    // batch, or one applied before and these events applied again, late) go with its tombstone.
    const touched = [...new Set([...schedules.keys(), ...[...runs.values()].map((r) => r.schedule_id), ...deleted.keys()])];
    if (touched.length > 0) {
      await sql`
        with gone as (select id from schedule_tombstones where id = any(${touched}::uuid[])),
             runs as (delete from schedule_runs where schedule_id in (select id from gone))
        delete from recurring_schedules where id in (select id from gone)`.execute(trx);
    }
    // The customer's newest name known, on the rows this batch wrote (a creation read before a rename
    // committed, a row a later event wrote first) and on every row of the customers it renamed; only over an
    // older one, so that whatever is applied again, and however batched, the rows end the same.
    if (touched.length > 0 || renamed.length > 0) {
      await sql`
        update recurring_schedules r
           set customer_name = c.name, customer_search = c.name_search, customer_version = c.version
          from schedule_customers c
         where c.id = r.customer_id and c.organization_id = r.organization_id
           and c.version > coalesce(r.customer_version, -1)
           and (r.id = any(${touched}::uuid[]) or r.customer_id = any(${renamed}::uuid[]))`.execute(trx);
    }
  },
};
