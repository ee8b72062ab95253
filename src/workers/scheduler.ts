/**
 * The recurring scheduler (role `scheduler`; docs/architecture.md;
 * docs/recurring.md). node-cron ticks on SCHEDULER_CRON; each tick:
 *
 *  - runs in one process at a time: it takes a PostgreSQL advisory lock for
 *    the tick and skips the tick when another process holds it (a process
 *    that dies frees it with its connection);
 *  - reads the due schedules from the read model (active, next_run_date on or
 *    before today in Africa/Casablanca, organization not archived), oldest
 *    run first, and for each generates its due occurrences one by one,
 *    oldest first, each with its own run date, through the ordinary invoice
 *    commands (src/commands/schedule/generate.ts);
 *  - a run refused by a rule (CUSTOMER_INACTIVE, a finalize VALIDATION_ERROR)
 *    is recorded in the schedule's history; it is retried by the next ticks
 *    of its own day, then the schedule moves on. Any other error (the
 *    database is down) records nothing: the next tick tries again.
 *  - bounded: at most MAX_PER_SCHEDULE occurrences per schedule and
 *    MAX_PER_TICK in all, so a long outage is caught up over several ticks.
 *
 * Correctness never depends on a tick running once: every occurrence's
 * invoice has an id derived from (schedule, occurrence) and is created with
 * "stream must not exist", and recording an occurrence twice decides nothing.
 * The clock is a parameter (tests give a fixed date; nothing sleeps for one).
 */
