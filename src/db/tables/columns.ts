/**
 * Column types shared by the table files: what `pg` returns on select, what
 * the code may write. timestamptz arrives as a Date and is written as a Date
 * or an ISO string; numeric and bigint arrive as exact decimal strings.
 */
import type { ColumnType } from 'kysely';

export type Timestamp = ColumnType<Date, Date | string, Date | string>;
export type Numeric = ColumnType<string, string | number, string | number>;
/** A timestamptz with a default (now()): optional on insert. */
export type GeneratedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
