/**
 * Recurring schedule events (stream `schedule-<id>`). Like customers, every
 * event carries the whole schedule as of that event under data.schedule
 * (public fields and the lattice that computes its dates), so the projector
 * upserts it without reading anything else. Occurrence events also carry
 * the run, a row of the schedule's history.
 */
import type { LineValues } from '../invoice/lines.ts';
import type { DomainEvent } from '../shared/decider.ts';
import type { Frequency } from './calendar.ts';

export const SCHEDULE_STATUSES = ['active', 'paused', 'completed', 'cancelled'] as const;
export type ScheduleStatus = (typeof SCHEDULE_STATUSES)[number];

/** The public schedule representation (docs/recurring.md), without history. */
export interface SchedulePublic {
  id: string;
  name: string | null;
  customer_id: string;
  frequency: Frequency;
  interval_count: number;
  day_of_month: number | null;
  day_of_week: number | null;
  start_date: string;
  end_date: string | null;
  max_occurrences: number | null;
  /** Invoices generated (failed runs do not count). */
  occurrences: number;
  /** Date of the next run while active; null when paused, completed or cancelled. */
  next_run_date: string | null;
  auto_finalize: boolean;
  auto_send: boolean;
  days_until_due: number;
  currency: string;
  items: LineValues[];
  status: ScheduleStatus;
  created_at: string;
  updated_at: string;
  /** Revision of the event in the schedule stream (created = 0); also the ETag. */
  version: number;
}

/** A run that failed on its own day and is retried by later ticks of that day. */
export interface PendingFailure {
  seq: number;
  run_date: string;
  error: RunError;
}

/** The schedule as events carry it: the public fields plus the lattice (src/commands/schedule/calendar.ts). */
export interface Schedule extends SchedulePublic {
  /** The date of occurrence number anchor_seq. */
  anchor_date: string;
  anchor_seq: number;
  /** Number of the next occurrence (generated and failed ones both move it). */
  seq: number;
  /** The quota slot it holds while active or paused (reservation `scheduleslot-<org>-<n>`). */
  quota_slot: number;
  pending_failure: PendingFailure | null;
}

export interface RunError {
  code: string;
  message: string;
}

/** One history entry (docs/recurring.md), keyed by (schedule, seq): a retried run updates its entry. */
export interface ScheduleRun {
  id: string;
  seq: number;
  run_date: string;
  invoice_id: string | null;
  invoice_number: string | null;
  status: 'success' | 'failed';
  error: RunError | null;
}

type WithSchedule<T extends string, D = object> = DomainEvent<T, { schedule: Schedule } & D>;

/** `customer_name`: the customer's name at creation, for search (later renames come from the customer's events). */
export type ScheduleCreated = WithSchedule<'ScheduleCreated', { customer_name: string }>;
export type ScheduleUpdated = WithSchedule<'ScheduleUpdated', { changed_fields: string[] }>;
export type SchedulePaused = WithSchedule<'SchedulePaused'>;
/** `skipped`: occurrences passed over while paused (never generated). */
export type ScheduleResumed = WithSchedule<'ScheduleResumed', { skipped: number }>;
export type ScheduleOccurrenceGenerated = WithSchedule<'ScheduleOccurrenceGenerated', { run: ScheduleRun }>;
/** `final`: the run's day is over, the schedule moved on; otherwise it is retried that day. */
export type ScheduleOccurrenceFailed = WithSchedule<'ScheduleOccurrenceFailed', { run: ScheduleRun; final: boolean }>;
/** Occurrences passed over while the organization was archived. */
export type ScheduleOccurrencesSkipped = WithSchedule<'ScheduleOccurrencesSkipped', { skipped: number; reason: 'organization_restored' }>;
export type ScheduleCompleted = WithSchedule<'ScheduleCompleted'>;
export type ScheduleCancelled = WithSchedule<'ScheduleCancelled', { reason: 'customer_archived' }>;
/** DELETE: the schedule and its history go; its invoices stay. */
export type ScheduleDeleted = DomainEvent<'ScheduleDeleted', { schedule_id: string; quota_slot: number }>;

export type ScheduleEvent =
  | ScheduleCreated
  | ScheduleUpdated
  | SchedulePaused
  | ScheduleResumed
  | ScheduleOccurrenceGenerated
  | ScheduleOccurrenceFailed
  | ScheduleOccurrencesSkipped
  | ScheduleCompleted
  | ScheduleCancelled
  | ScheduleDeleted;

export const SCHEDULE_EVENT_TYPES = [
  'ScheduleCreated',
  'ScheduleUpdated',
  'SchedulePaused',
  'ScheduleResumed',
  'ScheduleOccurrenceGenerated',
  'ScheduleOccurrenceFailed',
  'ScheduleOccurrencesSkipped',
  'ScheduleCompleted',
  'ScheduleCancelled',
  'ScheduleDeleted',
] as const satisfies readonly ScheduleEvent['type'][];

export function scheduleStream(scheduleId: string): string {
  return `schedule-${scheduleId}`;
}

/** The public fields of a schedule snapshot. */
export function publicSchedule(s: Schedule): SchedulePublic {
  const { anchor_date: _a, anchor_seq: _s, seq: _q, quota_slot: _slot, pending_failure: _p, ...rest } = s;
  return rest;
}
