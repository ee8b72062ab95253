/**
 * Writes the business time zone's offsets, as this process's time zone data
 * has them, into business_utc_offsets (migration 0108), which the analysts'
 * views read through business_date(): their calendar days are then the
 * API's (src/shared/business-time.ts). Run after the migrations at every
 * start, so a new Node with newer data corrects them; rewritten only when
 * they differ, in one transaction, one writer at a time.
 */
import { sql, type Kysely } from 'kysely';
import { businessUtcOffsets, type UtcOffsetSince } from '../shared/business-time.ts';

/** Computed once per process (up to 0.2 s with Node 20's data, which lists Ramadan changes to 2087). */
let computed: UtcOffsetSince[] | null = null;

export async function writeBusinessOffsets(db: Kysely<any>): Promise<void> {
  const offsets = (computed ??= businessUtcOffsets());
  const since = offsets.map((o) => o.since.toISOString());
  const seconds = offsets.map((o) => o.offsetSeconds);
  const same = sql<{ same: boolean }>`
    select coalesce(array_agg(since order by since) = ${since}::timestamptz[]
                and array_agg(extract(epoch from utc_offset)::int order by since) = ${seconds}::int[], false) as same
      from business_utc_offsets`;
  if ((await same.execute(db)).rows[0]?.same) return;
  await db.transaction().execute(async (trx) => {
    await sql`lock table business_utc_offsets in exclusive mode`.execute(trx);
    if ((await same.execute(trx)).rows[0]?.same) return; // another process wrote the same meanwhile
    await sql`delete from business_utc_offsets`.execute(trx);
    await sql`insert into business_utc_offsets (since, utc_offset)
              select s, make_interval(secs => o) from unnest(${since}::timestamptz[], ${seconds}::int[]) as t(s, o)`.execute(trx);
  });
}
