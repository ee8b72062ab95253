/**
 * Rebuilds a projector's tables from position zero while the server runs:
 * replay into a shadow schema (same table definitions, search_path pointing at
 * it, so the projector code is unchanged), then in one transaction that holds
 * the live checkpoint row (the live runner waits on it) catch up to the live
 * position, replace the live tables' rows with the shadow's, and move the
 * checkpoint. Readers see either the old rows or the rebuilt ones.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { EventStore, RecordedEvent } from '../eventstore/types.ts';
import { comparePositions } from '../eventstore/types.ts';
import { ensureCheckpoint, lockCheckpoint, moveCheckpoint } from './checkpoints.ts';
import type { Projector } from './projector.ts';
import type { Database } from '../db/schema.ts';

const BATCH = 1000;

export async function applyInShadow(trx: Transaction<Database>, schema: string, projector: Projector, events: RecordedEvent[]) {
  const handles = new Set(projector.handles);
  const mine = events.filter((e) => handles.has(e.type));
  if (mine.length === 0) return;
  await sql`select set_config('search_path', ${`${schema}, public`}, true)`.execute(trx);
  await projector.apply(mine, trx);
  await sql`select set_config('search_path', 'public', true)`.execute(trx);
}

/** Replays (after, until] into the shadow schema; returns the last position read. Also used by projections verify. */
export async function replay(
  db: Kysely<Database> | Transaction<Database>,
  store: EventStore,
  schema: string,
  projector: Projector,
  after: string | null,
  until: string | null,
): Promise<string | null> {
  let position = after;
  for (;;) {
    let events = await store.readAll(position, BATCH);
    if (until !== null) events = events.filter((e) => comparePositions(e.position, until) <= 0);
    if (events.length === 0) return position;
    if ('isTransaction' in db && db.isTransaction) await applyInShadow(db as Transaction<Database>, schema, projector, events);
    else await (db as Kysely<Database>).transaction().execute((trx) => applyInShadow(trx, schema, projector, events));
    position = events[events.length - 1].position;
  }
}

export interface RebuildResult {
  projector: string;
  position: string | null;
  rows: Record<string, number>;
}

export async function rebuildProjection(db: Kysely<Database>, store: EventStore, projector: Projector): Promise<RebuildResult> {
  const schema = `rebuild_${projector.name.replace(/[^a-z0-9_]/gi, '_')}`;
  await ensureCheckpoint(db, projector.name);
  await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db);
  await sql`create schema ${sql.id(schema)}`.execute(db);
  try {
    for (const t of projector.tables) {
      await sql`create table ${sql.id(schema, t)} (like ${sql.id('public', t)} including all)`.execute(db);
    }
    // Up to the log's head as it is now, not as it grows: under writes faster than the replay, a replay to
    // wherever the log ends never ended (the rest is caught up below, up to the live runner's position).
    const head = await store.headPosition();
    const shadowAt = head === null ? null : await replay(db, store, schema, projector, null, head);
    const rows: Record<string, number> = {};
    let final: string | null = null;
    await db.transaction().execute(async (trx) => {
      const live = await lockCheckpoint(trx, projector.name);
      // Shadow behind live: catch up to exactly the live position.
      const caughtUp = comparePositions(shadowAt, live) < 0 ? await replay(trx, store, schema, projector, shadowAt, live) : shadowAt;
      final = comparePositions(caughtUp, live) >= 0 ? caughtUp : live;
      // Inline projections (inline.ts) write these tables in append transactions: hold them
      // off for the copy (readers go on), so no row lands between the delete and the insert.
      await sql`lock table ${sql.join(projector.tables.map((t) => sql.id('public', t)))} in exclusive mode`.execute(trx);
      for (const t of projector.tables) {
        await sql`delete from ${sql.id('public', t)}`.execute(trx);
        const res = await sql`insert into ${sql.id('public', t)} select * from ${sql.id(schema, t)}`.execute(trx);
        rows[t] = Number(res.numAffectedRows ?? 0);
      }
      // Always, even at the same position: rows that inline transactions wrote for events past
      // the checkpoint were just replaced, and the runner must apply those events again (its
      // compare-and-set includes updated_at, so it notices and restarts from here).
      await moveCheckpoint(trx, projector.name, final);
    });
    return { projector: projector.name, position: final, rows };
  } finally {
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db);
  }
}
