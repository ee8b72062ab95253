/**
 * The one writer of datetimes the API, the events and the CLI show: ISO 8601
 * in UTC with milliseconds (docs/api-decisions.md, "Identifiers, dates and
 * money"), from a Date or anything Date parses (PostgreSQL timestamptz values
 * arrive as either).
 */
export function isoDateTime(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

/** isoDateTime, keeping null. */
export function isoOrNull(value: Date | string | null): string | null {
  return value === null ? null : isoDateTime(value);
}
