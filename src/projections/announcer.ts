/**
 * Tells the other processes how far this process's log consumers got, for
 * their read-your-writes waits (progress.ts): one NOTIFY 'projection_progress'
 * whose payload lists every consumer that moved since the previous one, a
 * "name position" line each. The consumers of a process usually move together
 * (they share one read of the log), so this is one or two notifications per
 * batch where each consumer's own would wake every listener six times. Sent
 * after the commits, one at a time (CoalescedNotify), and only while another
 * process listens; a lost one costs latency only: waiters also poll the
 * checkpoints.
 */
import { CompiledQuery, type Kysely } from 'kysely';
import { listenerCensus, type OwnListener } from '../eventstore/listener-census.ts';
import { CoalescedNotify } from '../eventstore/notifier.ts';
import type { Database } from '../db/schema.ts';

export const PROGRESS_CHANNEL = 'projection_progress';

export type ProgressAnnouncer = CoalescedNotify;

const perDatabase = new WeakMap<Kysely<Database>, ProgressAnnouncer>();
const ownListeners = new WeakMap<Kysely<Database>, OwnListener>();

/**
 * The process's announcer for this database (one per Kysely instance); signal(position, consumer name).
 * `own`: this process's listener on the channel (ProjectionProgress's), which hears its runners directly:
 * nothing is sent while no other process listens (listener-census.ts).
 */
export function announcerFor(db: Kysely<Database>, own: OwnListener | null = null): ProgressAnnouncer {
  if (own) ownListeners.set(db, own);
  let announcer = perDatabase.get(db);
  if (!announcer) {
    const queryable = { query: (text: string, values?: unknown[]) => db.executeQuery(CompiledQuery.raw(text, values ?? [])) };
    const census = listenerCensus(db, queryable);
    announcer = new CoalescedNotify(
      queryable,
      PROGRESS_CHANNEL,
      (pending) => [...pending].map(([name, position]) => `${name} ${position}`).join('\n'),
      () => census.othersListen(PROGRESS_CHANNEL, ownListeners.get(db) ?? null),
    );
    perDatabase.set(db, announcer);
  }
  return announcer;
}
