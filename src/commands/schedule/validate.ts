/**
 * Domain rules of schedule fields (reference: Recurring schedule table;
 * docs/recurring.md; limits in docs/recurring.md). Every problem of a
 * command is collected into one VALIDATION_ERROR.
 */
import { DEFAULT_CURRENCY, isSupportedCurrency } from '../../shared/money.ts';
import { FieldErrors, isCalendarDate, readEnum, readText } from '../field-rules.ts';
import type { InvoiceCustomer } from '../invoice/commands.ts';
import { readLines, type LineValues } from '../invoice/lines.ts';
import { FREQUENCIES, isWeekBased, MAX_DAY_OF_MONTH, newCalendar, type Frequency } from './calendar.ts';
import type { CreateScheduleInput, SchedulePatch } from './commands.ts';
import type { SchedulePublic } from './events.ts';

export const SCHEDULE_LIMITS = {
  name: 200,
  interval_count: { min: 1, max: 12 },
  day_of_month: { min: 1, max: MAX_DAY_OF_MONTH },
  day_of_week: { min: 0, max: 6 },
  days_until_due: { min: 0, max: 365, default: 30 },
  max_occurrences: { min: 1, max: 10_000 },
  /** Run dates must number invoices (INV-YYYY-...) and stay far inside PostgreSQL's date range. */
  year: { min: 2000, max: 9000 },
} as const;

function readInteger(errors: FieldErrors, field: keyof typeof SCHEDULE_LIMITS, value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  const { min, max } = SCHEDULE_LIMITS[field] as { min: number; max: number };
  if (typeof value !== 'number' || !Number.isInteger(value)) errors.add(field, 'must be an integer');
  else if (value < min || value > max) errors.add(field, `must be between ${min} and ${max}`);
  else return value;
  return undefined;
}

export function readScheduleDate(errors: FieldErrors, field: string, value: unknown, required: boolean): string | null {
  if (value === undefined || value === null) {
    if (required) errors.add(field, 'is required');
    return null;
  }
  if (!isCalendarDate(value)) {
    errors.add(field, 'must be a calendar date (YYYY-MM-DD)');
    return null;
  }
  const year = Number(value.slice(0, 4));
  if (year < SCHEDULE_LIMITS.year.min || year > SCHEDULE_LIMITS.year.max) {
    errors.add(field, `must be in the years ${SCHEDULE_LIMITS.year.min} to ${SCHEDULE_LIMITS.year.max}`);
    return null;
  }
  return value;
}

function readBoolean(errors: FieldErrors, field: string, value: unknown): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') errors.add(field, 'must be a boolean');
  return value === true;
}

function readItems(errors: FieldErrors, value: unknown): LineValues[] {
  const lines = readLines(errors, value);
  if (Array.isArray(value) && value.length === 0) errors.add('items', 'must contain at least one line');
  return lines;
}

/** The day field of the other family of frequencies is refused, not dropped: a client sending it meant something. */
function checkDayFields(errors: FieldErrors, frequency: Frequency | undefined, dayOfMonth: number | null | undefined, dayOfWeek: number | null | undefined): void {
  if (!frequency) return;
  if (isWeekBased(frequency) && dayOfMonth != null) errors.add('day_of_month', `does not apply to ${frequency} schedules (use day_of_week)`);
  if (!isWeekBased(frequency) && dayOfWeek != null) errors.add('day_of_week', `does not apply to ${frequency} schedules (use day_of_month)`);
}

/**
 * The fields that place a schedule's runs (its day rule, calendar.ts dayRuleFrom): while one of them is refused,
 * no rule can say where a run falls. interval_count is not one: it spaces the runs after the next.
 */
export const DAY_RULE_FIELDS = ['frequency', 'day_of_month', 'day_of_week'];

/**
 * end_date must leave the schedule a run: not before the first, the first date on or after start_date that the
 * day rule matches. Judged beside the other fields, so one answer lists them all; when the day rule is refused
 * (`placed` false), an end_date before start_date is still before any run.
 */
function checkEndDate(errors: FieldErrors, values: NewScheduleValues, placed: boolean): void {
  const { start_date: start, end_date: end } = values;
  if (start === null || end === null) return;
  if (!placed) {
    if (end < start) errors.add('end_date', `must not be before start_date (${start})`);
    return;
  }
  const first = newCalendar(values).anchor_date;
  if (end < first) errors.add('end_date', `must not be before the first run date (${first})`);
}

