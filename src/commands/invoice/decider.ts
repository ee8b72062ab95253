/**
 * Invoice decider: the reference's invoice state table plus docs/api-decisions.md "Invoice lifecycle".
 *
 *   draft --StartFinalization--> draft (locked) --CompleteFinalization--> finalized
 *   finalized --send--> sent;  finalized|sent --pay--> paid;  finalized|sent --void--> void
 *
 * Finalization is split in two (docs/architecture.md "Invariants across streams"): the lock is taken on the
 * invoice stream, the number comes from the numbering stream, and the number
 * lands here. A locked draft is no longer a draft for clients: PATCH answers
 * INVOICE_NOT_EDITABLE and a second finalize INVOICE_NOT_DRAFT.
 * Field validation runs before state checks (docs/api-decisions.md "Keys, plans and quotas" check order).
 */
import { DomainError, notFound } from '../../shared/errors.ts';
import { zeroAmount } from '../../shared/money.ts';
import type { Decider } from '../shared/decider.ts';
import { sameJson } from '../shared/same-json.ts';
import type { InvoiceCommand, InvoiceCustomer } from './commands.ts';
import type { Invoice, InvoiceEvent } from './events.ts';
import { priceLines } from './lines.ts';
import { checkIssuable, readInvoicePatch, readNewInvoice, readPayment, readVoidReason } from './validate.ts';

export interface InvoiceState {
  /** Revision of the last event folded (-1: no stream yet). */
  revision: number;
  invoice: Invoice | null;
  /** Set between InvoiceFinalizationStarted and InvoiceFinalized. */
  finalization: { started_at: string } | null;
  /** The buyer frozen when the finalization started: what every view of the invoice shows from then on. */
  buyer: InvoiceCustomer | null;
}

export const initialInvoiceState: InvoiceState = { revision: -1, invoice: null, finalization: null, buyer: null };

export function evolveInvoice(state: InvoiceState, event: InvoiceEvent): InvoiceState {
  const next = { revision: state.revision + 1, invoice: event.data.invoice, finalization: state.finalization, buyer: state.buyer };
  if (event.type === 'InvoiceFinalizationStarted') {
    next.finalization = { started_at: event.data.invoice.updated_at };
    next.buyer = event.data.customer;
  } else if (event.type === 'InvoiceFinalized') {
    next.finalization = null;
    next.buyer = event.data.customer;
  }
  return next;
}

/** True while a finalize is between its lock and its number: recovery must complete it. */
export function isFinalizationPending(state: InvoiceState): boolean {
  return state.finalization !== null;
}

/** The numbering stream's year: the calendar year of the issue date (docs/api-decisions.md "Official numbers"). */
export function numberingYear(invoice: Pick<Invoice, 'issue_date'>): number {
  return Number(invoice.issue_date.slice(0, 4));
}

const INVOICE_NUMBER = /^INV-(\d{4})-\d{6,}$/;

