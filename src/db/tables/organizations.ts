/**
 * The organizations read model (migration 0004; projector
 * src/projections/organizations.ts; queries src/queries/organizations.ts)
 * and reservation recovery's bookkeeping (reservation_checks, written by
 * src/workers/reservation-recovery.ts).
 */
import type { ColumnType, Selectable } from 'kysely';
import type { Timestamp } from './columns.ts';
import type { Address } from '../../commands/customer/events.ts';

export interface OrganizationsTable {
  id: string;
  account_id: string;
  legal_name: string;
  ice: string | null;
  rc: string | null;
  if_number: string | null;
  vat_number: string | null;
  phone: string | null;
  email: string | null;
  website: string | null;
  /** jsonb, written as JSON text */
  billing_address: ColumnType<Address, string, string>;
  api_enabled: boolean;
  archived: boolean;
  archived_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  version: number;
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
