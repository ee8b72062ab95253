/**
 * recurring_schedules and schedule_runs read models. Every schedule event
 * carries the whole schedule (docs/events.md, snapshot rule) and occurrence
 * events carry their run, so applying a batch is: upsert the newest snapshot
 * per schedule, upsert the newest state per run, delete what was deleted,
 * and rename customers on their schedules (customer events) for search.
 *
 * Idempotent and order-safe: rows are only replaced by a snapshot of the
 * same or a newer version, so a batch delivered twice changes nothing.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import { CUSTOMER_EVENT_TYPES, type Customer } from '../commands/customer/events.ts';
import { SCHEDULE_EVENT_TYPES, type Schedule, type ScheduleEvent, type ScheduleRun } from '../commands/schedule/events.ts';
import type { RecordedEvent } from '../eventstore/types.ts';
import { foldForSearch } from '../shared/search.ts';
import type { Projector } from './projector.ts';
import type { Database } from '../db/schema.ts';
import type { RecurringSchedulesTable, ScheduleRunsTable } from '../db/tables/schedules.ts';

export function scheduleRow(organizationId: string, s: Schedule, customerName: string): RecurringSchedulesTable {
  return {
    id: s.id,
    organization_id: organizationId,
    name: s.name,
    customer_id: s.customer_id,
    customer_name: customerName,
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
  deleted: Set<string>;
  /** customer id -> { name, organization }: the newest name in the batch. */
  renames: Map<string, { name: string; organizationId: string }>;
}

function collect(events: RecordedEvent[]): BatchChanges {
  const changes: BatchChanges = { schedules: new Map(), runs: new Map(), deleted: new Set(), renames: new Map() };
  for (const e of events) {
    const organizationId = e.metadata.organization_id;
    if (!organizationId) throw new Error(`${e.type} ${e.id} lacks metadata.organization_id`);
    if ((CUSTOMER_EVENT_TYPES as readonly string[]).includes(e.type)) {
      const customer = (e.data as { customer: Customer }).customer;
      changes.renames.set(customer.id, { name: customer.name, organizationId });
      continue;
    }
    const event = { type: e.type, data: e.data } as ScheduleEvent;
    if (event.type === 'ScheduleDeleted') {
      changes.deleted.add(event.data.schedule_id);
      continue;
    }
    const s = event.data.schedule;
    const known = changes.schedules.get(s.id);
    const customerName = event.type === 'ScheduleCreated' ? event.data.customer_name : (known?.customer_name ?? '');
    if (!known || known.version <= s.version) changes.schedules.set(s.id, scheduleRow(organizationId, s, customerName));
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

const excluded = (columns: readonly string[]) => Object.fromEntries(columns.map((c) => [c, sql.ref(`excluded.${c}`)]));

export const schedulesProjector: Projector = {
  name: 'schedules',
  handles: [...SCHEDULE_EVENT_TYPES, ...CUSTOMER_EVENT_TYPES],
  tables: ['recurring_schedules', 'schedule_runs'],
  async apply(events, transaction: Transaction<any>) {
    const trx = transaction as unknown as Kysely<Database>;
    const { schedules, runs, deleted, renames } = collect(events);
    if (schedules.size > 0) {
      await trx
        .insertInto('recurring_schedules') // unqualified: a rebuild points search_path at its shadow schema
        .values([...schedules.values()])
        .onConflict((oc) => oc.column('id').doUpdateSet(excluded(SCHEDULE_UPDATED)).where('recurring_schedules.version', '<=', sql.ref<number>('excluded.version')))
        .execute();
    }
    if (runs.size > 0) {
      await trx
        .insertInto('schedule_runs')
        .values([...runs.values()])
        .onConflict((oc) => oc.column('id').doUpdateSet(excluded(RUN_UPDATED)).where('schedule_runs.version', '<=', sql.ref<number>('excluded.version')))
        .execute();
    }
    if (deleted.size > 0) {
      const ids = [...deleted];
      await trx.deleteFrom('schedule_runs').where('schedule_id', 'in', ids).execute();
      await trx.deleteFrom('recurring_schedules').where('id', 'in', ids).execute();
    }
    // Last: the newest name of the batch wins over the one a ScheduleCreated carried.
    for (const [customerId, { name, organizationId }] of renames) {
      await trx
        .updateTable('recurring_schedules')
        .set({ customer_name: name, customer_search: foldForSearch(name) })
        .where('customer_id', '=', customerId)
        .where('organization_id', '=', organizationId)
        .where('customer_name', '<>', name)
        .execute();
    }
  },
};