import cron from 'node-cron';
import type pg from 'pg';
import { businessToday } from '../commands/schedule/calendar.ts';
import { generateOccurrence, memoizedFacts } from '../commands/schedule/generate.ts';
import { loadSchedule, runScheduleCommand } from '../commands/schedule/handler.ts';
import { ConfigError } from '../config.ts';
import type { EventMetadata, EventStore } from '../eventstore/types.ts';
import { readModelFacts, type InvoiceFacts } from '../queries/invoice-facts.ts';
import { dueSchedules, type DueSchedule } from '../queries/schedules.ts';
import { organizationArchived } from '../queries/organizations.ts';
import { DomainError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import type { Kysely } from 'kysely';
import type { Worker } from './worker.ts';
import type { Database } from '../db/schema.ts';
import type { Runtime } from '../runtime.ts';

/** Advisory lock key of the scheduler's tick (any constant unique among the service's locks). */
export const SCHEDULER_LOCK_KEY = 7_311_000_011;
export const MAX_PER_SCHEDULE = 100;
export const MAX_PER_TICK = 10_000;
/** Schedules generated side by side (their invoices' numbers still come one by one from each numbering stream). */
const CONCURRENCY = 16;
const PAGE = 500;

export interface SchedulerDeps {
  db: Kysely<Database>;
  pool: pg.Pool;
  store: EventStore;
  logger: Logger;
}

/**
 * The scheduler's dependencies in a process. Its appends go through the
 * background store: no client waits on them, so their read-model rows are
 * left to the runners, which write them many events per transaction (a tick
 * of 5,000 occurrences took twice as long with each append writing its own:
 * docs/performance.md "The scheduler's tick without inline projections").
 * What the tick reads is unaffected: the due list is only where to start
 * (each schedule is loaded from its stream), and customers and organizations
 * are not the scheduler's writes.
 */
export function schedulerDeps(rt: Runtime): SchedulerDeps {
  return { db: rt.database.db, pool: rt.database.pool, store: rt.backgroundStore, logger: rt.logger };
}

export interface TickReport {
  /** False when another process held the tick. */
  ran: boolean;
  generated: number;
  failed: number;
  /** Failed runs whose day ended: the schedule moved past them. */
  closed: number;
}

/** Events are stamped with the wall clock: the tick's `now` only decides which day it is. */
function systemMetadata(organizationId: string): EventMetadata {
  return { organization_id: organizationId, actor: 'system', request_id: null, correlation_id: null, causation_id: null, occurred_at: new Date().toISOString() };
}

/** What one run did; `last`: the schedule has nothing more due today (known without reading it again). */
type Step = 'generated' | 'generated, last' | 'failed' | 'closed' | 'stop';

/** One occurrence of one schedule, if due: generate it, record its failure, or close a failure whose day is over. */
async function runOne(deps: SchedulerDeps, due: DueSchedule, today: string, facts: InvoiceFacts): Promise<Step> {
  const { store } = deps;
  const metadata = systemMetadata(due.organization_id);
  const w = { store, organizationId: due.organization_id, metadata };
  const loaded = await loadSchedule(store, due.organization_id, due.id);
  const s = loaded.state.schedule!;
  if (s.status !== 'active' || s.next_run_date === null || s.next_run_date > today) return 'stop';
  const command = { now: metadata.occurred_at, actor: 'system', organization_id: due.organization_id };
  if (s.pending_failure?.seq === s.seq && s.pending_failure.run_date < today) {
    await runScheduleCommand(w, { type: 'CloseFailedOccurrence', data: { schedule_id: s.id, seq: s.seq, today }, metadata: command }, loaded);
    return 'closed';
  }
  try {
    const done = await generateOccurrence({ ...w, facts }, s.id, { seq: s.seq, loaded });
    if (!done) return 'stop';
    // The schedule as its recording left it: when nothing more is due today (the usual case, one occurrence
    // per tick), the catch-up ends here rather than read the stream again to find that out.
    const after = done.schedule.events.length > 0 ? done.schedule.state.schedule : undefined;
    const last = !!after && (after.status !== 'active' || after.next_run_date === null || after.next_run_date > today);
    return last ? 'generated, last' : 'generated';
  } catch (err) {
    if (!(err instanceof DomainError) || err.code === 'NOT_FOUND') throw err;
    // The history shows a run's error as code and message: a refusal's fields go into the message
    // ("The request is invalid. customer.ice: is required"), as generate's own answer lists them.
    const fields = (err.details as { fields?: { field: string; message: string }[] } | undefined)?.fields;
    const error = { code: err.code, message: fields?.length ? `${err.message} ${fields.map((f) => `${f.field}: ${f.message}`).join('; ')}` : err.message };
    const result = await runScheduleCommand(w, { type: 'RecordFailure', data: { schedule_id: s.id, seq: s.seq, error, today }, metadata: command }, loaded);
    // A failure on its own day is retried by the next tick; a catch-up run's day is over: move on.
    const moved = result.state.schedule?.seq !== s.seq;
    return moved ? 'failed' : 'stop';
  }
}

/** Every due occurrence of one schedule, oldest first, up to the per-schedule bound. */
async function catchUp(deps: SchedulerDeps, due: DueSchedule, today: string, budget: { left: number }, report: TickReport): Promise<void> {
  for (let n = 0; n < MAX_PER_SCHEDULE && budget.left > 0; n++) {
    // The due list checked the organization (not archived) and the schedule's reactions when the tick began. A
    // catch-up's later runs check again, for an archive that came meanwhile must stop it, and read the customer and
    // the seller afresh (an archived or inactive customer fails the run instead of being invoiced). Each run reads
    // them once, not by each of its invoice commands; the usual tick runs one occurrence per schedule, and pays nothing more.
    if (n > 0 && (await organizationArchived(deps.db, due.organization_id))) return;
    const facts = memoizedFacts(readModelFacts(deps.pool));
    budget.left--;
    let step: Step;
    try {
      step = await runOne(deps, due, today, facts);
    } catch (err) {
      // Deleted while it caught up (its DELETE came between two runs): nothing is left to run, nothing failed.
      if (err instanceof DomainError && err.code === 'NOT_FOUND') {
        deps.logger.info({ schedule_id: due.id }, 'scheduler: schedule deleted during its catch-up');
        return;
      }
      deps.logger.error({ err, schedule_id: due.id }, 'scheduler: run failed, retried next tick');
      return;
    }
    if (step === 'generated' || step === 'generated, last') report.generated++;
    else if (step === 'failed') report.failed++;
    else if (step === 'closed') report.closed++;
    if (step === 'stop' || step === 'generated, last') return;
  }
}

/** One tick at instant `now` (which decides "today"). */
export async function runSchedulerTick(deps: SchedulerDeps, now: Date): Promise<TickReport> {
  const report: TickReport = { ran: false, generated: 0, failed: 0, closed: 0 };
  const client = await deps.pool.connect();
  try {
    const { rows } = await client.query<{ locked: boolean }>('select pg_try_advisory_lock($1) as locked', [SCHEDULER_LOCK_KEY]);
    if (!rows[0].locked) return report;
    report.ran = true;
    try {
      const today = businessToday(now);
      const budget = { left: MAX_PER_TICK };
      let after: DueSchedule | undefined;
      while (budget.left > 0) {
        const page = await dueSchedules(deps.db, today, PAGE, after && { next_run_date: after.next_run_date, id: after.id });
        if (page.length === 0) break;
        after = page[page.length - 1];
        let next = 0;
        const lane = async () => {
          while (next < page.length && budget.left > 0) await catchUp(deps, page[next++], today, budget, report);
        };
        await Promise.all(Array.from({ length: CONCURRENCY }, lane));
        if (page.length < PAGE) break;
      }
    } finally {
      await client.query('select pg_advisory_unlock($1)', [SCHEDULER_LOCK_KEY]);
    }
    return report;
  } finally {
    client.release();
  }
}

/** The worker: `clock` is the scheduler's notion of now (tests pass their own). */
export function schedulerWorker(options: { clock?: () => Date } = {}): Worker {
  const clock = options.clock ?? (() => new Date());
  return {
    name: 'scheduler',
    role: 'scheduler',
    async start(rt) {
      const expression = rt.config.schedulerCron;
      if (!cron.validate(expression)) throw new ConfigError('SCHEDULER_CRON', `"${expression}" is not a cron expression`);
      const deps = schedulerDeps(rt);
      let running: Promise<unknown> = Promise.resolve();
      let busy = false;
      let stopped = false;
      const tick = () => {
        if (busy || stopped) return; // a long catch-up simply skips the ticks it overlaps
        busy = true;
        const started = performance.now();
        running = runSchedulerTick(deps, clock())
          .then((r) => {
            // With its duration: how long a catch-up takes is what an operator sizes the cron and the machine by.
            if (r.generated + r.failed + r.closed > 0) rt.logger.info({ ...r, ms: Math.round(performance.now() - started) }, 'scheduler tick');
          })
          .catch((err) => rt.logger.error({ err }, 'scheduler tick failed'))
          .finally(() => (busy = false));
      };
      // node-cron's own messages (e.g. a tick missed while the event loop was busy) go to our log, not to the console.
      const logger = {
        info: (m: string) => rt.logger.debug({ cron: m }, 'node-cron'),
        warn: (m: string) => rt.logger.debug({ cron: m }, 'node-cron'),
        error: (m: string | Error, err?: Error) => rt.logger.error({ err: err ?? m }, 'node-cron'),
        debug: (m: string | Error) => rt.logger.debug({ cron: String(m) }, 'node-cron'),
      };
      const task = cron.schedule(expression, tick, { name: 'recurring-scheduler', logger });
      return {
        async stop() {
          stopped = true;
          await task.stop();
          await running;
        },
      };
    },
  };
}
