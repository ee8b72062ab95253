/**
 * Two guards of the server process (docs/reliability.md):
 *
 * - A lost database connection costs the requests on it, never the process.
 *   Every pg client has an 'error' listener (src/db/connection.ts) and every
 *   loop catches its failures; this is the net under them: an uncaught
 *   exception or unhandled rejection that is a connection error (a library's
 *   client we do not see, a timer's query) is logged and the process goes
 *   on. Anything else still ends the process, as Node would.
 * - `npm start` runs the server as a child of npm (through a shell). A
 *   SIGTERM sent to npm does not always reach the child, which then keeps
 *   serving as an orphan; so when started by npm, the server watches its
 *   parent and shuts down gracefully once it is gone.
 */
import { isConnectionError } from './db/connection.ts';
import type { Logger } from './shared/logger.ts';

export function surviveConnectionErrors(logger: Logger): void {
  const handle = (kind: string) => (err: unknown) => {
    if (isConnectionError(err)) {
      logger.warn({ err: String((err as Error)?.message ?? err), kind }, 'database connection lost (process continues)');
      return;
    }
    logger.fatal({ err, kind }, 'crashed');
    console.error(err);
    process.exit(1);
  };
  process.on('uncaughtException', handle('uncaughtException'));
  process.on('unhandledRejection', handle('unhandledRejection'));
}

/** Calls `onOrphaned` once the process that started us exits (only under `npm start`). */
export function stopWithParent(startedByNpm: boolean, onOrphaned: () => void, everyMs = 500): void {
  if (!startedByNpm) return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onOrphaned();
  }, everyMs);
  timer.unref();
}
