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
/** Per database handle: this process's progress listener, and the consumers that report to it directly. */
const reportedLocally = new WeakMap<Kysely<Database>, { listener: OwnListener; names: Set<string> }>();

/**
 * The process's announcer for this database (one per Kysely instance); signal(position, consumer name).
 * `local`: this consumer also reports to the process's ProjectionProgress, whose listener (`listener`)
 * therefore needs no notification of it. A notification that concerns only such consumers is sent only
 * while another process listens (listener-census.ts); one that names any other consumer (the webhook
 * subscriber, the workers' consumers) goes to every listener, this process's included.
 */
export function announcerFor(db: Kysely<Database>, local: { name: string; listener: OwnListener } | null = null): ProgressAnnouncer {
  if (local) {
    let known = reportedLocally.get(db);
    if (!known) reportedLocally.set(db, (known = { listener: local.listener, names: new Set() }));
    known.names.add(local.name);
  }
  let announcer = perDatabase.get(db);
  if (!announcer) {
    const queryable = { query: (text: string, values?: unknown[]) => db.executeQuery(CompiledQuery.raw(text, values ?? [])) };
    const census = listenerCensus(db, queryable);
    announcer = new CoalescedNotify(
      queryable,
      PROGRESS_CHANNEL,
      (pending) => [...pending].map(([name, position]) => `${name} ${position}`).join('\n'),
      (names) => {
        const known = reportedLocally.get(db);
        const own = known && names.every((n) => known.names.has(n)) ? known.listener : null;
        return census.othersListen(PROGRESS_CHANNEL, own);
      },
    );
    perDatabase.set(db, announcer);
  }
  return announcer;
}
