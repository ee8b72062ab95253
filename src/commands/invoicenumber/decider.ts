/**
 * The numbering aggregate: one stream per organization and calendar year,
 * `invoicenumbers-<org>-<year>` (docs/architecture.md "Invariants across streams"). Appending at the expected
 * revision makes numbers gapless and unique across processes; remembering
 * which invoice got which number makes a repeated assignment (retry, or
 * recovery racing the request) return the number already given.
 */
import { FieldErrors, readText } from '../field-rules.ts';
import type { Command } from '../command.ts';
import type { Decider, DomainEvent } from '../shared/decider.ts';

export type AssignNumber = Command<'AssignNumber', { invoice_id: string; year: number }>;

export type InvoiceNumberAssigned = DomainEvent<
  'InvoiceNumberAssigned',
  { invoice_id: string; number: string; sequence: number; year: number }
>;

export interface NumberingState {
  /** Sequence the next assignment gets (1 on an empty stream). */
  next: number;
  /** invoice id -> its official number. */
  byInvoice: Map<string, string>;
}

export function invoiceNumberStream(organizationId: string, year: number): string {
  return `invoicenumbers-${organizationId}-${year}`;
}

/** INV-{YYYY}-{NNNNNN}; a seventh digit appears only past 999999. */
export function formatInvoiceNumber(year: number, sequence: number): string {
  return `INV-${year}-${String(sequence).padStart(6, '0')}`;
}

/** The number already given to this invoice, or null. */
export function numberFor(state: NumberingState, invoiceId: string): string | null {
  return state.byInvoice.get(invoiceId) ?? null;
}

/** A fresh empty state (never share one Map between folds). */
export function emptyNumberingState(): NumberingState {
  return { next: 1, byInvoice: new Map() };
}

/** Pure evolve: copies the map. Use applyInPlace for a long-lived cache. */
export function evolveNumbering(state: NumberingState, event: InvoiceNumberAssigned): NumberingState {
  return applyInPlace({ next: state.next, byInvoice: new Map(state.byInvoice) }, event);
}

/**
 * Mutating evolve for the handler's in-memory cache of a numbering stream:
 * O(1) per event instead of copying a map of every invoice of the year.
 * Only for a state the caller owns; drop the cache on any doubt and refold.
 */
export function applyInPlace(state: NumberingState, event: InvoiceNumberAssigned): NumberingState {
  state.byInvoice.set(event.data.invoice_id, event.data.number);
  state.next = Math.max(state.next, event.data.sequence + 1);
  return state;
}

/**
 * Loads (or catches up) a numbering state from stream events in O(events).
 * Handlers should use this, not the generic fold: the pure evolve copies the
 * map per event, which is quadratic on a year of invoices.
 */
export function foldNumbering(events: readonly InvoiceNumberAssigned[], state = emptyNumberingState()): NumberingState {
  for (const event of events) applyInPlace(state, event);
  return state;
}

function decideNumber(command: AssignNumber, state: NumberingState): InvoiceNumberAssigned[] {
  const { invoice_id, year } = command.data;
  const errors = new FieldErrors();
  readText(errors, 'invoice_id', invoice_id, { required: true, max: 100 });
  if (!Number.isInteger(year) || year < 1000 || year > 9999) errors.add('year', 'must be a four-digit year');
  errors.throwIfAny();

  if (state.byInvoice.has(invoice_id)) return []; // read it back with numberFor
  const sequence = state.next;
  return [{ type: 'InvoiceNumberAssigned', data: { invoice_id, number: formatInvoiceNumber(year, sequence), sequence, year } }];
}

export const invoiceNumberDecider: Decider<AssignNumber, InvoiceNumberAssigned, NumberingState> = {
  // A getter, so each fold starts from its own empty Map.
  get initialState() {
    return emptyNumberingState();
  },
  evolve: evolveNumbering,
  decide: decideNumber,
};
