/**
 * Recurring schedule commands. The decider cannot read a clock or the
 * customer, so the handler puts "today" (Africa/Casablanca) and the customer
 * facts in the command; it re-checks every value, so a command built by the
 * scheduler or a test is held to the same rules as one from the API.
 */
import type { Command } from '../command.ts';
import type { InvoiceCustomer, LineInput } from '../invoice/commands.ts';
import type { Frequency } from './calendar.ts';
import type { RunError } from './events.ts';

/** POST /recurring-invoices body (reference: Recurring schedule fields). */
export interface CreateScheduleInput {
  customer_id: string;
  frequency: Frequency;
  start_date: string;
  name?: string | null;
  interval_count?: number;
  day_of_month?: number | null;
  day_of_week?: number | null;
  end_date?: string | null;
  max_occurrences?: number | null;
  auto_finalize?: boolean;
  auto_send?: boolean;
  days_until_due?: number;
  currency?: string;
  items: LineInput[];
}

/** PUT /recurring-invoices/{id} body: only the fields sent change. */
export interface SchedulePatch {
  name?: string | null;
  frequency?: Frequency;
  interval_count?: number;
  day_of_month?: number | null;
  day_of_week?: number | null;
  end_date?: string | null;
  max_occurrences?: number | null;
  auto_finalize?: boolean;
  auto_send?: boolean;
  days_until_due?: number;
  items?: LineInput[];
}

export type CreateSchedule = Command<
  'CreateSchedule',
  CreateScheduleInput & { schedule_id: string; quota_slot: number; customer: InvoiceCustomer | null }
>;
export type UpdateSchedule = Command<'UpdateSchedule', { schedule_id: string; patch: SchedulePatch }>;
export type PauseSchedule = Command<'PauseSchedule', { schedule_id: string }>;
/** `today` bounds next_run_date and picks the next lattice date when none is given. */
export type ResumeSchedule = Command<'ResumeSchedule', { schedule_id: string; next_run_date?: string | null; today: string }>;
/** A generated invoice lands on occurrence `seq` (written after the invoice commands succeeded). */
export type RecordOccurrence = Command<
  'RecordOccurrence',
  {
    schedule_id: string;
    seq: number;
    invoice_id: string;
    invoice_number: string | null;
    /** The run date the occurrence was planned for (its invoice's); default: the schedule's date for `seq` now. */
    run_date?: string;
  }
>;
/** A run of occurrence `seq` failed with `error` (final when its day is over). */
export type RecordFailure = Command<'RecordFailure', { schedule_id: string; seq: number; error: RunError; today: string }>;
/** A run that failed on its day and was not retried successfully that day: the schedule moves on. */
export type CloseFailedOccurrence = Command<'CloseFailedOccurrence', { schedule_id: string; seq: number; today: string }>;
/** The organization was restored: what fell due while it was archived is skipped. */
export type SkipFrozenOccurrences = Command<'SkipFrozenOccurrences', { schedule_id: string; today: string }>;
/** Reaction to the customer's archiving. */
export type CancelSchedule = Command<'CancelSchedule', { schedule_id: string; reason: 'customer_archived' }>;
export type DeleteSchedule = Command<'DeleteSchedule', { schedule_id: string }>;

export type ScheduleCommand =
  | CreateSchedule
  | UpdateSchedule
  | PauseSchedule
  | ResumeSchedule
  | RecordOccurrence
  | RecordFailure
  | CloseFailedOccurrence
  | SkipFrozenOccurrences
  | CancelSchedule
  | DeleteSchedule;
