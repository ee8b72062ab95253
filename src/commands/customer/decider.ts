/**
 * Customer decider (reference: customer state table; docs/api-decisions.md "Representations", "Customers").
 * PATCH may set any status; DELETE archives, once. ICE uniqueness is not
 * decided here: the handler claims and releases reservations around the
 * append (docs/architecture.md "Invariants across streams") using iceChange().
 */
import type { Decider } from '../shared/decider.ts';
import { sameJson } from '../shared/same-json.ts';
import { DomainError, notFound } from '../../shared/errors.ts';
import type { CustomerCommand } from './commands.ts';
import type { Customer, CustomerEvent } from './events.ts';
import { validateCustomerPatch, validateNewCustomer } from './validate.ts';

export interface CustomerState {
  /** Revision of the last event folded (-1: no stream yet). */
  revision: number;
  customer: Customer | null;
}

export const initialCustomerState: CustomerState = { revision: -1, customer: null };

export function evolveCustomer(state: CustomerState, event: CustomerEvent): CustomerState {
  return { revision: state.revision + 1, customer: event.data.customer };
}

function decideCustomer(command: CustomerCommand, state: CustomerState): CustomerEvent[] {
  const now = command.metadata.now;
  const version = state.revision + 1;

  if (command.type === 'CreateCustomer') {
    // Same id twice (a retried request): nothing new happens, the handler answers with what exists.
    if (state.customer) return [];
    const { customer_id, ...input } = command.data;
    const fields = validateNewCustomer(input);
    const customer: Customer = {
      id: customer_id,
      ...fields,
      status: 'active',
      archived_at: null,
      created_at: now,
      updated_at: now,
      version,
    };
    return [{ type: 'CustomerCreated', data: { customer } }];
  }

  const current = state.customer;
  if (!current) throw notFound('Customer');

  if (command.type === 'ArchiveCustomer') {
    if (current.status === 'archived') {
      throw new DomainError('ALREADY_ARCHIVED', 'The customer is already archived.');
    }
    const customer: Customer = { ...current, status: 'archived', archived_at: now, updated_at: now, version };
    return [{ type: 'CustomerArchived', data: { customer } }];
  }

  const patch = validateCustomerPatch(command.data.patch);
  const next: Customer = { ...current, ...patch };
  if (next.status !== current.status) {
    // Archiving through PATCH stamps archived_at like DELETE; any other status unarchives.
    next.archived_at = next.status === 'archived' ? now : null;
  }
  const changed_fields = changedFields(current, next);
  // A PATCH that changes nothing appends nothing: no event, no webhook, same version.
  if (changed_fields.length === 0) return [];
  const customer: Customer = { ...next, updated_at: now, version };
  return [{ type: 'CustomerUpdated', data: { customer, changed_fields, previous_ice: current.ice } }];
}

function changedFields(before: Customer, after: Customer): string[] {
  const keys = Object.keys(after) as (keyof Customer)[];
  return keys.filter((key) => !sameJson(before[key], after[key]));
}

export const customerDecider: Decider<CustomerCommand, CustomerEvent, CustomerState> = {
  initialState: initialCustomerState,
  evolve: evolveCustomer,
  decide: decideCustomer,
};

/**
 * The ICE reservations a command needs, for the handler to claim before the
 * append (claim) and release after it (release). Null when nothing to do.
 * Archiving keeps the ICE reserved: the customer can be unarchived.
 */
export function iceChange(command: CustomerCommand, state: CustomerState): { claim: string | null; release: string | null } {
  if (command.type === 'CreateCustomer') return { claim: state.customer ? null : normalizeIce(command.data.ice), release: null };
  if (command.type !== 'UpdateCustomer' || !state.customer || command.data.patch.ice === undefined) {
    return { claim: null, release: null };
  }
  const before = state.customer.ice;
  const after = normalizeIce(command.data.patch.ice);
  if (after === before) return { claim: null, release: null };
  return { claim: after, release: before };
}

/** As stored: trimmed, blank is no ICE. */
function normalizeIce(ice: string | null | undefined): string | null {
  const text = typeof ice === 'string' ? ice.trim() : '';
  return text === '' ? null : text;
}
