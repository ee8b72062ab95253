/**
 * Schedule command handlers: the pure decider run through the one command
 * runner (runCommand, src/commands/shared/handler.ts), wrapped in the quota
 * reservation (docs/architecture.md): a schedule holds a slot
 * `scheduleslot-<org>-<n>` (n in 1..the plan's quota) while it is active or
 * paused, so two concurrent creates can never both take the last one. The
 * write that completes, cancels or deletes it gives the slot back; what a
 * crash leaves, reservation recovery frees (holders.ts).
 *
 * Streams are `schedule-<id>` with global ids: the tenant is the
 * organization_id of the stream's first event, so another organization's
 * schedule is NOT_FOUND before the decider runs.
 */
import type { EventMetadata, EventStore } from '../../eventstore/types.ts';
import { DomainError, notFound } from '../../shared/errors.ts';
import { envelope } from '../command.ts';
import type { InvoiceCustomer } from '../invoice/commands.ts';
import { claimFirstFree, release, writeWithReservations, type ReservationScope } from '../reservation/index.ts';
import { checkIfMatch, loadOwnedStream, loadStream, ownedBy, runCommand, type LoadedStream, type RunResult } from '../shared/handler.ts';
import type { CreateScheduleInput, ScheduleCommand, SchedulePatch } from './commands.ts';
import { releasesQuotaSlot, scheduleDecider, type ScheduleState } from './decider.ts';
import { scheduleStream, type ScheduleEvent } from './events.ts';
import { validateNewSchedule } from './validate.ts';

export interface ScheduleWrite {
  store: EventStore;
  organizationId: string;
  /** Metadata of the request (or of the scheduler, actor 'system'); organization_id is set to organizationId. */
  metadata: EventMetadata;
  /** If-Match: the schedule version the client read. */
  ifMatch?: number;
  /** Id of the first event under an Idempotency-Key (ExecuteOptions.commandId). */
  commandId?: string;
}

export type ScheduleResult = RunResult<ScheduleEvent, ScheduleState>;

/** An organization's quota slots (values 1..quota). */
export function scheduleSlotScope(organizationId: string): ReservationScope {
  return { kind: 'scheduleslot', prefix: `scheduleslot-${organizationId}` };
}

/** The schedule's stream, or NOT_FOUND when it does not exist (or was deleted) in this organization. */
export async function loadSchedule(store: EventStore, organizationId: string, scheduleId: string): Promise<LoadedStream<ScheduleState>> {
  const loaded = await loadOwnedStream(store, scheduleStream(scheduleId), scheduleDecider, organizationId, 'Recurring schedule');
  if (!loaded.state.schedule) throw notFound('Recurring schedule');
  return loaded;
}

/**
 * Runs a command on a loaded schedule. Decided once first on the state as
 * loaded: a command that ends the schedule (completed, cancelled, deleted)
 * marks its slot before the append and frees it after.
 */
export async function runScheduleCommand(w: ScheduleWrite, command: ScheduleCommand, loaded: LoadedStream<ScheduleState>): Promise<ScheduleResult> {
  const { metadata } = envelope(w.metadata, w.organizationId);
  checkIfMatch(w.ifMatch, loaded.revision, 'schedule');
  const preview = scheduleDecider.decide(command, loaded.state);
  const slot = loaded.state.schedule?.quota_slot;
  const run = () =>
    runCommand(w.store, scheduleStream(command.data.schedule_id), scheduleDecider, command, {
      metadata, ifMatch: w.ifMatch, known: loaded, commandId: w.commandId, guard: ownedBy(w.organizationId, 'Recurring schedule'), what: 'schedule',
    });
  if (slot === undefined) return run(); // no schedule: the runner answers NOT_FOUND
  const given = { scope: scheduleSlotScope(w.organizationId), value: String(slot) };
  if (!releasesQuotaSlot(preview)) {
    const result = await run();
    // Decided again on a newer state (a concurrent write moved the stream), the command may end the schedule where
    // the preview did not (a generate recording the last occurrence of a PUT's lower max_occurrences): its slot is
    // freed now, not minutes later by recovery, while the plan's count already says it is free.
    if (releasesQuotaSlot(result.events)) await release(w.store, given.scope, given.value, command.data.schedule_id, metadata).catch(() => false);
    return result;
  }
  return writeWithReservations(
    w.store,
    { owner: command.data.schedule_id, metadata, claims: [], releases: [given], releasedBy: (r: ScheduleResult) => (releasesQuotaSlot(r.events) ? [given] : []) },
    run,
  );
}

function quotaExceeded(limit: number): DomainError {
  return new DomainError(
    'QUOTA_EXCEEDED',
    `Your plan allows ${limit} active or paused recurring schedules. Complete, cancel or delete one, or upgrade the plan.`,
    { limit },
  );
}

