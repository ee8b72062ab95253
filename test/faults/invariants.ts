/**
 * What must hold after any fault (issue: the standing fault suite):
 * nothing acknowledged is lost, invoice numbers are 1..N per organization and
 * year (no gap, no duplicate), and every read model equals a rebuild from the
 * log (no batch applied twice or skipped across a lost connection).
 */
import { expect } from 'chai';
import { sql, type Kysely } from 'kysely';
import type pg from 'pg';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { comparePositions, type RecordedEvent } from '../../src/eventstore/types.ts';
import { processParts } from '../../src/main.ts';
import { until } from '../support/wait.ts';
import type { WriteLoad } from './harness.ts';

/** Every acknowledged draft exists, every acknowledged finalize kept its number. */
export async function expectNothingAcknowledgedLost(db: Kysely<any>, load: WriteLoad): Promise<void> {
  const ids = [...load.drafts];
  const rows = ids.length
    ? await db.selectFrom('invoices').select(['id', 'invoice_number']).where('id', 'in', ids).execute()
    : [];
  const found = new Map(rows.map((r) => [r.id as string, r.invoice_number as string | null]));
  const missing = ids.filter((id) => !found.has(id));
  expect(missing, 'acknowledged drafts missing from the read model').to.deep.equal([]);
  const renumbered = [...load.finalized].filter(([id, number]) => found.get(id) !== number);
  expect(renumbered, 'acknowledged finalizes whose number changed').to.deep.equal([]);
}

/** Interrupted finalizations are completed by the recovery worker (grace 5 s, sweep every 10 s). */
export async function waitForNoPendingFinalization(db: Kysely<any>): Promise<void> {
  await until(
    async () => (await sql<{ n: number }>`select count(*)::int as n from invoices where finalization_pending`.execute(db)).rows[0].n === 0,
    90_000,
    'no finalization pending',
    250,
  );
}

/** Per organization and year: sequences exactly 1..N, numbers distinct, each on one finalized invoice. Reads two read models: call it once they caught up (expectProjectionsEqualRebuild waits for that). */
export async function expectGaplessNumbering(db: Kysely<any>): Promise<number> {
  const { rows } = await sql<{ organization_id: string; year: number; n: number; max: number; distinct_numbers: number; distinct_invoices: number }>`
    select organization_id, year, count(*)::int as n, max(sequence)::int as max,
           count(distinct number)::int as distinct_numbers, count(distinct invoice_id)::int as distinct_invoices
      from invoice_numbers group by organization_id, year`.execute(db);
  let total = 0;
  for (const r of rows) {
    expect({ n: r.n, distinct_numbers: r.distinct_numbers, distinct_invoices: r.distinct_invoices }, `numbering of ${r.organization_id} ${r.year}`).to.deep.equal({
      n: r.max,
      distinct_numbers: r.max,
      distinct_invoices: r.max,
    });
    total += r.n;
  }
  const mismatched = await sql<{ n: number }>`
    select count(*)::int as n from invoice_numbers n join invoices i on i.id = n.invoice_id where i.invoice_number is distinct from n.number`.execute(db);
  expect(mismatched.rows[0].n, 'invoices whose number differs from the numbering table').to.equal(0);
  const unnumbered = await sql<{ n: number }>`
    select count(*)::int as n from invoices i where i.invoice_number is not null and not exists (select 1 from invoice_numbers n where n.invoice_id = i.id)`.execute(db);
  expect(unnumbered.rows[0].n, 'numbered invoices missing from the numbering table').to.equal(0);
  return total;
}

/**
 * Each read model equals a replay of the whole log into a shadow schema by
 * the same projector code (what `projections rebuild` would produce).
 */
const projectors = processParts.projectors;

export async function expectProjectionsEqualRebuild(db: Kysely<any>, pool: pg.Pool, url: string): Promise<void> {
  const store = await createPostgresEventStore(pool, url);
  try {
    const head = await store.headPosition();
    await until(
      async () => {
        const { rows } = await sql<{ name: string; position: string | null }>`select name, position from projection_checkpoints`.execute(db);
        const at = new Map(rows.map((r) => [r.name, r.position]));
        return projectors.every((p) => comparePositions(at.get(p.name) ?? null, head) >= 0);
      },
      30_000,
      'read models caught up with the log',
      100,
    );
    for (const projector of projectors) {
      const schema = `verify_${projector.name.replace(/[^a-z0-9_]/gi, '_')}`;
      await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db);
      await sql`create schema ${sql.id(schema)}`.execute(db);
      try {
        for (const t of projector.tables) await sql`create table ${sql.id(schema, t)} (like ${sql.id('public', t)} including all)`.execute(db);
        const handles = new Set(projector.handles);
        let position: string | null = null;
        for (;;) {
          const events: RecordedEvent[] = (await store.readAll(position, 1000)).filter((e) => comparePositions(e.position, head) <= 0);
          if (events.length === 0) break;
          const mine = events.filter((e) => handles.has(e.type));
          if (mine.length) {
            await db.transaction().execute(async (trx) => {
              await sql`select set_config('search_path', ${`${schema}, public`}, true)`.execute(trx);
              await projector.apply(mine, trx);
            });
          }
          position = events[events.length - 1].position;
        }
        for (const t of projector.tables) {
          const diff = await sql<{ side: string; n: number }>`
            select 'live only' as side, count(*)::int as n from (select * from ${sql.id('public', t)} except all select * from ${sql.id(schema, t)}) a
            union all
            select 'rebuild only', count(*)::int from (select * from ${sql.id(schema, t)} except all select * from ${sql.id('public', t)}) b`.execute(db);
          expect(diff.rows, `${projector.name}: table ${t} against a rebuild`).to.deep.equal([
            { side: 'live only', n: 0 },
            { side: 'rebuild only', n: 0 },
          ]);
        }
      } finally {
        await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db);
      }
    }
  } finally {
    await store.close();
  }
}
