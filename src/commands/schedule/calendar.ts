/**
 * The calendar of a recurring schedule (docs/recurring.md, "Calendar rules"):
 * pure functions on Temporal.PlainDate (temporal-polyfill), no clock, no
 * hand-written month arithmetic.
 *
 * Run dates form a lattice anchored on one occurrence: occurrence number
 * `seq` falls on anchor_date + (seq - anchor_seq) x period, where the period is
 * 1 week (weekly), 2 weeks (biweekly), or 1, 3, 6, 12 months, times
 * interval_count. Month-based days are at most 28, so every month has them
 * and adding months never clamps. A date therefore depends only on the anchor
 * and the occurrence number, never on "today" or on when a run happened: a
 * late run never moves the later ones.
 */
import { Temporal } from 'temporal-polyfill';
import { BUSINESS_TIME_ZONE } from '../../shared/business-time.ts';

export const FREQUENCIES = ['weekly', 'biweekly', 'monthly', 'quarterly', 'biannually', 'yearly'] as const;
export type Frequency = (typeof FREQUENCIES)[number];

/** The largest day_of_month: every month has it. */
export const MAX_DAY_OF_MONTH = 28;

/** What the calendar needs of a schedule. */
export interface ScheduleCalendar {
  frequency: Frequency;
  interval_count: number;
  /** The date of occurrence number anchor_seq (YYYY-MM-DD). */
  anchor_date: string;
  anchor_seq: number;
  /** Number of the next occurrence to run (every consumed occurrence, generated or failed, moves it). */
  seq: number;
  /** Invoices generated so far (failed occurrences do not count). */
  occurrences: number;
  end_date: string | null;
  max_occurrences: number | null;
}

/** The day rule that picks the first run: a weekday (0 = Sunday) or a day of the month. */
export interface DayRule {
  frequency: Frequency;
  day_of_month: number | null;
  day_of_week: number | null;
}

export function isWeekBased(frequency: Frequency): boolean {
  return frequency === 'weekly' || frequency === 'biweekly';
}

function period(frequency: Frequency, intervalCount: number, times: number): Temporal.DurationLike {
  const n = intervalCount * times;
  switch (frequency) {
    case 'weekly': return { weeks: n };
    case 'biweekly': return { weeks: 2 * n };
    case 'monthly': return { months: n };
    case 'quarterly': return { months: 3 * n };
    case 'biannually': return { months: 6 * n };
    case 'yearly': return { years: n };
  }
}

const date = (text: string) => Temporal.PlainDate.from(text);

/** Weekday with 0 = Sunday .. 6 = Saturday (Temporal: Monday = 1 .. Sunday = 7). */
export function weekdayOf(day: string): number {
  return date(day).dayOfWeek % 7;
}

/** The rule's defaults filled from a date: its weekday, or its day of the month capped at 28. */
export function dayRuleFrom(frequency: Frequency, day: string, given: Partial<DayRule> = {}): DayRule {
  if (isWeekBased(frequency)) return { frequency, day_of_week: given.day_of_week ?? weekdayOf(day), day_of_month: null };
  return { frequency, day_of_week: null, day_of_month: given.day_of_month ?? Math.min(date(day).day, MAX_DAY_OF_MONTH) };
}

/** The first date on or after `from` that the rule matches. */
export function firstMatchOnOrAfter(rule: DayRule, from: string): string {
  const start = date(from);
  if (isWeekBased(rule.frequency)) {
    const ahead = ((rule.day_of_week ?? 0) - (start.dayOfWeek % 7) + 7) % 7;
    return start.add({ days: ahead }).toString();
  }
  const sameMonth = start.with({ day: rule.day_of_month ?? 1 });
  return (Temporal.PlainDate.compare(sameMonth, start) >= 0 ? sameMonth : sameMonth.add({ months: 1 })).toString();
}

/** The date of occurrence number `seq` on the schedule's lattice. */
export function runDateOf(schedule: Pick<ScheduleCalendar, 'frequency' | 'interval_count' | 'anchor_date' | 'anchor_seq'>, seq: number): string {
  const steps = seq - schedule.anchor_seq;
  return date(schedule.anchor_date).add(period(schedule.frequency, schedule.interval_count, steps)).toString();
}

/** Whether occurrence `seq` (on `day`) may still run: within end_date and max_occurrences. */
function allowed(schedule: ScheduleCalendar, day: string, generatedBefore: number): boolean {
  if (schedule.end_date !== null && day > schedule.end_date) return false;
  return schedule.max_occurrences === null || generatedBefore < schedule.max_occurrences;
}

export interface Occurrence {
  seq: number;
  run_date: string;
}

