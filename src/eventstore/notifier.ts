/**
 * One LISTEN connection per process for a notification channel, shared by
 * every subscription and waiter. It reconnects by itself; consumers also poll,
 * so a lost notification only costs latency, never an event.
 */
import pg from 'pg';
import { CENSUS_CHANNEL, censusChanged, LISTENER_PREFIX } from './listener-census.ts';

export class Notifier {
  private client: pg.Client | null = null;
  private listeners = new Set<(payload: string) => void>();
  private closed = false;
  private connecting: Promise<void> | null = null;
  /** The connection being opened (its LISTEN not yet answered). */
  private opening: pg.Client | null = null;

  constructor(
    private readonly url: string,
    private readonly channel: string,
  ) {}

  subscribe(listener: (payload: string) => void): () => void {
    this.listeners.add(listener);
    void this.ensure();
    return () => this.listeners.delete(listener);
  }

  /** Resolves once the LISTEN is in place (or the attempt failed: a retry is scheduled, polling covers). */
  ready(): Promise<void> {
    return this.ensure();
  }

  /**
   * The backend pid of the LISTEN connection, from the moment it is connected (null before): the census
   * leaves it out. Known while its LISTEN is still on the way too: the backend is already in
   * pg_stat_activity under the listener's name, and is ours, not another process's.
   */
  get pid(): number | null {
    const client = this.client ?? this.opening;
    return (client as unknown as { processID: number | null } | null)?.processID ?? null;
  }

  private ensure(): Promise<void> {
    if (this.closed || this.client) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => (this.connecting = null));
    return this.connecting;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, application_name: `${LISTENER_PREFIX}${this.channel}` });
    this.opening = client;
    client.on('error', () => this.drop(client));
    client.on('end', () => this.drop(client));
    client.on('notification', (msg) => {
      if (msg.channel === CENSUS_CHANNEL) return censusChanged();
      for (const l of this.listeners) l(msg.payload ?? '');
    });
    try {
      await client.connect();
      // Our channel, and the census's: this connection is news to every sender that left us out
      // (listener-census.ts), so it says so, and hears when others connect.
      await client.query(`listen ${this.channel}; listen ${CENSUS_CHANNEL}; select pg_notify('${CENSUS_CHANNEL}', '')`);
      if (this.closed) {
        await client.end();
        return;
      }
      this.client = client;
      // Anything appended while we were not listening: let everyone re-read.
      for (const l of this.listeners) l('');
    } catch {
      await client.end().catch(() => {});
      if (!this.closed) setTimeout(() => void this.ensure(), 1000).unref();
    } finally {
      if (this.opening === client) this.opening = null;
    }
  }

  private drop(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = null;
    if (!this.closed) setTimeout(() => void this.ensure(), 500).unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    const c = this.client;
    this.client = null;
    await this.connecting?.catch(() => {});
    await c?.end().catch(() => {});
  }
}

type Queryable = { query(text: string, values?: unknown[]): Promise<unknown> };

/**
 * Sends NOTIFY <channel> after the fact, outside the writer's transaction.
 * PostgreSQL serializes the commits of all transactions that notify with one
 * database-wide lock held through the WAL flush; inside a hot write
 * transaction (an append, a projector batch) it made concurrent writers
 * commit one at a time (docs/performance.md). So the NOTIFY goes in its own
 * transaction right after the commit, one at a time per sender, committed
 * without waiting for the flush (a notification is never durable anyway).
 * What is signalled meanwhile, and in the same turn of the event loop,
 * coalesces into the next one: per key only the newest value (values are
 * positions, which sort as strings), all keys in one payload (`format`).
 * Writers do not wait for it. Should the process die in between, listeners
 * find the news at their next poll. With an `audience` (listener-census.ts),
 * nothing is sent while no other process listens.
 */
export class CoalescedNotify {
  private readonly pending = new Map<string, string>();
  private sending: Promise<void> | null = null;

  constructor(
    private readonly db: Queryable,
    private readonly channel: string,
    /** The payload for the pending values (default: the one value of key ''). */
    private readonly format: (pending: Map<string, string>) => string = (pending) => pending.get('') ?? '',
    /** Whether anyone but this process would hear news of these keys (default: always send). */
    private readonly audience: (keys: string[]) => Promise<boolean> = async () => true,
  ) {}

  signal(value: string, key = ''): void {
    const known = this.pending.get(key);
    if (known === undefined || value > known) this.pending.set(key, value);
    this.sending ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.send());
  }

  private async send(): Promise<void> {
    while (this.pending.size > 0) {
      const payload = this.format(this.pending);
      const keys = [...this.pending.keys()];
      this.pending.clear();
      if (!(await this.audience(keys))) continue;
      await this.db
        .query(`select set_config('synchronous_commit', 'off', true), pg_notify($1, $2)`, [this.channel, payload])
        .catch(() => {});
    }
    this.sending = null;
  }

  async close(): Promise<void> {
    await this.sending;
  }
}
