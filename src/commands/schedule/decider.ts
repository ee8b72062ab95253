/**
 * Recurring schedule decider (reference: Recurring schedule;
 * docs/recurring.md). States: active, paused, completed,
 * cancelled; completed and cancelled are read-only (INVALID_STATE). Dates
 * come from src/commands/schedule/calendar.ts; the quota slot is claimed and
 * released by the handler around the append (docs/architecture.md).
 *
 * Occurrences: `seq` numbers them; a generated one moves seq and counts
 * toward max_occurrences, a failed one moves seq when its day is over (retried
 * until then) and does not count. After the last allowed run the schedule
 * completes in the same decision.
 */
import { derivedV7 } from '../../shared/derived-id.ts';
import { DomainError, notFound, validationError } from '../../shared/errors.ts';
import { FieldErrors } from '../field-rules.ts';
import type { CreateInvoiceInput, InvoiceCustomer } from '../invoice/commands.ts';
import type { Decider } from '../shared/decider.ts';
import { sameJson } from '../shared/same-json.ts';
import {
  addDays,
  dayRuleFrom,
  isWeekBased,
  MAX_DAY_OF_MONTH,
  newCalendar,
  nextOccurrence,
  reanchor,
  runDateOf,
  seqOnOrAfter,
} from './calendar.ts';
import type { ScheduleCommand, SchedulePatch } from './commands.ts';
import { publicSchedule, type Schedule, type ScheduleEvent, type ScheduleRun, type ScheduleStatus } from './events.ts';
import { checkDayFields, DAY_RULE_FIELDS, readScheduleDate, validateNewSchedule, validateSchedulePatch } from './validate.ts';

export interface ScheduleState {
  /** Revision of the last event folded (-1: no stream yet). */
  revision: number;
  schedule: Schedule | null;
  deleted: boolean;
}

export const initialScheduleState: ScheduleState = { revision: -1, schedule: null, deleted: false };

export function evolveSchedule(state: ScheduleState, event: ScheduleEvent): ScheduleState {
  if (event.type === 'ScheduleDeleted') return { revision: state.revision + 1, schedule: null, deleted: true };
  return { revision: state.revision + 1, schedule: event.data.schedule, deleted: false };
}

/** Ids of what occurrence `seq` produces: the invoice (created with no_stream) and its history entry. */
export function occurrenceInvoiceId(scheduleId: string, seq: number): string {
  return derivedV7(scheduleId, `occurrence-${seq}`);
}

export function runId(scheduleId: string, seq: number): string {
  return derivedV7(scheduleId, `run-${seq}`);
}

function invalidState(status: ScheduleStatus, action: string): DomainError {
  return new DomainError('INVALID_STATE', `A ${status} schedule cannot be ${action}.`, { status });
}

/**
 * The states each action needs (else INVALID_STATE). The routes' checks of a refused body ask them too: a rule
 * on the stored schedule is only said where the command would judge it.
 */
export const canUpdate = (s: Schedule): boolean => s.status === 'active' || s.status === 'paused';
export const canResume = (s: Schedule): boolean => s.status === 'paused';
export const canGenerate = (s: Schedule): boolean => s.status === 'active';

/** next_run_date as shown: the next occurrence while active, else null. */
function withNextRun(s: Schedule): Schedule {
  return { ...s, next_run_date: s.status === 'active' ? (nextOccurrence(s)?.run_date ?? null) : null };
}

/**
 * Stamps the events' snapshots with their version and time, and appends
 * ScheduleCompleted when an active schedule has no run left.
 */
function stamp(state: ScheduleState, now: string, events: ScheduleEvent[]): ScheduleEvent[] {
  const out: ScheduleEvent[] = [];
  for (const event of events) {
    if (event.type === 'ScheduleDeleted') {
      out.push(event);
      continue;
    }
    const schedule = withNextRun({ ...event.data.schedule, updated_at: now, version: state.revision + out.length + 1 });
    out.push({ ...event, data: { ...event.data, schedule } } as ScheduleEvent);
    if (schedule.status === 'active' && schedule.next_run_date === null) {
      const done = withNextRun({ ...schedule, status: 'completed', pending_failure: null, version: schedule.version + 1 });
      out.push({ type: 'ScheduleCompleted', data: { schedule: done } });
    }
  }
  return out;
}

