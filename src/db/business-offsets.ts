/**
 * Writes the business time zone's offsets, as this process's time zone data
 * has them, into business_utc_offsets (migration 0108), which the analysts'
 * views read through business_date(): their calendar days are then the
 * API's (src/shared/business-time.ts). Run after the migrations at every
 * start, so a newer Node with newer data corrects them. Rewritten only when
 * they differ and this process's data is not older than theirs (so processes
 * of two Node versions, or an operator's CLI with an older Node, do not undo
 * each other: the newest data stays), in one transaction, one writer at a
 * time.
 */
import { sql, type Kysely } from 'kysely';
import { businessUtcOffsets, type UtcOffsetSince } from '../shared/business-time.ts';

/** Computed once per process (up to 0.2 s with Node 20's data, which lists Ramadan changes to 2087). */
let computed: UtcOffsetSince[] | null = null;

/** The release of this process's time zone data ('2026c'), or '' when Node does not say. */
export const TZDATA = process.versions.tz ?? '';

export async function writeBusinessOffsets(db: Kysely<any>, tzdata = TZDATA): Promise<void> {
  const offsets = (computed ??= businessUtcOffsets());
  const since = offsets.map((o) => o.since.toISOString());
  const seconds = offsets.map((o) => o.offsetSeconds);
  // Releases compare as text ('2025c' < '2026a' < '2026c').
  const current = sql<{ current: boolean }>`
    select coalesce(max(tzdata) > ${tzdata}
                 or (array_agg(since order by since) = ${since}::timestamptz[]
                     and array_agg(extract(epoch from utc_offset)::int order by since) = ${seconds}::int[]
                     and max(tzdata) = ${tzdata}), false) as current
      from business_utc_offsets`;
  if ((await current.execute(db)).rows[0]?.current) return;
  await db.transaction().execute(async (trx) => {
    await sql`lock table business_utc_offsets in exclusive mode`.execute(trx);
    if ((await current.execute(trx)).rows[0]?.current) return; // another process wrote them meanwhile
    await sql`delete from business_utc_offsets`.execute(trx);
    await sql`insert into business_utc_offsets (since, utc_offset, tzdata)
              select s, make_interval(secs => o), ${tzdata} from unnest(${since}::timestamptz[], ${seconds}::int[]) as t(s, o)`.execute(trx);
  });
}
