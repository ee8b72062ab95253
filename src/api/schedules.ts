/**
 * /recurring-invoices (reference: Recurring invoices endpoints;
 * docs/recurring.md, docs/api-decisions.md). Reads come from the
 * recurring_schedules and schedule_runs read models; writes run a schedule
 * command handler, wait until the projectors have passed the appended
 * position (read your writes), then answer from the read model like a GET.
 * Generate answers the generated invoice (201), as POST /invoices would.
 */
import { businessToday } from '../commands/schedule/calendar.ts';
import { generateOccurrence } from '../commands/schedule/generate.ts';
import { canGenerate, canResume, canUpdate, dueDateOf, patchSchedule, readResumeDate } from '../commands/schedule/decider.ts';
import {
  createSchedule,
  deleteSchedule,
  loadSchedule,
  pauseSchedule,
  resumeSchedule,
  updateSchedule,
  type ScheduleResult,
  type ScheduleWrite,
} from '../commands/schedule/handler.ts';
import { publicSchedule, type Schedule } from '../commands/schedule/events.ts';
import type { InvoiceResult } from '../commands/invoice/handlers.ts';
import { readModelFacts } from '../queries/invoice-facts.ts';
import { requestFacts } from './pipeline/prefetch.ts';
import { getSchedule, listSchedules, planOf, quotaUse, scheduleHistory, type ScheduleListQuery } from '../queries/schedules.ts';
import { upcomingRunDates } from '../commands/schedule/calendar.ts';
import { DomainError, notFound } from '../shared/errors.ts';
import { isPlan, PLAN_LIMITS } from '../accounts/plans.ts';
import { newestNotInline } from '../projections/inline.ts';
import { answerAfterWrite } from './answer.ts';
import { writtenInvoice } from './invoices.ts';
import type { JsonReply, RequestContext, RouteSpec } from './route.ts';
import * as schemas from './schemas/schedules.ts';
import { invoiceWithCustomerSchema } from './schemas/invoices.ts';
import { validateNewSchedule, validateSchedulePatch } from '../commands/schedule/validate.ts';
import { FieldErrors, isCalendarDate } from '../commands/field-rules.ts';
import { asRecord, fieldErrorsOf, type BodyCheckContext } from './body-check.ts';

const organizationOf = (ctx: RequestContext) => ctx.organizationId!; // organization routes always have one
const TAG = 'Recurring invoices';

function write(ctx: RequestContext): ScheduleWrite {
  return {
    store: ctx.store,
    organizationId: organizationOf(ctx),
    metadata: ctx.metadata(),
    ifMatch: ctx.ifMatch,
    // Under an Idempotency-Key, every attempt's event gets the same id (ExecuteOptions.commandId).
    commandId: ctx.idempotencySeed ? ctx.newId('command') : undefined,
  };
}

/**
 * The log position the schedules runner must have passed before this
 * write's row and history can be read (null: none). Written inline
 * (src/projections/inline.ts), the row is in, but the history is the runs of
 * the schedule's earlier events: those of events nobody wrote inline (the
 * scheduler's: docs/architecture.md "Not the scheduler's writes") are in
 * once the runner has passed the newest of them. Otherwise: the write's own.
 */
function readAfter(ctx: RequestContext, result: ScheduleResult): string | null {
  if (result.position === null) return null;
  if (!ctx.rt.inline?.answered(result.position, ['schedules'])) return result.position;
  return newestNotInline(result.earlier, 'schedules')?.position ?? null;
}

/**
 * The response of a schedule write: the read-model row once the schedules
 * projector passed what it needs (readAfter); if it does not within the
 * wait, the schedule as decided, with the history as the table has it (the
 * write happened all the same).
 */
async function answer(ctx: RequestContext, result: ScheduleResult, status = 200): Promise<JsonReply> {
  const decided = result.state.schedule!;
  const db = ctx.rt.database.db;
  const after = readAfter(ctx, result);
  if (after === null || (await ctx.rt.progress.waitFor(after, undefined, ['schedules']))) {
    const stored = await getSchedule(db, organizationOf(ctx), decided.id);
    if (stored && stored.version >= decided.version) return { status, data: stored, version: stored.version };
  }
  ctx.rt.logger.warn({ request_id: ctx.requestId, position: result.position }, 'schedules: projector behind, answering the decided state');
  const upcoming = decided.status === 'active' ? upcomingRunDates(decided, 5) : [];
  const history = await scheduleHistory(db, organizationOf(ctx), decided.id);
  return { status, data: { ...publicSchedule(decided), upcoming_run_dates: upcoming, history }, version: decided.version };
}

/**
 * The generated invoice, as POST /invoices answers it (src/api/answer.ts), once both the invoices and
 * the schedules read models have passed the newer of the two appends.
 */
function answerInvoice(ctx: RequestContext, result: InvoiceResult, schedulePosition: string | null): Promise<JsonReply> {
  const newest = [result.position, schedulePosition].filter((p): p is string => p !== null).sort().at(-1)!;
  return answerAfterWrite(ctx, { ...writtenInvoice, projectors: ['invoices', 'schedules'], position: () => newest }, result, 201);
}

