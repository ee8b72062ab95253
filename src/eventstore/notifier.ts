/**
 * One LISTEN connection per process for a notification channel, shared by
 * every subscription and waiter. It reconnects by itself; consumers also poll,
 * so a lost notification only costs latency, never an event.
 */
import pg from 'pg';

export class Notifier {
  private client: pg.Client | null = null;
  private listeners = new Set<(payload: string) => void>();
  private closed = false;
  private connecting: Promise<void> | null = null;

  constructor(
    private readonly url: string,
    private readonly channel: string,
  ) {}

  subscribe(listener: (payload: string) => void): () => void {
    this.listeners.add(listener);
    void this.ensure();
    return () => this.listeners.delete(listener);
  }

  private ensure(): Promise<void> {
    if (this.closed || this.client) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => (this.connecting = null));
    return this.connecting;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, application_name: `listen:${this.channel}` });
    client.on('error', () => this.drop(client));
    client.on('end', () => this.drop(client));
    client.on('notification', (msg) => {
      for (const l of this.listeners) l(msg.payload ?? '');
    });
    try {
      await client.connect();
      await client.query(`listen ${this.channel}`);
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
