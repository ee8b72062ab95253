/**
 * `projections verify [NAME]`: is each read model exactly what its events
 * say? (docs/read-models.md "Verifying".) Without disturbing the server:
 *
 * 1. In one short REPEATABLE READ transaction, read the projector's live
 *    checkpoint P and copy its live tables into a scratch schema. Rows and
 *    checkpoint commit together, so the copy is the read model at exactly P.
 *    Nothing is locked: the live runner goes on.
 * 2. Replay the log from event zero up to P into fresh tables of the same
 *    definition in that schema (the projector's own code, search_path pointing
 *    at the schema, as a rebuild does), in short transactions.
 * 3. Compare the two by primary key in SQL; report every differing row
 *    (key, column, live value, rebuilt value), then drop the schema.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { EventStore } from '../eventstore/types.ts';
import type { Projector } from './projector.ts';
import { INLINE_BITS } from './inline.ts';
import { applyInShadow, replay } from './rebuild.ts';
import { decodePosition } from '../eventstore/position.ts';
import { EVENT_COLUMNS, toRecorded } from '../eventstore/postgres.ts';
import type { RecordedEvent } from '../eventstore/types.ts';
import type { Database } from '../db/schema.ts';

/** Differences listed per table (all are counted). */
const MAX_LISTED = 1000;

export interface Difference {
  table: string;
  key: Record<string, unknown>;
  column: string;
  live: unknown;
  rebuilt: unknown;
}

export interface VerifyProjectionResult {
  projector: string;
  position: string | null;
  rows: Record<string, number>;
  differences_count: number;
  differences: Difference[];
}

async function primaryKey(db: Kysely<Database>, table: string): Promise<string[]> {
  const { rows } = await sql<{ column: string }>`
    select a.attname as column
    from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
    where i.indrelid = ${`public.${table}`}::regclass and i.indisprimary
    order by array_position(i.indkey, a.attnum)`.execute(db);
  if (rows.length === 0) throw new Error(`table ${table} has no primary key: projections verify cannot match its rows`);
  return rows.map((r) => r.column);
}

function differingColumns(live: Record<string, unknown> | null, rebuilt: Record<string, unknown> | null): string[] {
  if (!live || !rebuilt) return ['(row)'];
  const columns = new Set([...Object.keys(live), ...Object.keys(rebuilt)]);
  return [...columns].filter((c) => JSON.stringify(live[c]) !== JSON.stringify(rebuilt[c]));
}

/**
 * An inline projector's live rows also hold the events appended inline after
 * its checkpoint (their append transactions wrote them): the events of its
 * types visible in the copy's snapshot past the checkpoint and marked with its
 * bit (es_events.inline_projectors; before migration 0106, applied_inline
 * alone), which the rebuilt side applies too, so both sides stand at the same
 * point. An event appended without inline projections (a process with
 * INLINE_PROJECTIONS=false, the admin CLI) is in the live rows only once the
 * runner has passed it, so past the checkpoint it is left out of both.
 */
async function visibleAfter(trx: Transaction<Database>, after: string | null, types: readonly string[], bit: number): Promise<RecordedEvent[]> {
  const { tx, pos } = decodePosition(after);
  const { rows } = await sql<any>`
    select ${sql.raw(EVENT_COLUMNS)} from es_events
    where (transaction_id, global_position) > (${tx}::xid8, ${pos}::bigint) and type = any(${[...types]}::text[])
      and ((inline_projectors & ${bit}::smallint) <> 0 or (inline_projectors = 0 and applied_inline))
    order by transaction_id, global_position`.execute(trx);
  return rows.map(toRecorded);
}

export async function verifyProjection(db: Kysely<Database>, store: EventStore, projector: Projector): Promise<VerifyProjectionResult> {
  const schema = `verify_${projector.name.replace(/[^a-z0-9_]/gi, '_')}`;
  const liveCopy = (t: string) => `live_${t}`;
  await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db);
  await sql`create schema ${sql.id(schema)}`.execute(db);
  try {
    const { position, inlineEvents } = await db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const { rows } = await sql<{ position: string | null }>`select position from projection_checkpoints where name = ${projector.name}`.execute(trx);
        for (const t of projector.tables) {
          await sql`create table ${sql.id(schema, liveCopy(t))} as select * from ${sql.id('public', t)}`.execute(trx);
        }
        const at = rows[0]?.position ?? null;
        const bit = INLINE_BITS[projector.name];
        return { position: at, inlineEvents: bit !== undefined && store.kind === 'postgres' ? await visibleAfter(trx, at, projector.handles, bit) : [] };
      });
    for (const t of projector.tables) {
      await sql`create table ${sql.id(schema, t)} (like ${sql.id('public', t)} including all)`.execute(db);
    }
    if (position !== null) await replay(db, store, schema, projector, null, position);
    if (inlineEvents.length > 0) await db.transaction().execute((trx) => applyInShadow(trx, schema, projector, inlineEvents));

    const rows: Record<string, number> = {};
    const differences: Difference[] = [];
    let count = 0;
    for (const t of projector.tables) {
      const key = await primaryKey(db, t);
      const on = sql.join(key.map((k) => sql`l.${sql.id(k)} = s.${sql.id(k)}`), sql` and `);
      const { rows: counted } = await sql<{ n: number }>`select count(*)::int as n from ${sql.id(schema, liveCopy(t))}`.execute(db);
      rows[t] = counted[0].n;
      const { rows: pairs } = await sql<{ live: Record<string, unknown> | null; rebuilt: Record<string, unknown> | null }>`
        select case when l is null then null else to_jsonb(l) end as live, case when s is null then null else to_jsonb(s) end as rebuilt
        from ${sql.id(schema, liveCopy(t))} l full join ${sql.id(schema, t)} s on ${on}
        where to_jsonb(l) is distinct from to_jsonb(s)`.execute(db);
      for (const pair of pairs) {
        const from = (pair.live ?? pair.rebuilt)!;
        const keyValues = Object.fromEntries(key.map((k) => [k, from[k]]));
        for (const column of differingColumns(pair.live, pair.rebuilt)) {
          count++;
          if (differences.length >= MAX_LISTED) continue;
          differences.push({
            table: t,
            key: keyValues,
            column,
            live: column === '(row)' ? (pair.live ? 'present' : 'missing') : pair.live?.[column],
            rebuilt: column === '(row)' ? (pair.rebuilt ? 'present' : 'missing') : pair.rebuilt?.[column],
          });
        }
      }
    }
    return { projector: projector.name, position, rows, differences_count: count, differences };
  } finally {
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db);
  }
}
