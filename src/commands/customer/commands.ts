/**
 * Customer commands. Inputs are typed as the API schema shapes them, but the
 * decider re-checks every value, so a command built by a worker or a test is
 * held to the same rules.
 */
import type { Command } from '../command.ts';
import type { CustomerStatus, CustomerType } from './events.ts';

export interface AddressInput {
  street?: string | null;
  city?: string | null;
  postal_code?: string | null;
  country?: string | null;
}

/** POST /customers body. legal_name and rc can only be set here. */
export interface CreateCustomerInput {
  name: string;
  type: CustomerType;
  ice?: string | null;
  legal_name?: string | null;
  rc?: string | null;
  email?: string | null;
  phone?: string | null;
  address?: AddressInput | null;
  notes?: string | null;
  tags?: string[] | null;
}

/** PATCH /customers/{id} body: only the fields sent; null clears a field. */
export interface CustomerPatch {
  name?: string;
  type?: CustomerType;
  ice?: string | null;
  email?: string | null;
  phone?: string | null;
  /** Replaces the whole address (country defaults to MA again). */
  address?: AddressInput | null;
  notes?: string | null;
  tags?: string[] | null;
  status?: CustomerStatus;
}

export type CreateCustomer = Command<'CreateCustomer', CreateCustomerInput & { customer_id: string }>;
export type UpdateCustomer = Command<'UpdateCustomer', { customer_id: string; patch: CustomerPatch }>;
/** DELETE /customers/{id}. */
export type ArchiveCustomer = Command<'ArchiveCustomer', { customer_id: string }>;

export type CustomerCommand = CreateCustomer | UpdateCustomer | ArchiveCustomer;
