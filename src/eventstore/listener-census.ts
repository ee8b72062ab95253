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
 * (docs/performance.md, "Fewer round trips after a lone write").
 * CoalescedNotify asks the census before it sends.
 *
 * The census is read again when it is a second old, and at once after any
 * service listener connected anywhere on the database: a Notifier that has
 * just started listening says so on the `invoicing_census` channel, which
 * every Notifier also listens to (`censusChanged`). So a process that starts
 * is notified from its first write on. While the census cannot be read, or
 * shows none of the service's listeners at all, not even the sender's own
 * (a pooler that does not pass `application_name` through), everyone is
 * assumed to listen: notifications are then sent as before the census. A
 * lost notification only ever costs latency: every consumer and waiter
 * also polls.
 */

/** A listening connection of this process (a Notifier), whose pid is not someone else. */
export interface OwnListener {
  readonly pid: number | null;
}

type Queryable = { query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> };

const MAX_AGE_MS = 1000;
export const LISTENER_PREFIX = 'invoicing:listen:';
/** Where a Notifier that has just started listening says so (payload: nothing). */
export const CENSUS_CHANNEL = 'invoicing_census';

/** Bumped whenever a listener connected (told by a Notifier): every census reads again before its next answer. */
let generation = 0;
export function censusChanged(): void {
  generation++;
}

export class ListenerCensus {
  /** Channel -> backend pids listening on it, in this database. */
  private listeners: Map<string, number[]> | null = null;
  private takenAt = 0;
  private takenGeneration = -1;
  private refreshing: Promise<void> | null = null;

  constructor(
    private readonly db: Queryable,
    private readonly maxAgeMs = MAX_AGE_MS,
  ) {}

  /** Whether a backend other than `own`'s connection listens on `channel` (`own` null: any listener counts). */
  async othersListen(channel: string, own: OwnListener | null): Promise<boolean> {
    if (this.takenGeneration !== generation || Date.now() - this.takenAt >= this.maxAgeMs) await this.refresh();
    if (this.listeners === null) return true;
    const listening = this.listeners.get(channel) ?? [];
    const mine = own?.pid ?? null;
    // Our own listener is connected, yet the census does not show it: the names are not visible here.
    if (mine !== null && listening.length === 0) return true;
    return listening.some((pid) => pid !== mine);
  }

  private refresh(): Promise<void> {
    this.refreshing ??= this.read().finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  private async read(): Promise<void> {
    const seen = generation;
    try {
      const { rows } = await this.db.query(
        `select substr(application_name, $1) as channel, array_agg(pid) as pids from pg_stat_activity
          where datname = current_database() and starts_with(application_name, $2) group by 1`,
        [LISTENER_PREFIX.length + 1, LISTENER_PREFIX],
      );
      this.listeners = new Map((rows as { channel: string; pids: number[] }[]).map((r) => [r.channel, r.pids]));
    } catch {
      this.listeners = null; // unknown: notify, as before the census
    }
    this.takenAt = Date.now();
    this.takenGeneration = seen;
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
