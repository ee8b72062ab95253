/**
 * The recurring-schedule read models (migrations 0030, 0031, 0105, 0107; projector
 * src/projections/schedules.ts; queries src/queries/schedules.ts; the
 * reactions' outbox src/workers/schedule-reactions.ts).
 */
import type { ColumnType } from 'kysely';
import type { LineValues } from '../../commands/invoice/lines.ts';
import type { PendingFailure, Schedule } from '../../commands/schedule/events.ts';

/**
 * A row is the schedule snapshot every schedule event carries (Schedule in
 * src/commands/schedule/events.ts: public fields plus the date lattice),
 * plus what only the read side has; JSON and timestamp columns are typed as
 * the driver may hand them back.
 */
export interface RecurringSchedulesTable extends Omit<Schedule, 'items' | 'pending_failure' | 'created_at' | 'updated_at'> {
  organization_id: string;
  /** The customer's current name (renames come from the customer's events), and the search columns. */
  customer_name: string;
  /** The customer's version that customer_name is from: only a newer customer event renames (null: unknown). */
  customer_version: number | null;
  name_search: string;
  customer_search: string;
  items: LineValues[] | string;
  pending_failure: PendingFailure | string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

/**
 * Each customer's newest name as the schedules projector read it from the customer events (migration 0107):
 * schedules take their customer_name from here, never from the customers read model (a rebuild of this
 * projector must find the names as they were at each point of the log).
 */
export interface ScheduleCustomersTable {
  id: string;
  organization_id: string;
  name: string;
  name_search: string;
  version: number;
}

/** A deleted schedule (migration 0105): the projector never writes its rows again. */
export interface ScheduleTombstonesTable {
  id: string;
  organization_id: string;
  deleted_at: Date | string;
}

export interface ScheduleRunsTable {
  id: string;
  organization_id: string;
  schedule_id: string;
  seq: number;
  run_date: string;
  invoice_id: string | null;
  invoice_number: string | null;
  status: string;
  error_code: string | null;
  error_message: string | null;
  version: number;
  created_at: Date | string;
  updated_at: Date | string;
}

export interface ScheduleReactionsTable {
  event_id: string;
  kind: 'customer_archived' | 'organization_restored';
  organization_id: string;
  subject_id: string;
  position: string;
  occurred_at: Date | string;
  attempts: ColumnType<number, number | undefined, number>;
  last_error: string | null;
}

export interface SchedulesTables {
  recurring_schedules: RecurringSchedulesTable;
  schedule_runs: ScheduleRunsTable;
  schedule_tombstones: ScheduleTombstonesTable;
  schedule_customers: ScheduleCustomersTable;
  schedule_reactions: ScheduleReactionsTable;
}