/**
 * Claims a free slot among 1..limit; null when all are held. It looks first
 * at the slots above `used` (the read model's count: below it they are
 * mostly taken), starting at a point spread by the schedule's id so that
 * concurrent creates try different slots instead of all racing for the same
 * one, then wraps around to find slots freed anywhere.
 */
async function claimQuotaSlot(store: EventStore, organizationId: string, limit: number, used: number, owner: string, metadata: EventMetadata): Promise<number | null> {
  const scope = scheduleSlotScope(organizationId);
  const free = Math.max(1, limit - used);
  const start = used + (parseInt(owner.replace(/-/g, '').slice(-8), 16) % free);
  return claimFirstFree(store, scope, limit, owner, metadata, start);
}

export interface NewSchedule {
  scheduleId: string;
  input: CreateScheduleInput;
  customer: InvoiceCustomer | null;
  /** The plan's quota of active and paused schedules (docs/api-decisions.md). */
  quota: number;
  /** Active and paused schedules as the read model counts them: at the quota no create passes; where to start looking for a free slot. */
  used: number;
  /** How many of them hold a slot above the quota (left there by a plan downgrade): creates keep below quota - above. */
  above: number;
}

/** POST /recurring-invoices. */
export async function createSchedule(w: ScheduleWrite, n: NewSchedule): Promise<ScheduleResult> {
  const { metadata, commandMetadata } = envelope(w.metadata, w.organizationId);
  const stream = scheduleStream(n.scheduleId);
  validateNewSchedule(n.input, n.customer); // a bad body must not take a slot, even for a moment
  // Created by an earlier attempt of this request: answer it, taking no second slot.
  const known = await loadStream(w.store, stream, scheduleDecider);
  if (known.recorded.length > 0) {
    if (known.recorded[0].metadata.organization_id !== w.organizationId) throw notFound('Recurring schedule');
    return { events: [], state: known.state, revision: known.revision, position: known.position, earlier: known.recorded };
  }
  // The slots keep concurrent creates within the quota. After a plan downgrade some schedules hold slots above
  // the new quota, where no slot counts them: the read model's count refuses a create at the quota, and new
  // slots are taken only among the first quota - above, so a burst of creates cannot fill the slots they left.
  const below = n.quota - n.above;
  if (n.used >= n.quota || below <= 0) throw quotaExceeded(n.quota);
  const slot = await claimQuotaSlot(w.store, w.organizationId, below, n.used - n.above, n.scheduleId, metadata);
  if (slot === null) throw quotaExceeded(n.quota);
  const command: ScheduleCommand = {
    type: 'CreateSchedule',
    data: { ...n.input, schedule_id: n.scheduleId, quota_slot: slot, customer: n.customer },
    metadata: commandMetadata,
  };
  try {
    return await runCommand(w.store, stream, scheduleDecider, command, { metadata, known, guard: ownedBy(w.organizationId, 'Recurring schedule', false), what: 'schedule' });
  } catch (err) {
    await release(w.store, scheduleSlotScope(w.organizationId), String(slot), n.scheduleId, metadata).catch(() => false);
    throw err;
  }
}

async function onSchedule(w: ScheduleWrite, scheduleId: string, build: (meta: ScheduleCommand['metadata']) => ScheduleCommand): Promise<ScheduleResult> {
  const { commandMetadata } = envelope(w.metadata, w.organizationId);
  const loaded = await loadSchedule(w.store, w.organizationId, scheduleId);
  return runScheduleCommand(w, build(commandMetadata), loaded);
}

/** PUT /recurring-invoices/{id}. */
export function updateSchedule(w: ScheduleWrite, scheduleId: string, patch: SchedulePatch): Promise<ScheduleResult> {
  return onSchedule(w, scheduleId, (metadata) => ({ type: 'UpdateSchedule', data: { schedule_id: scheduleId, patch }, metadata }));
}

export function pauseSchedule(w: ScheduleWrite, scheduleId: string): Promise<ScheduleResult> {
  return onSchedule(w, scheduleId, (metadata) => ({ type: 'PauseSchedule', data: { schedule_id: scheduleId }, metadata }));
}

/** `today` in Africa/Casablanca, read by the caller from its clock. */
export function resumeSchedule(w: ScheduleWrite, scheduleId: string, today: string, nextRunDate?: string | null): Promise<ScheduleResult> {
  return onSchedule(w, scheduleId, (metadata) => ({ type: 'ResumeSchedule', data: { schedule_id: scheduleId, today, next_run_date: nextRunDate }, metadata }));
}

/** DELETE /recurring-invoices/{id}: the schedule and its history go, its invoices stay. */
export function deleteSchedule(w: ScheduleWrite, scheduleId: string): Promise<ScheduleResult> {
  return onSchedule(w, scheduleId, (metadata) => ({ type: 'DeleteSchedule', data: { schedule_id: scheduleId }, metadata }));
}