function decideSchedule(command: ScheduleCommand, state: ScheduleState): ScheduleEvent[] {
  const now = command.metadata.now;
  if (command.type === 'CreateSchedule') {
    // Same id twice (a retried request): nothing new, the handler answers with what exists.
    if (state.schedule || state.deleted) return [];
    const { schedule_id, quota_slot, customer, ...input } = command.data;
    const values = validateNewSchedule(input, customer);
    const schedule: Schedule = {
      id: schedule_id,
      ...values,
      ...newCalendar(values),
      next_run_date: null,
      status: 'active',
      created_at: now,
      updated_at: now,
      version: 0,
      quota_slot,
      pending_failure: null,
    };
    return stamp(state, now, [{ type: 'ScheduleCreated', data: { schedule, customer_name: customer?.name ?? '' } }]);
  }

  const current = state.schedule;
  if (!current) throw notFound('Recurring schedule');
  switch (command.type) {
    case 'UpdateSchedule':
      return stamp(state, now, decideUpdate(current, command.data.patch));
    case 'PauseSchedule':
      if (current.status !== 'active') throw invalidState(current.status, 'paused');
      return stamp(state, now, [{ type: 'SchedulePaused', data: { schedule: { ...current, status: 'paused' } } }]);
    case 'ResumeSchedule':
      return stamp(state, now, decideResume(current, command.data.next_run_date ?? null, command.data.today));
    case 'RecordOccurrence': {
      const { seq, invoice_id, invoice_number, run_date: planned } = command.data;
      if (seq < current.seq) return []; // recorded already (a second scheduler, a retried request)
      // Its invoice exists already (created, perhaps numbered: generate.ts records last), so an occurrence planned
      // while the schedule was active is recorded even if a pause, a cancellation or a PUT that completed it came
      // in between: refusing it would leave an invoice, a legal number perhaps, that no schedule history names.
      // The schedule keeps its new status; only a new occurrence needs an active one (planOccurrence). A deleted
      // schedule has no state left to record on (NOT_FOUND above): its invoices stay, as a deletion's always do.
      if (seq > current.seq) throw new Error(`occurrence ${seq} of schedule ${current.id} is not its next (${current.seq})`);
      const run: ScheduleRun = {
        // The date it was planned for: a PUT that re-anchored the calendar meanwhile must not give the run a date its invoice does not have.
        id: runId(current.id, seq), seq, run_date: planned ?? runDateOf(current, seq), invoice_id, invoice_number, status: 'success', error: null,
      };
      const schedule: Schedule = { ...current, seq: seq + 1, occurrences: current.occurrences + 1, pending_failure: null };
      return stamp(state, now, [{ type: 'ScheduleOccurrenceGenerated', data: { schedule, run } }]);
    }
    case 'RecordFailure': {
      const { seq, error, today } = command.data;
      if (current.status !== 'active' || seq !== current.seq) return []; // moved on meanwhile
      const run_date = runDateOf(current, seq);
      const final = run_date < today;
      const pending = current.pending_failure;
      if (!final && pending?.seq === seq && pending.error.code === error.code) return []; // the same failure, retried: recorded once
      const run: ScheduleRun = { id: runId(current.id, seq), seq, run_date, invoice_id: null, invoice_number: null, status: 'failed', error };
      const schedule: Schedule = final
        ? { ...current, seq: seq + 1, pending_failure: null }
        : { ...current, pending_failure: { seq, run_date, error } };
      return stamp(state, now, [{ type: 'ScheduleOccurrenceFailed', data: { schedule, run, final } }]);
    }
    case 'CloseFailedOccurrence': {
      const { seq, today } = command.data;
      const pending = current.pending_failure;
      if (current.status !== 'active' || seq !== current.seq || pending?.seq !== seq || pending.run_date >= today) return [];
      const run: ScheduleRun = {
        id: runId(current.id, seq), seq, run_date: pending.run_date, invoice_id: null, invoice_number: null, status: 'failed', error: pending.error,
      };
      const schedule: Schedule = { ...current, seq: seq + 1, pending_failure: null };
      return stamp(state, now, [{ type: 'ScheduleOccurrenceFailed', data: { schedule, run, final: true } }]);
    }
    case 'SkipFrozenOccurrences': {
      if (current.status !== 'active') return [];
      const seq = seqOnOrAfter(current, command.data.today);
      if (seq === current.seq) return [];
      const schedule: Schedule = { ...current, seq, pending_failure: null };
      return stamp(state, now, [{ type: 'ScheduleOccurrencesSkipped', data: { schedule, skipped: seq - current.seq, reason: 'organization_restored' } }]);
    }
    case 'CancelSchedule':
      if (current.status !== 'active' && current.status !== 'paused') return [];
      return stamp(state, now, [
        { type: 'ScheduleCancelled', data: { schedule: { ...current, status: 'cancelled', pending_failure: null }, reason: command.data.reason } },
      ]);
    case 'DeleteSchedule':
      return [{ type: 'ScheduleDeleted', data: { schedule_id: current.id, quota_slot: current.quota_slot } }];
  }
}

