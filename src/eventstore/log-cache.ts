/**
 * The recent tail of the global log, shared by every subscription of one
 * process. Six consumers follow the same log; without this each would read
 * (and parse the JSON of) every event itself. With it, one query serves them
 * all: concurrent reads of the tail are merged into one, and a consumer a
 * little behind the others is served from memory.
 *
 * Safe because readAll never skips: the events it returns after position E
 * are exactly the next ones in log order, so the cached segment stays
 * contiguous. A read from a position outside the segment goes to the store.
 * A read inside the segment may return fewer events than asked (up to its
 * end); the next read continues from there.
 */
import { comparePositions, type RecordedEvent } from './types.ts';

const CAPACITY = 20_000;

export class LogCache {
  /** A contiguous run of the log: the events right after `start`, in order. */
  private start: string | null = null;
  private events: RecordedEvent[] = [];
  private empty = true;
  private inflight: { from: string | null; result: Promise<RecordedEvent[]> } | null = null;

  constructor(private readonly read: (after: string | null, limit: number) => Promise<RecordedEvent[]>) {}

  private end(): string | null {
    return this.events.length ? this.events[this.events.length - 1].position : this.start;
  }

  /** Index just after `after` within the segment, or -1 when `after` is outside it. */
  private indexAfter(after: string | null): number {
    if (this.empty) return -1;
    if (after === this.start) return 0;
    if (comparePositions(after, this.start) < 0 || comparePositions(after, this.end()) > 0) return -1;
    let lo = 0;
    let hi = this.events.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const c = comparePositions(this.events[mid].position, after);
      if (c === 0) return mid + 1;
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1; // not an event position of ours: let the store answer
  }

  async readAll(after: string | null, limit: number): Promise<RecordedEvent[]> {
    const i = this.indexAfter(after);
    if (i < 0) {
      const fetched = await this.read(after, limit);
      // Ahead of the segment (or none yet): the window moves there. Behind it
      // (a consumer catching up, a rebuild): served by the store, window kept.
      if (this.empty || comparePositions(after, this.end()) > 0) this.reset(after, fetched);
      return fetched;
    }
    if (i < this.events.length) return this.events.slice(i, i + limit);
    // At the tail: one query for everyone waiting here.
    const joined = this.inflight?.from === after;
    if (!joined) this.inflight = { from: after, result: this.extend(after, limit) };
    const fetched = await this.inflight!.result;
    // A query that started before this reader was woken may have missed what
    // woke it: an empty answer from a joined query is asked again, fresh.
    if (joined && fetched.length === 0) {
      if (this.inflight?.from !== after) this.inflight = { from: after, result: this.extend(after, limit) };
      return (await this.inflight!.result).slice(0, limit);
    }
    return fetched.slice(0, limit);
  }

  private async extend(from: string | null, limit: number): Promise<RecordedEvent[]> {
    try {
      const fetched = await this.read(from, Math.max(limit, 500));
      if (from === this.end()) this.append(fetched);
      return fetched;
    } finally {
      if (this.inflight?.from === from) this.inflight = null;
    }
  }

  private reset(after: string | null, events: RecordedEvent[]): void {
    this.start = after;
    this.events = events.slice();
    this.empty = false;
    this.trim();
  }

  private append(events: RecordedEvent[]): void {
    this.events.push(...events);
    this.trim();
  }

  private trim(): void {
    const extra = this.events.length - CAPACITY;
    if (extra > 0) {
      this.start = this.events[extra - 1].position;
      this.events = this.events.slice(extra);
    }
  }
}
