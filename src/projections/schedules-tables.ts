/**
 * Typed Kysely tables of the recurring-schedule read models (migration
 * 0030_recurring_schedules): what the schedules projector writes and the
 * schedule queries and the scheduler read.
 */
import type { LineValues } from '../commands/invoice/lines.ts';
import type { PendingFailure } from '../commands/schedule/events.ts';

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

export interface ScheduleTables {
  recurring_schedules: RecurringSchedulesTable;
  schedule_runs: ScheduleRunsTable;
  /** Read for the customer name of new rows' search text and the scheduler's organization filter. */
  organizations: { id: string; archived: boolean; account_id: string };
  accounts: { id: string; plan: string };
}