/** The plan's quota and the read model's count of active and paused schedules (and of those above the quota). */
async function quotaOf(ctx: RequestContext): Promise<{ quota: number; used: number; above: number }> {
  const db = ctx.rt.database.db;
  const organizationId = organizationOf(ctx);
  const plan = await planOf(db, organizationId);
  const quota = isPlan(plan) ? PLAN_LIMITS[plan].recurringSchedulesLimit : 0;
  return { quota, ...(await quotaUse(db, organizationId, quota)) };
}

const today = () => businessToday(new Date());

/** The decider's rules of a create body, with the customer it names (RouteSpec.check). */
async function newScheduleErrors(ctx: BodyCheckContext, body: unknown) {
  const input = asRecord(body);
  const id = input.customer_id;
  const customer = await readModelFacts(ctx.rt.database.pool).customer(ctx.organizationId!, id); // null unless a UUID of one of its customers
  return fieldErrorsOf(() => validateNewSchedule({ ...input, customer_id: typeof id === 'string' ? id.toLowerCase() : id } as never, customer));
}

/** The schedule of the path as its stream has it (RouteSpec.check), or null when the organization has none by that id (the command answers 404). */
async function storedSchedule(ctx: BodyCheckContext): Promise<Schedule | null> {
  try {
    return (await loadSchedule(ctx.rt.store, ctx.organizationId!, ctx.params.id)).state.schedule;
  } catch (err) {
    if (err instanceof DomainError && err.code === 'NOT_FOUND') return null;
    throw err;
  }
}

/**
 * The decider's rules of a PUT body on the schedule as stored (RouteSpec.check): a body the schema refused also
 * hears what its end_date, max_occurrences, auto_send or calendar would do to that schedule. Without one, the
 * fields' own rules.
 */
async function schedulePatchErrors(ctx: BodyCheckContext, body: unknown) {
  const patch = asRecord(body);
  const current = await storedSchedule(ctx);
  // Only where the command would judge them: a completed or cancelled schedule answers INVALID_STATE to any PUT.
  if (current && canUpdate(current)) return fieldErrorsOf(() => patchSchedule(current, patch));
  const errors = new FieldErrors();
  fieldErrorsOf(() => validateSchedulePatch(patch, errors));
  return errors.fields;
}

/** Generate's rule on its issue_date, with the stored schedule's days_until_due (RouteSpec.check). */
async function generateErrors(ctx: BodyCheckContext, body: unknown) {
  const issueDate = asRecord(body).issue_date;
  const schedule = isCalendarDate(issueDate) ? await storedSchedule(ctx) : null;
  return schedule && canGenerate(schedule) ? fieldErrorsOf(() => dueDateOf(schedule, issueDate)) : []; // else INVALID_STATE
}

/** Resume's rules on its next_run_date, against the stored schedule (RouteSpec.check); without a date it reads none. */
async function resumeErrors(ctx: BodyCheckContext, body: unknown) {
  const date = asRecord(body).next_run_date;
  const schedule = isCalendarDate(date) ? await storedSchedule(ctx) : null; // a date the schema refuses is its own error
  return schedule && canResume(schedule) ? fieldErrorsOf(() => readResumeDate(schedule, date, today())) : []; // else INVALID_STATE
}

