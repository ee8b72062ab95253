/**
 * Group commit of creations (docs/architecture.md "Inline projections",
 * "Creations under load"): appends that arrive while a group is being
 * written wait, and go together as the next group, one
 * transaction, one message, one commit, their inline rows in one statement
 * per projector. Under load that is what the runners did after the fact
 * (many new rows in one statement), without the runner's own transaction
 * and the wait for it before each answer; alone, an append goes at once,
 * as a group of one. A group that takes longer than STALL_MS (waiting on a
 * lock) lets the next one start, so it does not stall every creation.
 *
 * A group is all or nothing: when it fails as a whole (one of its streams
 * exists already, an event id is stored, a projector refused one of its
 * events, the connection was lost), each append of it goes again alone, so
 * each gets the answer it would have had alone (its own conflict, its own
 * replay, its own 500) and the others are written. Nothing of a failed group
 * committed, but for a connection lost at COMMIT, where the group may have
 * committed: its events are then found by their ids on the retry, which
 * answers them as stored (a replayed append).
 */
import type { AppendResult, StreamAppend } from './types.ts';

interface Waiting {
  append: StreamAppend;
  resolve: (result: AppendResult) => void;
  reject: (err: unknown) => void;
}

/**
 * One group is written at a time: the next forms meanwhile. Measured at concurrency 32, one at a time wrote
 * 557 and 574 creates/s in groups of about 12, four at a time 421 and 447/s in groups of 2 to 3: fewer,
 * larger groups amortize more, and do not contend for the same count rows.
 */
const AT_ONCE = 1;
/** Appends in one group at most. */
const MAX_GROUP = 64;
/**
 * A group still being written after STALL_MS no longer holds the next one back: a group waiting on a lock (a
 * rebuild's, a runner's batch on the same invoice keys) must not stall every creation of the process behind
 * it. Up to MAX_STALLED groups are then written at once.
 */
const STALL_MS = 100;
const MAX_STALLED = 8;

export interface AppendGroupsOptions {
  /** Writes a group of appends to distinct streams in one transaction (all or nothing). */
  together(appends: StreamAppend[]): Promise<AppendResult[]>;
  /** Writes one append on its own (a group of one, or a failed group's retry). */
  alone(append: StreamAppend): Promise<AppendResult>;
}

export class AppendGroups {
  private readonly waiting: Waiting[] = [];
  private inFlight = 0;
  /** When the newest group being written started (ms). */
  private newestStart = 0;
  private stallTimer: NodeJS.Timeout | null = null;

  constructor(private readonly o: AppendGroupsOptions) {}

  append(append: StreamAppend): Promise<AppendResult> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ append, resolve, reject });
      this.next();
    });
  }

  private next(): void {
    while (this.waiting.length > 0 && this.mayStart()) {
      const group = this.takeGroup();
      this.inFlight++;
      this.newestStart = Date.now();
      void this.write(group).finally(() => {
        this.inFlight--;
        this.next();
      });
    }
    // Appends wait behind groups being written: look again once the newest has been written for STALL_MS.
    if (this.waiting.length > 0 && this.inFlight < MAX_STALLED && this.stallTimer === null) {
      this.stallTimer = setTimeout(() => {
        this.stallTimer = null;
        this.next();
      }, Math.max(1, STALL_MS - (Date.now() - this.newestStart)));
      this.stallTimer.unref();
    }
  }

  /** Another group may start: fewer than AT_ONCE are being written, or all of them for STALL_MS already. */
  private mayStart(): boolean {
    if (this.inFlight < AT_ONCE) return true;
    return this.inFlight < MAX_STALLED && Date.now() - this.newestStart >= STALL_MS;
  }

  /** The oldest waiting appends, up to MAX_GROUP, one per stream (a second append to a stream waits for the next group). */
  private takeGroup(): Waiting[] {
    const group: Waiting[] = [];
    const streams = new Set<string>();
    for (let i = 0; i < this.waiting.length && group.length < MAX_GROUP; ) {
      const w = this.waiting[i];
      if (streams.has(w.append.stream)) {
        i++;
        continue;
      }
      streams.add(w.append.stream);
      group.push(w);
      this.waiting.splice(i, 1);
    }
    return group;
  }

  private async write(group: Waiting[]): Promise<void> {
    if (group.length > 1) {
      let results: AppendResult[] | null = null;
      try {
        results = await this.o.together(group.map((w) => w.append));
      } catch {
        // Retried one by one below: each gets its own answer.
      }
      if (results) {
        group.forEach((w, i) => w.resolve(results[i]));
        return;
      }
    }
    await Promise.all(group.map((w) => this.o.alone(w.append).then(w.resolve, w.reject)));
  }
}
