/**
 * The recurring-schedule read models (migrations 0030, 0031; projector
 * src/projections/schedules.ts; queries src/queries/schedules.ts; the
 * reactions' outbox src/workers/schedule-reactions.ts).
 */
import type { ColumnType } from 'kysely';
import type { LineValues } from '../../commands/invoice/lines.ts';
import type { PendingFailure } from '../../commands/schedule/events.ts';

export interface RecurringSchedulesTable {
  id: string;
  organization_id: string;
  name: string | null;
  customer_id: string;
  customer_name: string;
  frequency: string;
  interval_count: number;
  day_of_month: number | null;
  day_of_week: number | null;
  /** `date` columns come back as YYYY-MM-DD strings (src/db/database.ts). */
  start_date: string;
  end_date: string | null;
  max_occurrences: number | null;
  occurrences: number;
  next_run_date: string | null;
  auto_finalize: boolean;
  auto_send: boolean;
  days_until_due: number;
  currency: string;
  items: LineValues[] | string;
  status: string;
  anchor_date: string;
  anchor_seq: number;
  seq: number;
  quota_slot: number;
  pending_failure: PendingFailure | string | null;
  created_at: Date | string;
  updated_at: Date | string;
  version: number;
  name_search: string;
  customer_search: string;
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
  schedule_reactions: ScheduleReactionsTable;
}
