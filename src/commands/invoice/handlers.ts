/**
 * Invoice command handlers: each reads the facts its decision needs (the
 * customer snapshot, the seller) once, then runs the command through the one
 * runner (src/commands/shared/handler.ts: load, tenant check, decide, append,
 * retry). Finalize, which spans two streams, is handler-finalize.ts.
 *
 * Streams are `invoice-<id>` with global ids: the tenant is the
 * organization_id of the stream's first event, checked before the decider
 * runs, so another organization's invoice is NOT_FOUND.
 */
import { v7 as uuidv7 } from 'uuid';
import type { EventMetadata, EventStore } from '../../eventstore/types.ts';
import { envelope, type CommandMetadata } from '../command.ts';
import { absentStream, loadOwnedStream, ownedBy, runCommand, type LoadedStream, type RunOptions } from '../shared/handler.ts';
import type { CreateInvoiceInput, InvoiceCommand, InvoiceCustomer, InvoicePatch, PayInvoice } from './commands.ts';
import { initialInvoiceState, invoiceDecider, type InvoiceState } from './decider.ts';
import { invoiceStream, type Invoice, type InvoiceEvent } from './events.ts';
import type { InvoiceFacts } from './facts.ts';

export interface InvoiceWrite {
  store: EventStore;
  organizationId: string;
  /** Metadata of the request (or 'system' for recovery); organization_id is set to organizationId. */
  metadata: EventMetadata;
  /** If-Match: the invoice version the client read. */
  ifMatch?: number;
  facts: InvoiceFacts;
  /** The request's command id under an Idempotency-Key (RunOptions.commandId). */
  commandId?: string;
}

export interface InvoiceResult {
  invoice: Invoice;
  state: InvoiceState;
  revision: number;
  /** Position to wait for before answering from the read model (the stream's last event). */
  position: string;
  /** False when the command decided nothing (e.g. a PATCH that changes nothing). */
  appended: boolean;
  /** The customer the command read (a create, an update naming one): the decided answer shows it without reading it again. */
  customer?: InvoiceCustomer | null;
}

export type LoadedInvoice = LoadedStream<InvoiceState> & { position: string };

/** The invoice's events and state, or NOT_FOUND when it is not an invoice of this organization. */
export async function loadInvoice(store: EventStore, organizationId: string, invoiceId: string): Promise<LoadedInvoice> {
  return loadOwnedStream(store, invoiceStream(invoiceId), invoiceDecider, organizationId, 'Invoice');
}

/**
 * Runs one command on an invoice. `build` makes the command; it gets the
 * current state only for facts that depend on it (finalize: the customer the
 * invoice names right now).
 */
export async function runOnInvoice(
  w: InvoiceWrite,
  invoiceId: string,
  build: (state: InvoiceState, command: CommandMetadata) => InvoiceCommand | Promise<InvoiceCommand>,
  options: { ifMatch?: number; known?: LoadedStream<InvoiceState>; mustExist?: boolean; append?: RunOptions<InvoiceState, InvoiceEvent>['append'] } = { ifMatch: w.ifMatch },
): Promise<InvoiceResult> {
  const { metadata, commandMetadata } = envelope(w.metadata, w.organizationId);
  const result = await runCommand(w.store, invoiceStream(invoiceId), invoiceDecider, (state) => build(state, commandMetadata), {
    metadata,
    ifMatch: options.ifMatch,
    commandId: w.commandId,
    known: options.known,
    guard: ownedBy(w.organizationId, 'Invoice', options.mustExist ?? true),
    what: 'invoice',
    append: options.append,
  });
  return { invoice: result.state.invoice!, state: result.state, revision: result.revision, position: result.position!, appended: result.events.length > 0 };
}

/** Lower-case ids: the read models and the decider compare them as stored. */
const normalizeId = (id: unknown) => (typeof id === 'string' ? id.toLowerCase() : id) as string;

/**
 * POST /invoices: a new draft. `invoiceId` is a fresh UUID v7 unless the
 * caller derives one (schedules): creating an id that exists decides nothing
 * and answers the invoice as it is.
 */
export async function createInvoice(w: InvoiceWrite, input: CreateInvoiceInput, invoiceId: string = uuidv7()): Promise<InvoiceResult> {
  const data = { ...input, customer_id: normalizeId(input.customer_id) };
  const customer = await w.facts.customer(w.organizationId, data.customer_id);
  const result = await runOnInvoice(w, invoiceId, (_state, metadata) => ({ type: 'CreateInvoice', data: { ...data, invoice_id: invoiceId, customer }, metadata }), {
    known: absentStream(initialInvoiceState), // a new id: append without reading first
    mustExist: false,
  });
  return { ...result, customer };
}

/** PATCH /invoices/{id}: `customer` is looked up (once) only when the patch names one. */
export async function updateInvoice(w: InvoiceWrite, invoiceId: string, input: InvoicePatch): Promise<InvoiceResult> {
  const patch = input.customer_id === undefined ? input : { ...input, customer_id: normalizeId(input.customer_id) };
  const data: Extract<InvoiceCommand, { type: 'UpdateInvoice' }>['data'] = { invoice_id: invoiceId, patch };
  if (patch.customer_id !== undefined) data.customer = await w.facts.customer(w.organizationId, patch.customer_id);
  const result = await runOnInvoice(w, invoiceId, (_state, metadata) => ({ type: 'UpdateInvoice', data, metadata }));
  return data.customer === undefined ? result : { ...result, customer: data.customer };
}

export function sendInvoice(w: InvoiceWrite, invoiceId: string): Promise<InvoiceResult> {
  return runOnInvoice(w, invoiceId, (_state, metadata) => ({ type: 'SendInvoice', data: { invoice_id: invoiceId }, metadata }));
}

export function payInvoice(w: InvoiceWrite, invoiceId: string, payment: Omit<PayInvoice['data'], 'invoice_id'>): Promise<InvoiceResult> {
  return runOnInvoice(w, invoiceId, (_state, metadata) => ({ type: 'PayInvoice', data: { ...payment, invoice_id: invoiceId }, metadata }));
}

export function voidInvoice(w: InvoiceWrite, invoiceId: string, reason: string): Promise<InvoiceResult> {
  return runOnInvoice(w, invoiceId, (_state, metadata) => ({ type: 'VoidInvoice', data: { invoice_id: invoiceId, reason }, metadata }));
}
