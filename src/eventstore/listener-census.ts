/**
 * Who listens on a notification channel, besides the sender's own listener.
 *
 * Every LISTEN connection of the service names itself
 * `invoicing:listen:<channel>` (Notifier), so pg_stat_activity tells, per
 * database, which backends listen on what. A process alone on its database
 * (the default deployment: one process, every role) hears its own news
 * directly, without the database (the log tail and the progress waiters are
 * told in memory), so its NOTIFYs reach nobody who needs them: each is a
 * round trip and a transaction for nothing, several per write
 * (docs/performance.md, "Notifications only when someone else listens").
 * CoalescedNotify asks the census before it sends.
 *
 * The answer is at most MAX_AGE_MS old: a process that starts listening is
 * notified within a second of its LISTEN, and until then finds the news at
 * its next poll (every consumer and waiter polls; a lost notification costs
 * latency, never an event). While the census is unknown or cannot be read,
 * everyone is assumed to listen.
 */
/** A listening connection of this process (a Notifier), whose pid is not someone else. */
export interface OwnListener {
  readonly pid: number | null;
}

type Queryable = { query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> };

const MAX_AGE_MS = 1000;
export const LISTENER_PREFIX = 'invoicing:listen:';

export class ListenerCensus {
  /** Channel -> backend pids listening on it, in this database. */
  private listeners: Map<string, number[]> | null = null;
  private takenAt = 0;
  private refreshing: Promise<void> | null = null;

  constructor(
    private readonly db: Queryable,
    private readonly maxAgeMs = MAX_AGE_MS,
  ) {}

  /** Whether a backend other than `own`'s connection listens on `channel` (read again when the answer is older than a second). */
  async othersListen(channel: string, own: OwnListener | null): Promise<boolean> {
    if (Date.now() - this.takenAt > this.maxAgeMs) await this.refresh();
    if (this.listeners === null) return true;
    const mine = own?.pid ?? null;
    return (this.listeners.get(channel) ?? []).some((pid) => pid !== mine);
  }

  private refresh(): Promise<void> {
    this.refreshing ??= this.db
      .query(
        `select substr(application_name, $1) as channel, array_agg(pid) as pids from pg_stat_activity
          where datname = current_database() and starts_with(application_name, $2) group by 1`,
        [LISTENER_PREFIX.length + 1, LISTENER_PREFIX],
      )
      .then(
        ({ rows }) => {
          this.listeners = new Map((rows as { channel: string; pids: number[] }[]).map((r) => [r.channel, r.pids]));
        },
        () => {
          this.listeners = null; // unknown: notify, as before the census
        },
      )
      .finally(() => {
        this.takenAt = Date.now();
        this.refreshing = null;
      });
    return this.refreshing;
  }
}

const perDatabase = new WeakMap<object, ListenerCensus>();

/** The process's census for one database handle (a pool, or a Kysely instance wrapped as `db`). */
export function listenerCensus(key: object, db: Queryable): ListenerCensus {
  let census = perDatabase.get(key);
  if (!census) {
    census = new ListenerCensus(db);
    perDatabase.set(key, census);
  }
  return census;
}