/** PUT: active or paused only. */
function decideUpdate(current: Schedule, patch: SchedulePatch): ScheduleEvent[] {
  if (!canUpdate(current)) throw invalidState(current.status, 'updated');
  const next = patchSchedule(current, patch);
  const before = publicSchedule(current);
  const after = publicSchedule(withNextRun(next));
  const changed_fields = (Object.keys(after) as (keyof typeof after)[]).filter((k) => !sameJson(before[k], after[k]));
  if (changed_fields.length === 0) return []; // a PUT that changes nothing appends nothing
  return [{ type: 'ScheduleUpdated', data: { schedule: next, changed_fields } }];
}

/**
 * The schedule `patch` makes of `current`, or one VALIDATION_ERROR with every problem of the patch: the fields'
 * own rules and those against the schedule (next run date, invoices generated, auto_finalize), side by side. A
 * change of the calendar re-anchors the lattice at the current next run date. PUT's RouteSpec.check runs it on a
 * body the JSON schema refused, so these are listed beside the schema's errors.
 */
export function patchSchedule(current: Schedule, patch: SchedulePatch): Schedule {
  const errors = new FieldErrors();
  const values = validateSchedulePatch(patch, errors);
  const frequency = values.frequency ?? current.frequency;
  const calendarChanged =
    (values.frequency !== undefined && values.frequency !== current.frequency) ||
    (values.interval_count !== undefined && values.interval_count !== current.interval_count) ||
    (values.day_of_month !== undefined && values.day_of_month !== current.day_of_month) ||
    (values.day_of_week !== undefined && values.day_of_week !== current.day_of_week);
  // Whether the day rule sent can place the next run: not when one of its fields is refused (a day field of the
  // other frequencies, refused below, is never read by it). Other fields' errors do not stop the rules on end_date.
  const placed = !errors.has(...DAY_RULE_FIELDS);
  checkDayFields(errors, frequency, values.day_of_month, values.day_of_week);
  let next: Schedule = { ...current, ...values } as Schedule;
  if (calendarChanged && placed) {
    const from = runDateOf(current, current.seq);
    // The day fields sent win; a field not sent defaults from the new anchor date.
    const keep = values.frequency === undefined || isWeekBased(values.frequency) === isWeekBased(current.frequency);
    const rule = dayRuleFrom(frequency, from, {
      day_of_month: values.day_of_month !== undefined ? values.day_of_month : keep ? current.day_of_month : null,
      day_of_week: values.day_of_week !== undefined ? values.day_of_week : keep ? current.day_of_week : null,
    });
    next = { ...reanchor(next, rule, next.interval_count, from), pending_failure: null };
  }
  // Unplaced, the next run is judged where it is: re-anchoring starts there, so it can only move later.
  const nextRun = runDateOf(placed ? next : current, current.seq);
  if (values.end_date != null && values.end_date < nextRun) errors.add('end_date', `must not be before the next run date (${nextRun})`);
  else if (calendarChanged && placed && values.end_date === undefined && next.end_date !== null && next.end_date < nextRun) {
    // The calendar sent moves the next run past the end date kept: that would complete the schedule silently.
    // Said on a field sent that has no error of its own (one message per field: another would hide this one).
    // A wrong-family day field (refused above) never moves a run, so a field sent without an error of its own is there.
    const moved = (['frequency', 'interval_count', 'day_of_month', 'day_of_week'] as const).find((f) => values[f] !== undefined && !errors.has(f));
    if (moved) errors.add(moved, `moves the next run date to ${nextRun}, after end_date (${next.end_date}); change end_date too`);
  }
  if (values.max_occurrences != null && values.max_occurrences <= current.occurrences) {
    errors.add('max_occurrences', `must be greater than the ${current.occurrences} invoices already generated`);
  }
  if (next.auto_send && !next.auto_finalize) errors.add('auto_send', 'requires auto_finalize (only a finalized invoice can be sent)');
  errors.throwIfAny();
  return next;
}

