/**
 * Tells the other processes how far this process's log consumers got, for
 * their read-your-writes waits (progress.ts): one NOTIFY 'projection_progress'
 * whose payload lists every consumer that moved since the previous one, a
 * "name position" line each. The consumers of a process usually move together
 * (they share one read of the log), so this is one or two notifications per
 * batch where each consumer's own would wake every listener six times.
 *
 * Sent after the commits, never inside them (notifying transactions commit
 * one at a time: docs/performance.md), one at a time, committed without
 * waiting for the WAL flush (a notification is never durable anyway). A lost
 * one costs latency only: waiters also poll the checkpoints.
 */
import { CompiledQuery, type Kysely } from 'kysely';

export const PROGRESS_CHANNEL = 'projection_progress';

export class ProgressAnnouncer {
  private readonly pending = new Map<string, string>();
  private sending: Promise<void> | null = null;

  constructor(private readonly db: Kysely<any>) {}

  /** Positions sort as strings; only the newest per consumer is sent. */
  signal(name: string, position: string): void {
    const known = this.pending.get(name);
    if (known === undefined || position > known) this.pending.set(name, position);
    // The next turn of the event loop: consumers woken by the same read join in.
    this.sending ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.send());
  }

  private async send(): Promise<void> {
    while (this.pending.size > 0) {
      const payload = [...this.pending].map(([name, position]) => `${name} ${position}`).join('\n');
      this.pending.clear();
      await this.db
        .executeQuery(CompiledQuery.raw(`select set_config('synchronous_commit', 'off', true), pg_notify('${PROGRESS_CHANNEL}', $1)`, [payload]))
        .catch(() => {});
    }
    this.sending = null;
  }

  /** Waits for a notification in flight. */
  async close(): Promise<void> {
    await this.sending;
  }
}

const perDatabase = new WeakMap<Kysely<any>, ProgressAnnouncer>();

/** The process's announcer for this database (one per Kysely instance). */
export function announcerFor(db: Kysely<any>): ProgressAnnouncer {
  let announcer = perDatabase.get(db);
  if (!announcer) perDatabase.set(db, (announcer = new ProgressAnnouncer(db)));
  return announcer;
}
