/**
 * JSON schemas of the recurring-schedule endpoints: ajv validates requests
 * with them and OpenAPI shows them. Every object is closed by the pipeline,
 * so an unknown field is a VALIDATION_ERROR. Bounds match the decider's
 * (src/commands/schedule/validate.ts), which re-checks the domain rules with
 * its own messages (day field of the wrong frequency, auto_send without
 * auto_finalize, end_date before the first run).
 */
import { FREQUENCIES } from '../../commands/schedule/calendar.ts';
import { SCHEDULE_STATUSES } from '../../commands/schedule/events.ts';
import { SCHEDULE_LIMITS } from '../../commands/schedule/validate.ts';
import { MAX_LINES } from '../../commands/invoice/lines.ts';
import type { JsonSchema } from '../route.ts';
import { lineInputSchema } from './invoices.ts';
import { named, representation } from '../openapi-named.ts';
import { pagingQuery } from './paging.ts';

const date: JsonSchema = { type: 'string', format: 'date', pattern: '^[1-9]' };
const nullableDate: JsonSchema = { type: ['string', 'null'], format: 'date', pattern: '^[1-9]' };
const bounded = (field: 'interval_count' | 'day_of_month' | 'day_of_week' | 'days_until_due' | 'max_occurrences', nullable: boolean, description: string): JsonSchema => ({
  type: nullable ? ['integer', 'null'] : 'integer',
  minimum: SCHEDULE_LIMITS[field].min,
  maximum: SCHEDULE_LIMITS[field].max,
  description,
});
const frequency: JsonSchema = { type: 'string', enum: [...FREQUENCIES] };
const items: JsonSchema = {
  type: 'array',
  minItems: 1,
  maxItems: MAX_LINES,
  items: lineInputSchema,
  description: 'The lines of every generated invoice. On PUT, replaces every line.',
};

const calendar = {
  frequency,
  interval_count: bounded('interval_count', false, 'Multiplies the period (monthly with 3 = every 3 months). Default 1.'),
  day_of_month: bounded('day_of_month', true, 'Monthly to yearly schedules: the run day (default: the start date\'s day, capped at 28).'),
  day_of_week: bounded('day_of_week', true, 'Weekly and biweekly schedules: 0 = Sunday .. 6 = Saturday (default: the start date\'s weekday).'),
  end_date: { ...nullableDate, description: 'Last day a run may fall on; the schedule completes after it.' },
  max_occurrences: bounded('max_occurrences', true, 'Invoices to generate at most (failed runs do not count); the schedule completes after the last.'),
  auto_finalize: { type: 'boolean', description: 'Finalize each generated invoice (it gets its official number). Default false.' },
  auto_send: { type: 'boolean', description: 'Send each generated invoice; requires auto_finalize. Default false.' },
  days_until_due: bounded('days_until_due', false, 'due_date = issue_date + this many days. Default 30.'),
  name: { type: ['string', 'null'], maxLength: SCHEDULE_LIMITS.name },
  items,
};

export const createScheduleBody: JsonSchema = named('CreateScheduleRequest', {
  type: 'object',
  required: ['customer_id', 'frequency', 'start_date', 'items'],
  properties: {
    customer_id: { type: 'string', description: 'An active or inactive (not archived) customer of the organization.' },
    start_date: { ...date, description: 'The first run is the first matching date on or after it (it may be in the past: missed runs are then generated).' },
    currency: { type: 'string', pattern: '^[A-Z]{3}$', description: 'ISO 4217 code, default MAD.' },
    ...calendar,
  },
});

/** PUT: every field optional; a change of frequency, interval or day re-anchors the run dates at the current next run date. */
export const updateScheduleBody: JsonSchema = named('UpdateScheduleRequest', { type: 'object', properties: calendar });

export const generateScheduleBody: JsonSchema = named('GenerateInvoiceRequest', {
  type: 'object',
  properties: { issue_date: { ...date, description: 'Issue date of the invoice; default today (Africa/Casablanca).' } },
});