function decideInvoice(command: InvoiceCommand, state: InvoiceState): InvoiceEvent[] {
  const { now } = command.metadata;
  const version = state.revision + 1;
  const stamp = (invoice: Invoice, changes: Partial<Invoice>): Invoice => ({ ...invoice, ...changes, updated_at: now, version });

  if (command.type === 'CreateInvoice') {
    // Same id twice (retry, or a scheduler tick run twice): nothing new happens.
    if (state.invoice) return [];
    const { header, lines } = readNewInvoice(command.data);
    const invoice: Invoice = {
      id: command.data.invoice_id,
      invoice_number: null,
      status: 'draft',
      customer_id: header.customer_id,
      customer_name: header.customer_name,
      currency: header.currency,
      issue_date: header.issue_date,
      due_date: header.due_date,
      payment_terms: header.payment_terms,
      notes: header.notes,
      internal_notes: header.internal_notes,
      ...priceLines(lines, header.currency, false),
      finalized_at: null,
      sent_at: null,
      paid_at: null,
      payment_method: null,
      payment_reference: null,
      voided_at: null,
      void_reason: null,
      created_at: now,
      updated_at: now,
      version,
    };
    return [{ type: 'InvoiceCreated', data: { invoice } }];
  }

  const current = state.invoice;
  if (!current) throw notFound('Invoice');
  const lockedDraft = current.status === 'draft' && state.finalization !== null;

  switch (command.type) {
    case 'UpdateInvoice': {
      const { lines, ...header } = readInvoicePatch(command.data.patch, command.data.customer);
      if (current.status !== 'draft' || lockedDraft) {
        throw new DomainError('INVOICE_NOT_EDITABLE', `The invoice is ${lockedDraft ? 'being finalized' : current.status} and can no longer be edited.`);
      }
      const currency = header.currency ?? current.currency;
      const next: Invoice = { ...current, ...header, ...priceLines(lines ?? current.items, currency, false) };
      const changed_fields = (Object.keys(next) as (keyof Invoice)[])
        .filter((key) => !sameJson(next[key], current[key]));
      if (changed_fields.length === 0) return []; // a PATCH that changes nothing appends nothing
      return [{ type: 'InvoiceUpdated', data: { invoice: stamp(next, {}), changed_fields } }];
    }

    case 'StartFinalization': {
      if (current.status !== 'draft' || lockedDraft) {
        throw new DomainError('INVOICE_NOT_DRAFT', `The invoice is ${lockedDraft ? 'already being finalized' : current.status}, not a draft.`);
      }
      const { customer, organization } = command.data;
      checkIssuable(current, customer, organization);
      // The buyer is frozen as validated: its current name goes on the legal document.
      const invoice = stamp(current, { customer_name: (customer as InvoiceCustomer).name });
      return [{ type: 'InvoiceFinalizationStarted', data: { invoice, customer: customer as InvoiceCustomer } }];
    }

    case 'CompleteFinalization': {
      const number = command.data.invoice_number;
      if (current.invoice_number !== null) {
        // Recovery and the request may both complete: the same number twice is a no-op.
        if (current.invoice_number === number) return [];
        throw new DomainError('INVOICE_NOT_DRAFT', `The invoice is already numbered ${current.invoice_number}.`);
      }
      if (!state.finalization || !state.buyer) {
        throw new DomainError('INVALID_STATUS_TRANSITION', 'The finalization of this invoice has not been started.');
      }
      const match = INVOICE_NUMBER.exec(number);
      if (!match || Number(match[1]) !== numberingYear(current)) {
        // A bug in the caller, never a client error: refuse rather than print a wrong number.
        throw new Error(`invoice number ${number} does not fit invoice ${current.id} issued ${current.issue_date}`);
      }
      const invoice = stamp(current, { invoice_number: number, status: 'finalized', finalized_at: state.finalization.started_at });
      return [{ type: 'InvoiceFinalized', data: { invoice, customer: state.buyer } }];
    }

    case 'SendInvoice':
      if (current.status !== 'finalized') throw transitionRefused('sent', current, lockedDraft);
      return [{ type: 'InvoiceSent', data: { invoice: stamp(current, { status: 'sent', sent_at: now }) } }];

    case 'PayInvoice': {
      const payment = readPayment(command.data, now);
      if (current.status !== 'finalized' && current.status !== 'sent') throw transitionRefused('paid', current, lockedDraft);
      const invoice = stamp(current, { status: 'paid', ...payment, amount_due: zeroAmount(current.currency) });
      return [{ type: 'InvoicePaid', data: { invoice } }];
    }

    case 'VoidInvoice': {
      const reason = readVoidReason(command.data.reason);
      if (current.status === 'paid') throw new DomainError('CANNOT_VOID_PAID', 'A paid invoice cannot be voided.');
      if (current.status === 'void') throw new DomainError('ALREADY_VOIDED', 'The invoice is already void.');
      if (current.status === 'draft') throw transitionRefused('void', current, lockedDraft);
      const invoice = stamp(current, { status: 'void', voided_at: now, void_reason: reason });
      return [{ type: 'InvoiceVoided', data: { invoice, reason } }];
    }
  }
}

function transitionRefused(target: string, invoice: Invoice, lockedDraft: boolean): DomainError {
  const from = lockedDraft ? 'a draft being finalized' : invoice.status;
  return new DomainError('INVALID_STATUS_TRANSITION', `An invoice cannot become ${target} from ${from}.`, {
    from: invoice.status,
    to: target,
  });
}

export const invoiceDecider: Decider<InvoiceCommand, InvoiceEvent, InvoiceState> = {
  initialState: initialInvoiceState,
  evolve: evolveInvoice,
  decide: decideInvoice,
};
