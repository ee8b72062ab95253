/**
 * Writes the business time zone's offsets, as this process's time zone data
 * has them, into business_utc_offsets (migration 0108), which the analysts'
 * views read through business_date(): their calendar days are then the
 * API's (src/shared/business-time.ts). Run after the migrations at every
 * start (the server's and the admin CLI's), so a newer Node with newer data
 * corrects them. The rows carry the release of the data they come from, and
 * only a newer release rewrites them (the same release gives the same
 * offsets; an older Node beside the others, or an operator's CLI, leaves
 * them): most starts cost one small query, and nothing is computed. One
 * writer at a time, in one transaction.
 */
import { sql, type Kysely } from 'kysely';
import { businessUtcOffsets, type UtcOffsetSince } from '../shared/business-time.ts';

/** Computed once per process, when needed (up to 0.2 s with Node 20's data, which lists Ramadan changes to 2087). */
let computed: UtcOffsetSince[] | null = null;

/** The release of this process's time zone data ('2026c'), or '' when Node does not say. */
export const TZDATA = process.versions.tz ?? '';

export async function writeBusinessOffsets(db: Kysely<any>, tzdata = TZDATA): Promise<void> {
  // Releases compare as text ('2025c' < '2026a' < '2026c'); no rows: false.
  const current = sql<{ current: boolean }>`select coalesce(max(tzdata) >= ${tzdata}, false) as current from business_utc_offsets`;
  if ((await current.execute(db)).rows[0]?.current) return;
  const offsets = (computed ??= businessUtcOffsets());
  await db.transaction().execute(async (trx) => {
    await sql`lock table business_utc_offsets in exclusive mode`.execute(trx);
    if ((await current.execute(trx)).rows[0]?.current) return; // another process wrote them meanwhile
    await sql`delete from business_utc_offsets`.execute(trx);
    await sql`insert into business_utc_offsets (since, utc_offset, tzdata)
              select s, make_interval(secs => o), ${tzdata}
                from unnest(${offsets.map((o) => o.since.toISOString())}::timestamptz[], ${offsets.map((o) => o.offsetSeconds)}::int[]) as t(s, o)`.execute(trx);
  });
}