export const resumeScheduleBody: JsonSchema = named('ResumeScheduleRequest', {
  type: 'object',
  properties: {
    next_run_date: {
      ...date,
      description: 'Re-anchors the schedule: the next run falls on it and later runs follow from it. Today or later; day 1..28 for monthly to yearly schedules. Without it, the schedule continues from the next matching date on or after today.',
    },
  },
});

export const listSchedulesQuery: JsonSchema = {
  type: 'object',
  properties: {
    ...pagingQuery,
    order: { type: 'string', enum: ['asc', 'desc'], default: 'desc', description: 'By created_at, then id.' },
    status: { type: 'string', enum: [...SCHEDULE_STATUSES] },
    customer_id: { type: 'string', format: 'uuid' },
    frequency,
    search: { type: 'string', maxLength: 200, description: 'Case- and accent-insensitive substring of the schedule\'s name or its customer\'s name.' },
  },
};

export const historyQuery: JsonSchema = {
  type: 'object',
  properties: { limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
};

const nullableString = { type: ['string', 'null'] };
const datetime = { type: 'string', format: 'date-time' };

export const historyEntrySchema: JsonSchema = named('ScheduleRun', representation({
  id: { type: 'string', format: 'uuid' },
  run_date: { type: 'string', format: 'date', description: 'The occurrence this run consumed.' },
  invoice_id: { type: ['string', 'null'], format: 'uuid' },
  invoice_number: { ...nullableString, description: 'Null when the invoice was left as a draft, or the run failed.' },
  status: { type: 'string', enum: ['success', 'failed'] },
  error: representation({ code: { type: 'string' }, message: { type: 'string' } }, { nullable: true, description: 'Why the run failed (null when it succeeded).' }),
  created_at: datetime,
}));

const scheduleItemSchema: JsonSchema = named('ScheduleItem', representation({
  description: { type: 'string' },
  quantity: { type: 'string', description: 'Decimal string.' },
  unit_price: { type: 'string', description: 'Decimal string.' },
  tax_rate: { type: 'string', description: 'Percent, decimal string.' },
}));

/** The schedule representation (docs/recurring.md) of lists. */
export const scheduleSchema: JsonSchema = named('Schedule', representation({
  id: { type: 'string', format: 'uuid' },
  name: nullableString,
  customer_id: { type: 'string', format: 'uuid' },
  frequency,
  interval_count: { type: 'integer' },
  day_of_month: { type: ['integer', 'null'] },
  day_of_week: { type: ['integer', 'null'] },
  start_date: { type: 'string', format: 'date' },
  end_date: { type: ['string', 'null'], format: 'date' },
  max_occurrences: { type: ['integer', 'null'] },
  occurrences: { type: 'integer', description: 'Invoices generated so far.' },
  next_run_date: { type: ['string', 'null'], format: 'date', description: 'While active; null when paused, completed or cancelled.' },
  auto_finalize: { type: 'boolean' },
  auto_send: { type: 'boolean' },
  days_until_due: { type: 'integer' },
  currency: { type: 'string' },
  items: { type: 'array', items: scheduleItemSchema },
  status: { type: 'string', enum: [...SCHEDULE_STATUSES] },
  created_at: datetime,
  updated_at: datetime,
  version: { type: 'integer', description: 'Also sent as the ETag.' },
}));

/** Single reads and every write's answer add the next run dates and the latest runs. */
export const scheduleDetailSchema: JsonSchema = named('ScheduleWithHistory', {
  allOf: [
    scheduleSchema,
    representation({
      upcoming_run_dates: { type: 'array', items: { type: 'string', format: 'date' }, description: 'The next 5 run dates if every run succeeds (empty unless active).' },
      history: { type: 'array', items: historyEntrySchema, description: 'The latest 20 runs, latest first.' },
    }),
  ],
});

export const deletedScheduleSchema: JsonSchema = named('DeletedSchedule', representation({
  id: { type: 'string', format: 'uuid' },
  deleted: { type: 'boolean', const: true },
}));