/** The next occurrence the schedule would run, or null when end_date or max_occurrences is reached. */
export function nextOccurrence(schedule: ScheduleCalendar): Occurrence | null {
  const run_date = runDateOf(schedule, schedule.seq);
  return allowed(schedule, run_date, schedule.occurrences) ? { seq: schedule.seq, run_date } : null;
}

/** Number of the first occurrence (from the schedule's next one) dated on or after `day`, bounds aside. */
export function seqOnOrAfter(schedule: ScheduleCalendar, day: string): number {
  let seq = schedule.seq;
  let run_date = runDateOf(schedule, seq);
  if (run_date < day) {
    // Jump with a step that can only undershoot (a month is at most 31 days), then walk: exact whatever the month lengths.
    const days = date(run_date).until(date(day), { largestUnit: 'days' }).days;
    const longestStep = (isWeekBased(schedule.frequency) ? 7 * (schedule.frequency === 'biweekly' ? 2 : 1) : 31 * monthsPer(schedule.frequency)) * schedule.interval_count;
    seq += Math.floor(days / longestStep);
    run_date = runDateOf(schedule, seq);
    while (run_date < day) run_date = runDateOf(schedule, ++seq);
  }
  return seq;
}

/**
 * The first remaining occurrence dated on or after `day` (resume, restore of an
 * archived organization): the ones before it are skipped, not generated.
 * Null when none is allowed (end_date or max_occurrences reached).
 */
export function firstOccurrenceOnOrAfter(schedule: ScheduleCalendar, day: string): Occurrence | null {
  const seq = seqOnOrAfter(schedule, day);
  const run_date = runDateOf(schedule, seq);
  return allowed(schedule, run_date, schedule.occurrences) ? { seq, run_date } : null;
}

function monthsPer(frequency: Frequency): number {
  return { monthly: 1, quarterly: 3, biannually: 6, yearly: 12, weekly: 0, biweekly: 0 }[frequency];
}

/** The next run date after `after` (exclusive), or, without `after`, the schedule's next run date; null when the schedule is over. */
export function nextRunDate(schedule: ScheduleCalendar, after?: string): string | null {
  if (after === undefined) return nextOccurrence(schedule)?.run_date ?? null;
  const next = date(after).add({ days: 1 }).toString();
  return firstOccurrenceOnOrAfter(schedule, next)?.run_date ?? null;
}

/**
 * The next `n` run dates if every run succeeds (each counts toward
 * max_occurrences), for clients to preview a schedule before it fires.
 */
export function upcomingRunDates(schedule: ScheduleCalendar, n: number): string[] {
  const dates: string[] = [];
  for (let i = 0; i < n; i++) {
    const run_date = runDateOf(schedule, schedule.seq + i);
    if (!allowed(schedule, run_date, schedule.occurrences + i)) break;
    dates.push(run_date);
  }
  return dates;
}

/** "Today" for an organization at instant `now` (docs/api-decisions.md: Africa/Casablanca). */
export function businessToday(now: Date): string {
  return Temporal.Instant.fromEpochMilliseconds(now.getTime()).toZonedDateTimeISO(BUSINESS_TIME_ZONE).toPlainDate().toString();
}

/** `day` plus `days` calendar days (due dates). */
export function addDays(day: string, days: number): string {
  return date(day).add({ days }).toString();
}

/** The calendar fields a client sets. */
export interface CalendarInput {
  frequency: Frequency;
  interval_count: number;
  start_date: string;
  day_of_month: number | null;
  day_of_week: number | null;
  end_date: string | null;
  max_occurrences: number | null;
}

/** A new schedule's lattice: anchored on its first run, the first matching date on or after start_date. */
export function newCalendar(input: CalendarInput): ScheduleCalendar & DayRule {
  const rule = dayRuleFrom(input.frequency, input.start_date, { day_of_month: input.day_of_month, day_of_week: input.day_of_week });
  return {
    ...rule,
    interval_count: input.interval_count,
    anchor_date: firstMatchOnOrAfter(rule, input.start_date),
    anchor_seq: 0,
    seq: 0,
    occurrences: 0,
    end_date: input.end_date,
    max_occurrences: input.max_occurrences,
  };
}

/**
 * Re-anchors the lattice so that the next occurrence (seq) falls on the first
 * date on or after `from` that `rule` matches (resume with a date: `from` is
 * that date and the rule is taken from it; a change of frequency or interval:
 * `from` is the current next run date).
 */
export function reanchor<C extends ScheduleCalendar>(schedule: C, rule: DayRule, intervalCount: number, from: string): C & DayRule {
  return { ...schedule, ...rule, interval_count: intervalCount, anchor_date: firstMatchOnOrAfter(rule, from), anchor_seq: schedule.seq };
}
