/**
 * A catch-up subscription over readAll: read a batch, hand it over, advance.
 * Behind the process's shared reader of the log's tail (LogTail), it reads
 * the store itself; once its checkpoint is inside the tail's stretch it takes
 * its batches from memory, and at the end of the log it waits for the tail to
 * read further (the tail owns notifications, polling and the retries while an
 * older transaction is still open).
 */
import type { LogTail } from './log-tail.ts';
import type { RecordedEvent, Subscription } from './types.ts';

export interface PollingOptions {
  after: string | null;
  handler: (events: RecordedEvent[]) => Promise<void>;
  read: (after: string | null, limit: number) => Promise<RecordedEvent[]>;
  tail: LogTail;
  batchSize: number;
  onError?: (err: unknown) => void;
  /** How long to wait at the end of the log before looking again without news (default 1 s). */
  idlePollMs?: number;
}

export function subscribeByPolling(o: PollingOptions): Subscription & { readonly checkpoint: string | null } {
  let checkpoint = o.after;
  let stopped = false;

  const loop = (async () => {
    while (!stopped) {
      try {
        const events = o.tail.after(checkpoint, o.batchSize) ?? (await o.read(checkpoint, o.batchSize));
        if (stopped) break;
        if (events.length > 0) {
          await o.handler(events);
          checkpoint = events[events.length - 1].position;
          continue;
        }
        // At the end of the log: wait for the shared reader to read past us.
        o.tail.anchor(checkpoint);
        await o.tail.waitPast(checkpoint, o.idlePollMs ?? 1000);
      } catch (err) {
        stopped = true;
        o.onError?.(err);
      }
    }
  })();

  return {
    get checkpoint() {
      return checkpoint;
    },
    async stop() {
      stopped = true;
      o.tail.wakeAll();
      await loop;
    },
  };
}