/** Resume: with a date, re-anchor there; without, continue from the next lattice date on or after today. */
function decideResume(current: Schedule, date: string | null, today: string): ScheduleEvent[] {
  if (!canResume(current)) throw invalidState(current.status, 'resumed');
  const resumed: Schedule = { ...current, status: 'active', pending_failure: null };
  if (date === null) {
    const seq = seqOnOrAfter(resumed, today);
    return [{ type: 'ScheduleResumed', data: { schedule: { ...resumed, seq }, skipped: seq - current.seq } }];
  }
  const day = readResumeDate(current, date, today);
  const rule = dayRuleFrom(current.frequency, day);
  return [{ type: 'ScheduleResumed', data: { schedule: reanchor(resumed, rule, current.interval_count, day), skipped: 0 } }];
}

/**
 * Resume's next_run_date for `current`: today or later, a day every month has (month-based schedules), not after
 * end_date; else one VALIDATION_ERROR. Resume's RouteSpec.check runs it on a body the JSON schema refused.
 */
export function readResumeDate(current: Schedule, date: unknown, today: string): string {
  const errors = new FieldErrors();
  const day = readScheduleDate(errors, 'next_run_date', date, true);
  if (day !== null) {
    if (day < today) errors.add('next_run_date', `must be today (${today}) or later`);
    if (!isWeekBased(current.frequency) && Number(day.slice(8, 10)) > MAX_DAY_OF_MONTH) {
      errors.add('next_run_date', `must fall on day 1 to ${MAX_DAY_OF_MONTH} of a month for ${current.frequency} schedules`);
    }
    if (current.end_date !== null && day > current.end_date) errors.add('next_run_date', `must not be after end_date (${current.end_date})`);
  }
  errors.throwIfAny();
  return day as string;
}

export const scheduleDecider: Decider<ScheduleCommand, ScheduleEvent, ScheduleState> = {
  initialState: initialScheduleState,
  evolve: evolveSchedule,
  decide: decideSchedule,
};

/** What one generation of a schedule's next occurrence will create. */
export interface PlannedOccurrence {
  seq: number;
  run_date: string;
  invoice_id: string;
  invoice: CreateInvoiceInput;
}

/**
 * Plans the next occurrence (generate, and every scheduler run): refuses a
 * schedule that is not active (INVALID_STATE) and a customer that cannot be
 * invoiced (CUSTOMER_INACTIVE). `issueDate` defaults to the run date.
 */
export function planOccurrence(state: ScheduleState, customer: InvoiceCustomer | null, issueDate?: string): PlannedOccurrence {
  const s = state.schedule;
  if (!s) throw notFound('Recurring schedule');
  if (!canGenerate(s)) throw invalidState(s.status, 'generated');
  if (!customer || customer.status !== 'active') {
    throw new DomainError('CUSTOMER_INACTIVE', `The customer of this schedule is ${customer?.status ?? 'gone'}: no invoice can be generated for it.`);
  }
  const run_date = runDateOf(s, s.seq);
  const issue_date = issueDate ?? run_date;
  return {
    seq: s.seq,
    run_date,
    invoice_id: occurrenceInvoiceId(s.id, s.seq),
    invoice: {
      customer_id: s.customer_id,
      issue_date,
      due_date: dueDateOf(s, issue_date),
      currency: s.currency,
      items: s.items,
    },
  };
}

/**
 * The due date of `schedule`'s invoice issued on `issueDate`. One past 9999-12-31 is the issue date's fault (the
 * client sent it), not a due_date the client never sent: VALIDATION_ERROR on issue_date. Generate's
 * RouteSpec.check runs it on a body the JSON schema refused.
 */
export function dueDateOf(schedule: Schedule, issueDate: string): string {
  const due_date = addDays(issueDate, schedule.days_until_due);
  if (!/^\d{4}-/.test(due_date)) {
    throw validationError([{ field: 'issue_date', message: `leaves no room for the due date ${schedule.days_until_due} days later (dates end with the year 9999)` }]);
  }
  return due_date;
}

/** The terminal events that give the quota slot back. */
export function releasesQuotaSlot(events: ScheduleEvent[]): boolean {
  return events.some((e) => e.type === 'ScheduleCompleted' || e.type === 'ScheduleCancelled' || e.type === 'ScheduleDeleted');
}
