/**
 * The newest stretch of the global log, read once per process and shared by
 * every subscription of that process. Six consumers follow the same log;
 * without this each of them would query (and parse the JSON of) every event
 * itself, six queries per append.
 *
 * One loop reads the tail (woken by the append notification, with the same
 * catch-up rules as a lone subscription: quick retries while a notified
 * position is not yet readable, a slow poll otherwise) and keeps what it read
 * in memory. A subscription whose checkpoint lies inside that stretch takes
 * its next events from memory and, at the end, waits for the loop to read
 * more; a subscription behind it (catching up, a trimmed window) reads the
 * store itself until it lands inside.
 *
 * Why the stretch stays a faithful copy of the log: readAll never skips (it
 * stops before the oldest transaction still open, pg_snapshot_xmin), so the
 * events it returns after a position are exactly the next ones of the log.
 * The stretch begins where a subscription found nothing more to read, and
 * grows only by reads from its own end.
 */
import { Alarm } from '../shared/alarm.ts';
import { comparePositions, type RecordedEvent } from './types.ts';
import type { Notifier } from './notifier.ts';

export interface LogTailOptions {
  read: (after: string | null, limit: number) => Promise<RecordedEvent[]>;
  notifier: Notifier;
  /** Events kept in memory; older ones are dropped (laggards read the store). */
  capacity?: number;
  batchSize?: number;
  idlePollMs?: number;
}

export class LogTail {
  /** The stretch: `events` are the log's events right after `start`. */
  private start: string | null = null;
  private events: RecordedEvent[] = [];
  private anchored = false;
  /** Bumped when the stretch is dropped, so a read in flight for an older one is discarded. */
  private generation = 0;
  private newestNotified = '';
  private closed = false;
  private readonly alarm = new Alarm();
  private loop: Promise<void> | null = null;
  private readonly waiting = new Set<() => void>();
  private unlisten: (() => void) | null = null;
  private readonly capacity: number;

  constructor(private readonly o: LogTailOptions) {
    // Consumers of one process lag each other by a batch or two; 1,000 events
    // keep them all in memory (a few MB of typical invoices; with the largest
    // invoices the API accepts, no more than the six consumers' own batches of
    // 500 used to hold), and a consumer further behind reads the store.
    this.capacity = o.capacity ?? 1_000;
  }

  private end(): string | null {
    return this.events.length > 0 ? this.events[this.events.length - 1].position : this.start;
  }

  /**
   * Index of the first event after `checkpoint` in the stretch (events.length
   * when it is the stretch's end), or -1 when the stretch does not hold it.
   */
  private indexAfter(checkpoint: string | null): number {
    if (!this.anchored) return -1;
    if (checkpoint === this.start) return 0;
    if (comparePositions(checkpoint, this.start) < 0 || comparePositions(checkpoint, this.end()) > 0) return -1;
    let lo = 0;
    let hi = this.events.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const c = comparePositions(this.events[mid].position, checkpoint);
      if (c === 0) return mid + 1;
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** The events after `checkpoint` held in memory (possibly none yet), or null when the stretch does not hold it. */
  after(checkpoint: string | null, limit: number): RecordedEvent[] | null {
    const i = this.indexAfter(checkpoint);
    return i < 0 ? null : this.events.slice(i, i + limit);
  }

  /**
   * A subscription found nothing after `checkpoint` in the store: the log ends
   * there for now. With no stretch yet, it begins here and the loop starts.
   */
  anchor(checkpoint: string | null): void {
    if (this.closed || this.anchored) return;
    this.start = checkpoint;
    this.events = [];
    this.anchored = true;
    this.alarm.wake();
    this.unlisten ??= this.o.notifier.subscribe((payload) => this.appended(payload));
    this.loop ??= this.run();
  }

  /**
   * Something was appended up to `position` ('' when unknown: a listener that
   * reconnected). Appends of this process call it directly, so their own
   * consumers need not wait for a notification's round trip (the store
   * sends one only while another process listens; should it come back to
   * this process too, it finds the position read already and wakes nobody).
   */
  appended(position: string): void {
    if (position > this.newestNotified) this.newestNotified = position;
    if (position === '' || !this.anchored || position > (this.end() ?? '')) this.alarm.wake();
  }

  /** Resolves once the stretch ends past `checkpoint`, it is dropped, or after `timeoutMs`. */
  waitPast(checkpoint: string | null, timeoutMs: number): Promise<void> {
    // At once only when there is something to take: the stretch holds `checkpoint` and goes past it
    // (a checkpoint before the stretch would otherwise make its subscription query the store in a loop).
    if (!this.anchored) return Promise.resolve();
    const i = this.indexAfter(checkpoint);
    if (i >= 0 && i < this.events.length) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiting.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.waiting.add(done);
    });
  }

  /** Wakes every waiting subscription (a stopping one among them re-checks its flag). */
  wakeAll(): void {
    for (const w of [...this.waiting]) w();
  }

  private async run(): Promise<void> {
    let quickRetries = 0;
    while (!this.closed) {
      if (!this.anchored) {
        await this.alarm.sleep(60_000); // until a subscription anchors the stretch again
        continue;
      }
      const generation = this.generation;
      const from = this.end();
      let fetched: RecordedEvent[];
      try {
        fetched = await this.o.read(from, this.o.batchSize ?? 500);
      } catch {
        // The store is unreachable: drop the stretch so subscriptions read (and
        // report the failure) themselves; the next one at the end anchors again.
        this.drop();
        await this.alarm.sleep(1000);
        continue;
      }
      if (this.closed) break;
      if (generation !== this.generation || from !== this.end()) continue;
      const limit = this.o.batchSize ?? 500;
      if (fetched.length > 0) {
        this.events.push(...fetched);
        this.trim();
        quickRetries = 0;
        this.wakeAll();
        // A full page: more may follow at once. A short one read up to the end as it
        // was; ask again only when told of something past it (else wait to be told).
        if (fetched.length === limit || this.newestNotified > (this.end() ?? '')) continue;
        await this.alarm.sleep(this.o.idlePollMs ?? 1000);
        continue;
      }
      // Notified of a position we cannot read yet: an older transaction is still open.
      const behind = from === null ? this.newestNotified !== '' : this.newestNotified > from;
      if (behind && quickRetries < 200) {
        quickRetries++;
        await this.alarm.sleep(Math.min(2 + quickRetries, 20));
      } else {
        quickRetries = 0;
        await this.alarm.sleep(this.o.idlePollMs ?? 1000);
      }
    }
  }

  private drop(): void {
    this.generation++;
    this.anchored = false;
    this.events = [];
    this.start = null;
    this.wakeAll();
  }

  private trim(): void {
    const extra = this.events.length - this.capacity;
    if (extra > 0) {
      this.start = this.events[extra - 1].position;
      this.events = this.events.slice(extra);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.unlisten?.();
    this.alarm.wake();
    this.wakeAll();
    await this.loop;
  }
}
