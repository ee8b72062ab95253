/**
 * A catch-up subscription over readAll: read a batch, hand it over, advance;
 * when nothing is left, sleep until a notification or the polling fallback.
 * A notification names the appended position: while our checkpoint is behind
 * it, an older transaction is still open, so we re-read after a few ms instead
 * of waiting for the next notification (which may never come).
 */
import type { LogTail } from './log-tail.ts';
import type { Notifier } from './notifier.ts';
import type { RecordedEvent, Subscription } from './types.ts';

export interface PollingOptions {
  after: string | null;
  handler: (events: RecordedEvent[]) => Promise<void>;
  read: (after: string | null, limit: number) => Promise<RecordedEvent[]>;
  notifier: Notifier;
  batchSize: number;
  onError?: (err: unknown) => void;
  idlePollMs?: number;
  /**
   * The process's shared reader of the log's tail: once this subscription has
   * caught up, it takes its events from there instead of querying the store.
   */
  tail?: LogTail;
}

export function subscribeByPolling(o: PollingOptions): Subscription & { readonly checkpoint: string | null } {
  let checkpoint = o.after;
  let newestNotified = '';
  let stopped = false;
  let wake: (() => void) | null = null;
  const unlisten = o.notifier.subscribe((payload) => {
    if (payload > newestNotified) newestNotified = payload;
    wake?.();
  });

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        wake = null;
        resolve();
      }
      wake = done;
    });

  const loop = (async () => {
    let quickRetries = 0;
    while (!stopped) {
      try {
        const events = o.tail?.after(checkpoint, o.batchSize) ?? (await o.read(checkpoint, o.batchSize));
        if (stopped) break;
        if (events.length > 0) {
          await o.handler(events);
          checkpoint = events[events.length - 1].position;
          quickRetries = 0;
          continue;
        }
        if (o.tail) {
          // At the end of the log: wait for the shared reader to read past us.
          o.tail.anchor(checkpoint);
          await o.tail.waitPast(checkpoint, o.idlePollMs ?? 1000);
          continue;
        }
        const behind = checkpoint === null ? newestNotified !== '' : newestNotified > checkpoint;
        if (behind && quickRetries < 200) {
          quickRetries++;
          await sleep(Math.min(2 + quickRetries, 20));
        } else {
          quickRetries = 0;
          await sleep(o.idlePollMs ?? 1000);
        }
      } catch (err) {
        stopped = true;
        o.onError?.(err);
      }
    }
    unlisten();
  })();

  return {
    get checkpoint() {
      return checkpoint;
    },
    async stop() {
      stopped = true;
      wake?.();
      o.tail?.wakeAll();
      await loop;
    },
  };
}
