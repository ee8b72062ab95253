/**
 * The organizations read model (migration 0004; projector
 * src/projections/organizations.ts; queries src/queries/organizations.ts)
 * and reservation recovery's bookkeeping (reservation_checks, written by
 * src/workers/reservation-recovery.ts).
 */
import type { ColumnType, Selectable } from 'kysely';
import type { Timestamp } from './columns.ts';
import type { Address } from '../../commands/customer/events.ts';
import type { Organization } from '../../commands/organization/events.ts';

/** A row is the organization as its events carry it (src/commands/organization/events.ts), with typed columns. */
export interface OrganizationsTable extends Omit<Organization, 'billing_address' | 'archived_at' | 'created_at' | 'updated_at'> {
  /** jsonb, written as JSON text */
  billing_address: ColumnType<Address, string, string>;
  archived_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ReservationChecksTable {
  stream: string;
  kind: string;
  scope: string;
  value: string;
  owner: string;
  revision: number;
  since: Timestamp;
}

export interface OrganizationsTables {
  organizations: OrganizationsTable;
  reservation_checks: ReservationChecksTable;
}

export type OrganizationRow = Selectable<OrganizationsTable>;
export type ReservationCheckRow = Selectable<ReservationChecksTable>;
