/**
 * Where every projector stands, in this process, whichever process runs them:
 * local runners report directly, remote ones through pg_notify on
 * 'projection_progress', and a slow poll covers lost notifications.
 * waitFor(position) is the read-your-writes primitive: a write answers only
 * after every projector has passed the position it appended.
 */
import { sql, type Kysely } from 'kysely';
import { Notifier } from '../eventstore/notifier.ts';
import { comparePositions } from '../eventstore/types.ts';
import type { Database } from '../db/schema.ts';

interface Waiter {
  position: string;
  names: readonly string[];
  resolve: (ok: boolean) => void;
}

export class ProjectionProgress {
  private readonly positions = new Map<string, string | null>();
  private readonly waiters = new Set<Waiter>();
  private readonly notifier: Notifier;
  private unlisten: (() => void) | null = null;
  private poller: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Kysely<Database>,
    url: string,
    readonly names: readonly string[],
  ) {
    this.notifier = new Notifier(url, 'projection_progress');
  }

  /** This process's listener on 'projection_progress' (its own runners report directly: announcer.ts need not notify it). */
  get listener(): Notifier {
    return this.notifier;
  }

  async start(): Promise<void> {
    // Listening before the first read of the checkpoints: nothing moves unseen in between.
    this.unlisten = this.notifier.subscribe((payload) => {
      // A refresh still in flight when the process closes its database must not crash it.
      if (payload === '') return void this.refresh().catch(() => {});
      // "name position" lines: one per consumer that moved (announcer.ts).
      for (const line of payload.split('\n')) {
        const space = line.indexOf(' ');
        if (space > 0) this.report(line.slice(0, space), line.slice(space + 1));
      }
    });
    await this.notifier.ready();
    await this.refresh();
  }

  /** Records a projector's new checkpoint (never moves one backwards). */
  report(name: string, position: string | null): void {
    const known = this.positions.get(name) ?? null;
    if (comparePositions(position, known) > 0 || !this.positions.has(name)) this.positions.set(name, position);
    for (const w of this.waiters) if (this.reached(w.position, w.names)) this.settle(w, true);
  }

  position(name: string): string | null {
    return this.positions.get(name) ?? null;
  }

  private reached(position: string, names: readonly string[]): boolean {
    return names.every((n) => comparePositions(this.positions.get(n) ?? null, position) >= 0);
  }

  private settle(w: Waiter, ok: boolean): void {
    if (!this.waiters.delete(w)) return;
    w.resolve(ok);
    if (this.waiters.size === 0 && this.poller) {
      clearInterval(this.poller);
      this.poller = null;
    }
  }

  private async refresh(): Promise<void> {
    const { rows } = await sql<{ name: string; position: string | null }>`
      select name, position from projection_checkpoints`.execute(this.db);
    for (const r of rows) this.report(r.name, r.position);
  }

  /** Resolves true once every projector (or those named) passed `position`; false on timeout. */
  waitFor(position: string, timeoutMs = 5000, names: readonly string[] = this.names): Promise<boolean> {
    if (this.reached(position, names)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const w: Waiter = { position, names, resolve };
      this.waiters.add(w);
      const timer = setTimeout(() => this.settle(w, false), timeoutMs);
      timer.unref();
      const orig = w.resolve;
      w.resolve = (ok) => {
        clearTimeout(timer);
        orig(ok);
      };
      this.poller ??= setInterval(() => void this.refresh().catch(() => {}), 250);
    });
  }

  async close(): Promise<void> {
    for (const w of [...this.waiters]) this.settle(w, false);
    this.unlisten?.();
    await this.notifier.close();
  }
}
