/**
 * The service's calendar: Africa/Casablanca (docs/api-decisions.md). Every
 * "today" of the API and the workers comes from Node's time zone data
 * (Temporal, Intl). PostgreSQL has time zone data of its own, which can be
 * older or newer than Node's (Morocco at UTC+0 since 2026-09-20 is in
 * Node 26's and not in the embedded PostgreSQL 17.10's), so the analysts'
 * views do not ask PostgreSQL's: the service writes this zone's offsets, as
 * Node knows them, into `business_utc_offsets` (migration 0108,
 * src/db/business-offsets.ts), and the views' `business_date()` reads them.
 */
import { Temporal } from 'temporal-polyfill';

/** Organizations' "today" is computed in this zone (its offset changes during Ramadan). */
export const BUSINESS_TIME_ZONE = 'Africa/Casablanca';

export interface UtcOffsetSince {
  since: Date;
  /** The zone's offset from UTC from `since` on, in seconds (3600: UTC+1). */
  offsetSeconds: number;
}

/** The zone's offset at `from`, then each change of it before `until`. */
export function businessUtcOffsets(from = new Date('1970-01-01T00:00:00Z'), until = new Date('2100-01-01T00:00:00Z')): UtcOffsetSince[] {
  let at = Temporal.Instant.fromEpochMilliseconds(from.getTime()).toZonedDateTimeISO(BUSINESS_TIME_ZONE);
  const offsets = [{ since: from, offsetSeconds: at.offsetNanoseconds / 1e9 }];
  for (;;) {
    const next = at.getTimeZoneTransition('next');
    if (!next || next.epochMilliseconds >= until.getTime()) return offsets;
    offsets.push({ since: new Date(next.epochMilliseconds), offsetSeconds: next.offsetNanoseconds / 1e9 });
    at = next;
  }
}
