/**
 * Recovery of the reservation protocol (docs/architecture.md "Invariants across streams"). A write claims a
 * value before writing its owner's stream and releases given-up values after
 * it; a crash in between leaves a claim whose owner never came to exist, or
 * a value its owner no longer holds. This worker frees those.
 *
 * - A checkpointed log consumer (like a projector, but not a read model:
 *   writes do not wait for it) keeps `reservation_checks`: every claim and
 *   every intended release not yet followed by a release.
 * - A sweep at start-up and every minute takes the checks older than the
 *   grace period (a live request finishes its write long before), asks the
 *   kind's holder check whether the owner holds the value, and releases it
 *   when not. Confirmed or released checks leave the table, so each claim is
 *   checked once.
 * Role 'projector': it runs where the log consumers run; only the process
 * holding the consumer's lock sweeps, and a duplicate sweep would be harmless
 * anyway (releases are appends at an expected revision).
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import { readReservation, release, RESERVATION_EVENT_TYPES, type HolderChecks } from '../commands/reservation/index.ts';
import type { ReservationEvent } from '../commands/reservation/index.ts';
import { systemMetadata } from '../commands/command.ts';
import type { EventStore, RecordedEvent } from '../eventstore/types.ts';
import type { Projector } from '../projections/projector.ts';
import { ProjectionRunner } from '../projections/runner.ts';
import type { Logger } from '../shared/logger.ts';
import type { Worker } from './worker.ts';
import type { Database } from '../db/schema.ts';

export const RECOVERY_GRACE_MS = 5 * 60_000;
const SWEEP_EVERY_MS = 60_000;
const SWEEP_BATCH = 200;

/** Keeps reservation_checks in step with the reservation streams. */
export const reservationChecksConsumer: Projector = {
  name: 'reservation-recovery',
  handles: RESERVATION_EVENT_TYPES,
  tables: ['reservation_checks'],
  async apply(events: RecordedEvent[], trx: Transaction<Database>): Promise<void> {
    for (const e of events) {
      const { kind, scope, value, owner } = (e as unknown as ReservationEvent).data;
      if (e.type === 'ReservationReleased') {
        await trx.deleteFrom('reservation_checks').where('stream', '=', e.stream).where('revision', '<', e.revision).execute();
        continue;
      }
      const check = { stream: e.stream, kind, scope, value, owner, revision: e.revision, since: e.created_at };
      await trx
        .insertInto('reservation_checks')
        .values(check)
        .onConflict((oc) => oc.column('stream').doUpdateSet(check).where('reservation_checks.revision', '<', e.revision))
        .execute();
    }
  },
};

export interface SweepDeps {
  db: Kysely<Database>;
  store: EventStore;
  logger: Logger;
  /** Who vouches for each kind of reservation; a kind without a check is never freed. */
  holderChecks: HolderChecks;
}

/** One pass; returns what it did (for tests and the log). */
export async function sweepReservationChecks(deps: SweepDeps, graceMs = RECOVERY_GRACE_MS): Promise<{ confirmed: number; released: number }> {
  const { db, store, logger, holderChecks } = deps;
  const cutoff = new Date(Date.now() - graceMs);
  const rows = await db
    .selectFrom('reservation_checks')
    .selectAll()
    .where('since', '<=', cutoff)
    .orderBy('since')
    .limit(SWEEP_BATCH)
    .execute();
  let confirmed = 0;
  let released = 0;
  for (const row of rows) {
    const check = Object.hasOwn(holderChecks, row.kind) ? holderChecks[row.kind] : undefined;
    if (!check) continue; // never free what nobody can vouch for
    const scope = { kind: row.kind, prefix: row.scope };
    const state = await readReservation(store, scope, row.value);
    let done = state.owner !== row.owner; // released (and maybe re-claimed: that claim has its own check)
    if (!done && state.revision === row.revision) {
      if (await check(store, row.owner, row.value, row.scope)) confirmed++;
      else if (await release(store, scope, row.value, row.owner, systemMetadata())) {
        released++;
        logger.warn({ stream: row.stream, owner: row.owner }, 'released a reservation its owner does not hold');
      }
      done = true;
    }
    // A newer event on the stream replaces this row through the consumer; otherwise it is settled.
    if (done) await db.deleteFrom('reservation_checks').where('stream', '=', row.stream).where('revision', '=', row.revision).execute();
  }
  return { confirmed, released };
}

/** The worker, with the holder check of every reservation kind of the process. */
export const reservationRecoveryWorker = (holderChecks: HolderChecks): Worker => ({
  name: 'reservation-recovery',
  role: 'projector',
  async start(rt) {
    const deps = { db: rt.database.db, store: rt.store, logger: rt.logger, holderChecks };
    const runner = new ProjectionRunner({ ...deps, url: rt.database.url, progress: rt.progress }, reservationChecksConsumer);
    runner.start();
    let sweeping: Promise<unknown> = Promise.resolve();
    const tick = () => {
      if (runner.state !== 'running') return; // another process holds the consumer and sweeps
      sweeping = sweepReservationChecks(deps).catch((err) => rt.logger.error({ err }, 'reservation recovery sweep failed'));
    };
    const first = setTimeout(tick, 5000); // once the consumer holds its lock
    const timer = setInterval(tick, SWEEP_EVERY_MS);
    timer.unref();
    return {
      async stop() {
        clearTimeout(first);
        clearInterval(timer);
        await sweeping;
        await runner.stop();
      },
    };
  },
});

/** For tests and the CLI: the rows still waiting for a check. */
export async function pendingReservationChecks(db: Kysely<Database>): Promise<number> {
  const { rows } = await sql<{ n: string }>`select count(*) as n from reservation_checks`.execute(db);
  return Number(rows[0].n);
}
