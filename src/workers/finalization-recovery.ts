/**
 * Recovery of the finalize protocol (docs/architecture.md "Invariants across streams", docs/invoices.md).
 * A finalize that died between its lock (InvoiceFinalizationStarted) and its
 * number (InvoiceFinalized) leaves a locked draft, maybe with a number
 * already taken on the numbering stream. This worker finds those invoices in
 * the read model (`finalization_pending`) and completes them with the same
 * idempotent steps the request would have run, so the number always ends on
 * its invoice: no gap, no duplicate.
 *
 * - At start-up, once the invoices projector has caught up with the log (the
 *   locks a crash left are then visible), and every 10 s after.
 * - Only invoices locked longer than the grace period: a live request
 *   finishes its own finalize in milliseconds, and racing it would only cost
 *   a conflict retry (every step is idempotent, so running this in several
 *   processes at once is safe too; no lock is needed).
 * Role 'projector': it runs where the projectors run.
 */
import type { Kysely } from 'kysely';
import type pg from 'pg';
import { completePendingFinalization } from '../commands/invoice/handler-finalize.ts';
import type { EventStore } from '../eventstore/types.ts';
import { readModelFacts } from '../queries/invoice-facts.ts';
import type { Logger } from '../shared/logger.ts';
import type { Worker } from './worker.ts';
import type { Database } from '../db/schema.ts';

export const FINALIZATION_GRACE_MS = 5_000;
const SWEEP_EVERY_MS = 10_000;
const SWEEP_BATCH = 500;
const STARTUP_CATCH_UP_MS = 60_000;

export interface RecoveryDeps {
  db: Kysely<Database>;
  pool: pg.Pool;
  store: EventStore;
  logger: Logger;
}

/** One pass over the locked drafts older than the grace period; returns how many it completed. */
export async function recoverFinalizations(deps: RecoveryDeps, graceMs = FINALIZATION_GRACE_MS): Promise<number> {
  const { db, pool, store, logger } = deps;
  const facts = readModelFacts(pool);
  const cutoff = new Date(Date.now() - graceMs);
  const rows = await db
    .selectFrom('invoices')
    .select(['id', 'organization_id'])
    .where('finalization_pending', '=', true)
    .where('updated_at', '<=', cutoff)
    .orderBy('updated_at')
    .limit(SWEEP_BATCH)
    .execute();
  let completed = 0;
  for (const row of rows) {
    try {
      const number = await completePendingFinalization(store, facts, row.organization_id, row.id);
      if (number !== null) {
        completed++;
        logger.warn({ invoice_id: row.id, invoice_number: number }, 'completed an interrupted finalization');
      }
    } catch (err) {
      // One failing invoice must not hold back the others; it is retried next pass.
      logger.error({ err, invoice_id: row.id }, 'could not complete an interrupted finalization');
    }
  }
  return completed;
}

export const finalizationRecoveryWorker: Worker = {
  name: 'finalization-recovery',
  role: 'projector',
  async start(rt) {
    const deps: RecoveryDeps = { db: rt.database.db, pool: rt.database.pool, store: rt.store, logger: rt.logger };
    let stopped = false;
    let running: Promise<unknown> = Promise.resolve();
    let busy = false;
    const sweep = () => {
      if (busy || stopped) return;
      busy = true;
      running = recoverFinalizations(deps)
        .catch((err) => rt.logger.error({ err }, 'finalization recovery sweep failed'))
        .finally(() => (busy = false));
    };
    // Not awaited by stop(): its wait ends on its own, and sweep() checks `stopped`.
    void (async () => {
      const head = await rt.store.headPosition();
      if (head !== null) await rt.progress.waitFor(head, STARTUP_CATCH_UP_MS, ['invoices']);
      sweep();
    })().catch((err) => rt.logger.error({ err }, 'finalization recovery start-up failed'));
    const timer = setInterval(sweep, SWEEP_EVERY_MS);
    timer.unref();
    return {
      async stop() {
        stopped = true;
        clearInterval(timer);
        await running;
      },
    };
  },
};
