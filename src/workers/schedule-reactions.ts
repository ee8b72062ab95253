/**
 * How schedules react to other aggregates' events (docs/recurring.md;
 * docs/recurring.md):
 *  - a customer archived (DELETE, or PATCH status archived): its active and
 *    paused schedules are cancelled;
 *  - an organization restored: its active schedules skip the runs that fell
 *    due while it was archived (nothing is generated for the frozen time).
 *
 * A checkpointed log consumer (like reservation recovery: not a read model,
 * writes do not wait for it) inserts one row per such event into
 * schedule_reactions in its checkpoint's transaction. The worker then, for
 * each row, waits until the schedules read model has passed the event, runs
 * the commands on the schedules it lists, and deletes the row. The commands
 * are idempotent (cancelling a cancelled schedule, skipping to the same day
 * decide nothing), so a row handled twice after a crash changes nothing.
 * Role 'scheduler'. The clock (the restore's "today") is a parameter.
 */
import type { Kysely, Transaction } from 'kysely';
import { businessToday } from '../commands/schedule/calendar.ts';
import type { ScheduleCommand } from '../commands/schedule/commands.ts';
import { loadSchedule, runScheduleCommand } from '../commands/schedule/handler.ts';
import type { Customer } from '../commands/customer/events.ts';
import type { EventMetadata, EventStore, RecordedEvent } from '../eventstore/types.ts';
import type { ProjectionProgress } from '../projections/progress.ts';
import type { Projector } from '../projections/projector.ts';
import { ProjectionRunner } from '../projections/runner.ts';
import { activeScheduleIds, liveScheduleIdsOfCustomer } from '../queries/schedules.ts';
import type { Logger } from '../shared/logger.ts';
import type { Worker } from './worker.ts';
import type { Database } from '../db/schema.ts';

const SWEEP_EVERY_MS = 1_000;
const BATCH = 100;

interface ReactionRow {
  event_id: string;
  kind: 'customer_archived' | 'organization_restored';
  organization_id: string;
  subject_id: string;
  position: string;
  occurred_at: Date | string;
}

/** The reaction an event calls for, or null. */
function reactionOf(e: RecordedEvent): ReactionRow | null {
  const organizationId = e.metadata.organization_id;
  if (!organizationId) return null;
  const base = { event_id: e.id, organization_id: organizationId, position: e.position, occurred_at: e.created_at };
  if (e.type === 'CustomerArchived' || e.type === 'CustomerUpdated') {
    const customer = (e.data as { customer: Customer }).customer;
    const archivedNow = e.type === 'CustomerArchived' || (customer.status === 'archived' && (e.data as { changed_fields: string[] }).changed_fields.includes('status'));
    return archivedNow ? { ...base, kind: 'customer_archived', subject_id: customer.id } : null;
  }
  if (e.type === 'OrganizationRestored') return { ...base, kind: 'organization_restored', subject_id: organizationId };
  return null;
}

export const scheduleReactionsConsumer: Projector = {
  name: 'schedule-reactions',
  handles: ['CustomerArchived', 'CustomerUpdated', 'OrganizationRestored'],
  tables: ['schedule_reactions'],
  async apply(events: RecordedEvent[], trx: Transaction<any>): Promise<void> {
    const rows = events.map(reactionOf).filter((r): r is ReactionRow => r !== null);
    if (rows.length === 0) return;
    await trx.insertInto('schedule_reactions').values(rows).onConflict((oc) => oc.column('event_id').doNothing()).execute();
  },
};

export interface ReactionDeps {
  db: Kysely<Database>;
  store: EventStore;
  logger: Logger;
  progress: ProjectionProgress;
  clock: () => Date;
}

function systemMetadata(row: ReactionRow, now: Date): EventMetadata {
  return { organization_id: row.organization_id, actor: 'system', request_id: null, correlation_id: null, causation_id: row.event_id, occurred_at: now.toISOString() };
}

async function react(deps: ReactionDeps, row: ReactionRow): Promise<void> {
  const now = deps.clock();
  const metadata = systemMetadata(row, new Date()); // events carry the wall clock; `now` decides the day
  const command = { now: metadata.occurred_at, actor: 'system', organization_id: row.organization_id };
  const ids = row.kind === 'customer_archived'
    ? await liveScheduleIdsOfCustomer(deps.db, row.organization_id, row.subject_id)
    : await activeScheduleIds(deps.db, row.organization_id);
  const today = businessToday(now);
  for (const id of ids) {
    const build = (): ScheduleCommand =>
      row.kind === 'customer_archived'
        ? { type: 'CancelSchedule', data: { schedule_id: id, reason: 'customer_archived' }, metadata: command }
        : { type: 'SkipFrozenOccurrences', data: { schedule_id: id, today }, metadata: command };
    const loaded = await loadSchedule(deps.store, row.organization_id, id);
    await runScheduleCommand({ store: deps.store, organizationId: row.organization_id, metadata }, build(), loaded);
  }
}

/** Handles the pending reactions, oldest event first; returns how many it completed. */
export async function runScheduleReactions(deps: ReactionDeps): Promise<number> {
  const rows = (await deps.db.selectFrom('schedule_reactions').selectAll().orderBy('position').limit(BATCH).execute()) as ReactionRow[];
  let done = 0;
  for (const row of rows) {
    // The schedules read model must include everything up to the event: the schedules created before it.
    if (!(await deps.progress.waitFor(row.position, 5_000, ['schedules']))) break;
    try {
      await react(deps, row);
      await deps.db.deleteFrom('schedule_reactions').where('event_id', '=', row.event_id).execute();
      done++;
    } catch (err) {
      deps.logger.error({ err, event_id: row.event_id, kind: row.kind }, 'schedule reaction failed, retried');
      await deps.db
        .updateTable('schedule_reactions')
        .set((eb) => ({ attempts: eb('attempts', '+', 1), last_error: String((err as Error)?.message ?? err).slice(0, 500) }))
        .where('event_id', '=', row.event_id)
        .execute();
    }
  }
  return done;
}

export function scheduleReactionsWorker(options: { clock?: () => Date } = {}): Worker {
  return {
    name: 'schedule-reactions',
    role: 'scheduler',
    async start(rt) {
      const deps: ReactionDeps = { db: rt.database.db, store: rt.store, logger: rt.logger, progress: rt.progress, clock: options.clock ?? (() => new Date()) };
      const runner = new ProjectionRunner({ db: rt.database.db, store: rt.store, url: rt.database.url, logger: rt.logger, progress: rt.progress }, scheduleReactionsConsumer);
      runner.start();
      let running: Promise<unknown> = Promise.resolve();
      let busy = false;
      const sweep = () => {
        if (busy || runner.state !== 'running') return; // the process holding the consumer reacts
        busy = true;
        running = runScheduleReactions(deps)
          .catch((err) => rt.logger.error({ err }, 'schedule reactions sweep failed'))
          .finally(() => (busy = false));
      };
      const timer = setInterval(sweep, SWEEP_EVERY_MS);
      timer.unref();
      return {
        async stop() {
          clearInterval(timer);
          await running;
          await runner.stop();
        },
      };
    },
  };
}
