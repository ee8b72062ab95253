/**
 * Customer events (stream `customer-<id>`). Each carries the full public
 * customer representation (docs/api-decisions.md "Representations") as of that event under
 * data.customer, so the webhook worker publishes it verbatim and the
 * projector upserts it without reading anything else.
 */
import type { DomainEvent } from '../shared/decider.ts';

export const CUSTOMER_TYPES = ['b2b', 'b2c'] as const;
export type CustomerType = (typeof CUSTOMER_TYPES)[number];

export const CUSTOMER_STATUSES = ['active', 'inactive', 'archived'] as const;
export type CustomerStatus = (typeof CUSTOMER_STATUSES)[number];

export interface Address {
  street: string | null;
  city: string | null;
  postal_code: string | null;
  /** ISO 3166-1 alpha-2, default 'MA'. */
  country: string;
}

/** The public customer representation (docs/api-decisions.md "Representations"). */
export interface Customer {
  id: string;
  name: string;
  type: CustomerType;
  ice: string | null;
  legal_name: string | null;
  rc: string | null;
  email: string | null;
  phone: string | null;
  address: Address;
  notes: string | null;
  tags: string[];
  status: CustomerStatus;
  archived_at: string | null;
  created_at: string;
  updated_at: string;
  /** Revision of the event in the customer stream (created = 0). */
  version: number;
}

export type CustomerCreated = DomainEvent<'CustomerCreated', { customer: Customer }>;

export type CustomerUpdated = DomainEvent<
  'CustomerUpdated',
  {
    customer: Customer;
    /** Top-level fields whose value changed, e.g. ['name', 'status']. */
    changed_fields: string[];
    /** ICE before this update (equals customer.ice when unchanged): the reservation to release. */
    previous_ice: string | null;
  }
>;

/** DELETE /customers/{id}: soft delete, published as customer.deleted. */
export type CustomerArchived = DomainEvent<'CustomerArchived', { customer: Customer }>;

export type CustomerEvent = CustomerCreated | CustomerUpdated | CustomerArchived;

export const CUSTOMER_EVENT_TYPES = ['CustomerCreated', 'CustomerUpdated', 'CustomerArchived'] as const;

export function customerStream(customerId: string): string {
  return `customer-${customerId}`;
}
