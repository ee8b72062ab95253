/**
 * The customers read model (migration 0005; projector
 * src/projections/customers.ts; queries src/queries/customers.ts).
 */
import type { Selectable } from 'kysely';
import type { Timestamp } from './columns.ts';

export interface CustomersTable {
  id: string;
  organization_id: string;
  name: string;
  type: 'b2b' | 'b2c';
  ice: string | null;
  legal_name: string | null;
  rc: string | null;
  email: string | null;
  phone: string | null;
  address_street: string | null;
  address_city: string | null;
  address_postal_code: string | null;
  address_country: string;
  notes: string | null;
  tags: string[];
  status: 'active' | 'inactive' | 'archived';
  archived_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  version: number;
  /** name, email and ICE folded for search (src/shared/search.ts) */
  search_text: string;
}

export interface CustomersTables {
  customers: CustomersTable;
}

export type CustomerRow = Selectable<CustomersTable>;