/** customer_id names a customer of the organization that is not archived (inactive is allowed: its runs fail until reactivated). */
function checkCustomer(errors: FieldErrors, customerId: unknown, customer: InvoiceCustomer | null): void {
  if (typeof customerId !== 'string' || customerId === '') errors.add('customer_id', 'is required');
  else if (!customer || customer.id !== customerId) errors.add('customer_id', 'must name an existing customer');
  else if (customer.status === 'archived') errors.add('customer_id', 'customer is archived');
}

/** What a valid create body yields: the schedule's own fields (SchedulePublic, src/commands/schedule/events.ts). */
export type NewScheduleValues = Omit<SchedulePublic, 'id' | 'occurrences' | 'next_run_date' | 'status' | 'created_at' | 'updated_at' | 'version'>;

export function validateNewSchedule(input: CreateScheduleInput, customer: InvoiceCustomer | null): NewScheduleValues {
  const errors = new FieldErrors();
  checkCustomer(errors, input.customer_id, customer);
  const frequency = readEnum(errors, 'frequency', input.frequency, FREQUENCIES);
  const values: NewScheduleValues = {
    name: readText(errors, 'name', input.name, { max: SCHEDULE_LIMITS.name }) ?? null,
    customer_id: input.customer_id,
    frequency: frequency as Frequency,
    interval_count: readInteger(errors, 'interval_count', input.interval_count) ?? 1,
    day_of_month: readInteger(errors, 'day_of_month', input.day_of_month) ?? null,
    day_of_week: readInteger(errors, 'day_of_week', input.day_of_week) ?? null,
    start_date: readScheduleDate(errors, 'start_date', input.start_date, true) as string,
    end_date: readScheduleDate(errors, 'end_date', input.end_date, false),
    max_occurrences: readInteger(errors, 'max_occurrences', input.max_occurrences) ?? null,
    auto_finalize: readBoolean(errors, 'auto_finalize', input.auto_finalize) ?? false,
    auto_send: readBoolean(errors, 'auto_send', input.auto_send) ?? false,
    days_until_due: readInteger(errors, 'days_until_due', input.days_until_due) ?? SCHEDULE_LIMITS.days_until_due.default,
    currency: input.currency === undefined ? DEFAULT_CURRENCY : input.currency,
    items: readItems(errors, input.items),
  };
  // Before the family check: a day field of the other frequencies is refused, but the day rule never reads it.
  const placed = !errors.has(...DAY_RULE_FIELDS);
  if (input.currency !== undefined && !isSupportedCurrency(input.currency)) errors.add('currency', 'must be a supported ISO 4217 currency code');
  checkDayFields(errors, frequency, input.day_of_month, input.day_of_week);
  if (values.auto_send && !values.auto_finalize) errors.add('auto_send', 'requires auto_finalize (only a finalized invoice can be sent)');
  checkEndDate(errors, values, placed);
  errors.throwIfAny();
  return values;
}

export type NormalizedSchedulePatch = Partial<Omit<NewScheduleValues, 'customer_id' | 'start_date' | 'currency'>>;

/** Only the keys present are read; null clears name, end_date, max_occurrences and the day fields (back to their defaults). */
export function validateSchedulePatch(patch: SchedulePatch, errors = new FieldErrors()): NormalizedSchedulePatch {
  const has = (key: keyof SchedulePatch) => patch[key] !== undefined;
  const out: NormalizedSchedulePatch = {};
  if (has('name')) out.name = readText(errors, 'name', patch.name, { max: SCHEDULE_LIMITS.name }) ?? null;
  if (has('frequency')) out.frequency = readEnum(errors, 'frequency', patch.frequency, FREQUENCIES);
  if (has('interval_count')) out.interval_count = readInteger(errors, 'interval_count', patch.interval_count) ?? 1;
  if (has('day_of_month')) out.day_of_month = readInteger(errors, 'day_of_month', patch.day_of_month) ?? null;
  if (has('day_of_week')) out.day_of_week = readInteger(errors, 'day_of_week', patch.day_of_week) ?? null;
  if (has('end_date')) out.end_date = readScheduleDate(errors, 'end_date', patch.end_date, false);
  if (has('max_occurrences')) out.max_occurrences = readInteger(errors, 'max_occurrences', patch.max_occurrences) ?? null;
  if (has('auto_finalize')) out.auto_finalize = readBoolean(errors, 'auto_finalize', patch.auto_finalize);
  if (has('auto_send')) out.auto_send = readBoolean(errors, 'auto_send', patch.auto_send);
  if (has('days_until_due')) out.days_until_due = readInteger(errors, 'days_until_due', patch.days_until_due) ?? SCHEDULE_LIMITS.days_until_due.default;
  if (has('items')) out.items = readItems(errors, patch.items);
  return out;
}

export { checkDayFields };
