/**
 * Read your writes outside the server: the admin CLI and start-up hooks write
 * events in a process whose projectors may not run (the server is stopped,
 * or has not started them yet). This starts this process's runners for the
 * time of the wait: if a server already runs the projectors, ours stay on
 * standby (the advisory lock is taken) and the server's progress reaches us
 * through pg_notify; if not, ours do the work.
 */
import type { Kysely } from 'kysely';
import type { EventStore } from '../eventstore/types.ts';
import type { Logger } from '../shared/logger.ts';
import type { ProjectionProgress } from './progress.ts';
import type { Projector } from './projector.ts';
import type { InlineApplied } from './inline.ts';
import { ProjectionRunner } from './runner.ts';
import type { Database } from '../db/schema.ts';

/** What the wait needs of the process's runtime (src/runtime.ts provides it). */
export interface CatchUpDeps {
  database: { db: Kysely<Database>; url: string };
  /** The appends this process wrote inline (inline.ts): its writes answer from them; a rebuild's swap makes it forget them. */
  inline?: { applied: InlineApplied } | null;
  store: EventStore;
  logger: Logger;
  progress: ProjectionProgress;
  projectors: readonly Projector[];
}

export async function catchUpProjections(rt: CatchUpDeps, position: string | null, timeoutMs = 30_000): Promise<boolean> {
  if (position === null || (await rt.progress.waitFor(position, 0))) return true;
  const runners = rt.projectors.map(
    (p) => new ProjectionRunner({ db: rt.database.db, store: rt.store, url: rt.database.url, logger: rt.logger, progress: rt.progress, applied: rt.inline?.applied }, p),
  );
  runners.forEach((r) => r.start());
  try {
    return await rt.progress.waitFor(position, timeoutMs);
  } finally {
    await Promise.all(runners.map((r) => r.stop()));
  }
}
