/**
 * The daily digest (docs/audit.md "Digests"): once per calendar day
 * (Africa/Casablanca, like every "today" of the service), each organization
 * whose audit stream has no digest of that day gets one (src/audit/digest.ts).
 * It checks every hour, so a process that was down at midnight catches up
 * when it comes back (first check 5 minutes after start). Two processes that check at the same moment may both
 * write that day's digest: harmless, each is a valid digest of its position.
 * Role 'projector': it runs where the projectors run.
 */
import type { Kysely } from 'kysely';
import { recordDigests, type RecordedDigest } from '../audit/digest.ts';
import { auditStream, DIGEST_EVENT } from '../audit/log-fold.ts';
import type { EventStore } from '../eventstore/types.ts';
import { BUSINESS_TIME_ZONE } from '../shared/business-time.ts';
import type { Worker } from './worker.ts';
import type { Database } from '../db/schema.ts';

const CHECK_EVERY_MS = 60 * 60 * 1000;
/** The first check waits a little: start-up (migrations, projector catch-up) comes first. */
const FIRST_CHECK_MS = 5 * 60 * 1000;

function casablancaDay(instant: Date): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: BUSINESS_TIME_ZONE, year: 'numeric', month: '2-digit', day: '2-digit' }).format(instant);
}

/** Records today's digest for every organization that has none yet; returns what it wrote. */
export async function recordDueDigests(db: Kysely<Database>, store: EventStore, now = new Date()): Promise<RecordedDigest[]> {
  const today = casablancaDay(now);
  const organizations = (await db.selectFrom('organizations').select('id').orderBy('id').execute()).map((r) => r.id as string);
  const due: string[] = [];
  for (const org of organizations) {
    const [last] = await store.readStream(auditStream(org), { direction: 'backwards', maxCount: 1 });
    const lastDay = last?.type === DIGEST_EVENT ? casablancaDay(new Date(last.metadata.occurred_at)) : null;
    if (lastDay !== today) due.push(org);
  }
  return due.length === 0 ? [] : recordDigests(store, due, now);
}

export const auditDigestWorker: Worker = {
  name: 'audit-digest',
  role: 'projector',
  async start(rt) {
    let stopped = false;
    let running: Promise<unknown> = Promise.resolve();
    const tick = () => {
      running = recordDueDigests(rt.database.db, rt.store)
        .then((written) => {
          if (written.length > 0) rt.logger.info({ digests: written.length }, 'recorded the daily audit digests');
        })
        .catch((err) => rt.logger.error({ err }, 'could not record the daily audit digests'));
    };
    let timer = setTimeout(function again() {
      if (stopped) return;
      tick();
      timer = setTimeout(again, CHECK_EVERY_MS);
      timer.unref();
    }, FIRST_CHECK_MS);
    timer.unref();
    return {
      async stop() {
        stopped = true;
        clearTimeout(timer);
        await running;
      },
    };
  },
};