export const scheduleRoutes: RouteSpec[] = [
  {
    operationId: 'listRecurringInvoices',
    method: 'get',
    path: '/recurring-invoices',
    summary: 'List recurring schedules',
    tag: TAG,
    scope: 'invoices:read',
    audience: 'organization',
    query: schemas.listSchedulesQuery,
    response: { type: 'array', items: schemas.scheduleSchema },
    async handler(ctx, { query }: { query: ScheduleListQuery }) {
      const { data, total } = await listSchedules(ctx.rt.database.db, organizationOf(ctx), query);
      return { data, pagination: { total, page: query.page, perPage: query.per_page, totalPages: Math.ceil(total / query.per_page) } };
    },
  },
  {
    operationId: 'getRecurringInvoice',
    method: 'get',
    path: '/recurring-invoices/:id',
    summary: 'Read a recurring schedule (with its next 5 run dates and latest 20 runs)',
    tag: TAG,
    scope: 'invoices:read',
    audience: 'organization',
    response: schemas.scheduleDetailSchema,
    async handler(ctx, { params }) {
      const schedule = await getSchedule(ctx.rt.database.db, organizationOf(ctx), params.id);
      if (!schedule) throw notFound('Recurring schedule');
      return { data: schedule, version: schedule.version };
    },
  },
  {
    operationId: 'createRecurringInvoice',
    method: 'post',
    path: '/recurring-invoices',
    summary: 'Create a recurring schedule',
    tag: TAG,
    scope: 'invoices:write',
    audience: 'organization',
    body: schemas.createScheduleBody,
    check: newScheduleErrors,
    prefetch: 'customer-of-body',
    successStatus: 201,
    location: '/recurring-invoices/:id',
    response: schemas.scheduleDetailSchema,
    errors: ['QUOTA_EXCEEDED'],
    async handler(ctx, { body }) {
      const quota = await quotaOf(ctx);
      const customer = await requestFacts(ctx).customer(organizationOf(ctx), body.customer_id);
      const input = { ...body, customer_id: typeof body.customer_id === 'string' ? body.customer_id.toLowerCase() : body.customer_id };
      const result = await createSchedule(write(ctx), { scheduleId: ctx.newId('schedule'), input, customer, ...quota });
      return answer(ctx, result, 201);
    },
  },
  {
    operationId: 'updateRecurringInvoice',
    method: 'put',
    path: '/recurring-invoices/:id',
    summary: 'Update a recurring schedule (active or paused)',
    tag: TAG,
    scope: 'invoices:write',
    audience: 'organization',
    body: schemas.updateScheduleBody,
    check: schedulePatchErrors,
    response: schemas.scheduleDetailSchema,
    errors: ['INVALID_STATE', 'VERSION_CONFLICT'],
    async handler(ctx, { params, body }) {
      return answer(ctx, await updateSchedule(write(ctx), params.id, body));
    },
  },
  {
    operationId: 'deleteRecurringInvoice',
    method: 'delete',
    path: '/recurring-invoices/:id',
    summary: 'Delete a recurring schedule and its history (its invoices stay)',
    tag: TAG,
    scope: 'invoices:write',
    audience: 'organization',
    response: schemas.deletedScheduleSchema,
    errors: ['VERSION_CONFLICT'],
    async handler(ctx, { params }) {
      const result = await deleteSchedule(write(ctx), params.id);
      if (result.position !== null && !ctx.rt.inline?.answered(result.position, ['schedules'])) await ctx.rt.progress.waitFor(result.position, undefined, ['schedules']);
      return { data: { id: params.id, deleted: true } };
    },
  },
  {
    operationId: 'generateRecurringInvoice',
    method: 'post',
    path: '/recurring-invoices/:id/generate',
    summary: 'Generate the next invoice now (counts as the next occurrence)',
    tag: TAG,
    scope: 'invoices:write',
    audience: 'organization',
    body: schemas.generateScheduleBody,
    check: generateErrors,
    successStatus: 201,
    location: '/invoices/:id',
    response: invoiceWithCustomerSchema,
    errors: ['INVALID_STATE', 'CUSTOMER_INACTIVE', 'VERSION_CONFLICT'],
    async handler(ctx, { params, body }) {
      const w = write(ctx);
      const deps = { store: ctx.store, facts: requestFacts(ctx), organizationId: organizationOf(ctx), metadata: w.metadata };
      const generated = await generateOccurrence(deps, params.id, { issueDate: body?.issue_date ?? today(), commandId: w.commandId, ifMatch: ctx.ifMatch });
      return answerInvoice(ctx, generated!.invoice, generated!.schedule.position);
    },
  },
  {
    operationId: 'listRecurringInvoiceHistory',
    method: 'get',
    path: '/recurring-invoices/:id/history',
    summary: 'Runs of a recurring schedule, latest first',
    tag: TAG,
    scope: 'invoices:read',
    audience: 'organization',
    query: schemas.historyQuery,
    response: { type: 'array', items: schemas.historyEntrySchema },
    async handler(ctx, { params, query }: { params: Record<string, string>; query: { limit: number } }) {
      const db = ctx.rt.database.db;
      const schedule = await getSchedule(db, organizationOf(ctx), params.id);
      if (!schedule) throw notFound('Recurring schedule');
      return { data: await scheduleHistory(db, organizationOf(ctx), params.id, query.limit) };
    },
  },
  {
    operationId: 'pauseRecurringInvoice',
    method: 'post',
    path: '/recurring-invoices/:id/pause',
    summary: 'Pause a recurring schedule (runs falling due while paused are skipped)',
    tag: TAG,
    scope: 'invoices:write',
    audience: 'organization',
    response: schemas.scheduleDetailSchema,
    errors: ['INVALID_STATE', 'VERSION_CONFLICT'],
    async handler(ctx, { params }) {
      return answer(ctx, await pauseSchedule(write(ctx), params.id));
    },
  },
  {
    operationId: 'resumeRecurringInvoice',
    method: 'post',
    path: '/recurring-invoices/:id/resume',
    summary: 'Resume a paused schedule, optionally from a new next_run_date',
    tag: TAG,
    scope: 'invoices:write',
    audience: 'organization',
    body: schemas.resumeScheduleBody,
    check: resumeErrors,
    response: schemas.scheduleDetailSchema,
    errors: ['INVALID_STATE', 'VERSION_CONFLICT'],
    async handler(ctx, { params, body }) {
      return answer(ctx, await resumeSchedule(write(ctx), params.id, today(), body?.next_run_date));
    },
  },
];
