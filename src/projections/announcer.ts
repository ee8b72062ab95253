/**
 * Tells the other processes how far this process's log consumers got, for
 * their read-your-writes waits (progress.ts): one NOTIFY 'projection_progress'
 * whose payload lists every consumer that moved since the previous one, a
 * "name position" line each. The consumers of a process usually move together
 * (they share one read of the log), so this is one or two notifications per
 * batch where each consumer's own would wake every listener six times. Sent
 * after the commits, one at a time (CoalescedNotify); a lost one costs
 * latency only: waiters also poll the checkpoints.
 */
import { CompiledQuery, type Kysely } from 'kysely';
import { CoalescedNotify } from '../eventstore/notifier.ts';
import type { Database } from '../db/schema.ts';

export const PROGRESS_CHANNEL = 'projection_progress';

export type ProgressAnnouncer = CoalescedNotify;

const perDatabase = new WeakMap<Kysely<Database>, ProgressAnnouncer>();

/** The process's announcer for this database (one per Kysely instance); signal(position, consumer name). */
export function announcerFor(db: Kysely<Database>): ProgressAnnouncer {
  let announcer = perDatabase.get(db);
  if (!announcer) {
    announcer = new CoalescedNotify(
      { query: (text, values) => db.executeQuery(CompiledQuery.raw(text, values ?? [])) },
      PROGRESS_CHANNEL,
      (pending) => [...pending].map(([name, position]) => `${name} ${position}`).join('\n'),
    );
    perDatabase.set(db, announcer);
  }
  return announcer;
}
