/**
 * Invoice command handlers: load the invoice stream, check the tenant, fold,
 * decide, append at the expected revision (DESIGN section 1). A concurrent
 * writer makes the append fail; we load and decide again, unless the client
 * sent If-Match, in which case it asked for that exact version:
 * VERSION_CONFLICT. Finalize, which spans two streams, is handler-finalize.ts.
 *
 * Streams are `invoice-<id>` with global ids: the tenant is the
 * organization_id of the stream's first event, checked before the decider
 * runs, so another organization's invoice is NOT_FOUND.
 */
import { v7 as uuidv7 } from 'uuid';
import type { EventMetadata, EventStore } from '../../eventstore/types.ts';
import { WrongExpectedVersionError } from '../../eventstore/types.ts';
import type { InvoiceFacts } from '../../queries/invoice-facts.ts';
import { envelope, type CommandMetadata } from '../command.ts';
import type { CreateInvoiceInput, InvoiceCommand, InvoicePatch, PayInvoice } from './commands.ts';
import { initialInvoiceState, invoiceDecider, type InvoiceState } from './decider.ts';
import { loadOwnedStream, versionConflict, type LoadedStream } from '../shared/handler.ts';
import { invoiceStream, type Invoice } from './events.ts';

export interface InvoiceWrite {
  store: EventStore;
  organizationId: string;
  /** Metadata of the request (or 'system' for recovery); organization_id is set to organizationId. */
  metadata: EventMetadata;
  /** If-Match: the invoice version the client read. */
  ifMatch?: number;
  facts: InvoiceFacts;
  /**
   * Id of the first event the command appends, the same on every attempt of
   * one request (derived from its Idempotency-Key). An attempt that finds it in
   * the stream knows an earlier attempt (one that died before answering) did
   * the work, and answers the invoice as it is instead of refusing the action.
   */
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
}

export type LoadedInvoice = LoadedStream<InvoiceState> & { position: string };

const MAX_ATTEMPTS = 8;

/** The invoice's events and state, or NOT_FOUND when it is not an invoice of this organization. */
export async function loadInvoice(store: EventStore, organizationId: string, invoiceId: string): Promise<LoadedInvoice> {
  return loadOwnedStream(store, invoiceStream(invoiceId), invoiceDecider, organizationId, 'Invoice');
}

/**
 * Runs one command on an existing invoice. `build` makes the command from the
 * current state (finalize reads the customer the invoice names right now).
 */
export async function runOnInvoice(
  w: InvoiceWrite,
  invoiceId: string,
  build: (state: InvoiceState, command: CommandMetadata) => InvoiceCommand | Promise<InvoiceCommand>,
  options: { ifMatch?: number; known?: Pick<InvoiceResult, 'state' | 'revision' | 'position'> } = { ifMatch: w.ifMatch },
): Promise<InvoiceResult> {
  const { metadata, commandMetadata: commandMeta } = envelope(w.metadata, w.organizationId);
  const stream = invoiceStream(invoiceId);
  for (let attempt = 1; ; attempt++) {
    // `known`: the state this request just wrote (finalize's step 3), so the first try needs no read.
    const loaded = attempt === 1 && options.known ? null : await loadInvoice(w.store, w.organizationId, invoiceId);
    const { state, revision, position } = loaded ?? options.known!;
    if (loaded && w.commandId && loaded.recorded.some((r) => r.id === w.commandId)) {
      return { invoice: state.invoice!, state, revision, position, appended: false };
    }
    if (options.ifMatch !== undefined && options.ifMatch !== revision) throw versionConflict(revision, options.ifMatch, 'invoice');
    const decided = invoiceDecider.decide(await build(state, commandMeta), state);
    if (decided.length === 0) return { invoice: state.invoice!, state, revision, position, appended: false };
    try {
      const events = decided.map((e, i) => ({ id: i === 0 && w.commandId ? w.commandId : uuidv7(), type: e.type, data: e.data, metadata }));
      const result = await w.store.appendToStream(stream, events, revision);
      const next = decided.reduce(invoiceDecider.evolve, state);
      return { invoice: next.invoice!, state: next, revision: result.nextRevision, position: result.position, appended: true };
    } catch (err) {
      if (!(err instanceof WrongExpectedVersionError)) throw err;
      if (options.ifMatch !== undefined) throw versionConflict(typeof err.actual === 'number' ? err.actual : -1, options.ifMatch, 'invoice');
      if (attempt >= MAX_ATTEMPTS) throw err;
    }
  }
}

/** Lower-case ids: the read models and the decider compare them as stored. */
const normalizeId = (id: unknown) => (typeof id === 'string' ? id.toLowerCase() : id) as string;

/** POST /invoices: a new draft. `invoiceId` is a fresh UUID v7 unless the caller derives one (schedules). */
export async function createInvoice(w: InvoiceWrite, input: CreateInvoiceInput, invoiceId: string = uuidv7()): Promise<InvoiceResult> {
  const { metadata, commandMetadata: commandMeta } = envelope(w.metadata, w.organizationId);
  const data = { ...input, customer_id: normalizeId(input.customer_id) };
  const customer = await w.facts.customer(w.organizationId, data.customer_id);
  const command: InvoiceCommand = { type: 'CreateInvoice', data: { ...data, invoice_id: invoiceId, customer }, metadata: commandMeta };
  const decided = invoiceDecider.decide(command, initialInvoiceState);
  const events = decided.map((e) => ({ id: uuidv7(), type: e.type, data: e.data, metadata }));
  try {
    const result = await w.store.appendToStream(invoiceStream(invoiceId), events, 'no_stream');
    const state = decided.reduce(invoiceDecider.evolve, initialInvoiceState);
    return { invoice: state.invoice!, state, revision: result.nextRevision, position: result.position, appended: true };
  } catch (err) {
    if (!(err instanceof WrongExpectedVersionError)) throw err;
    // The id exists already (a derived id created twice): creating it again decides nothing.
    const { state, revision, position } = await loadInvoice(w.store, w.organizationId, invoiceId);
    return { invoice: state.invoice!, state, revision, position, appended: false };
  }
}

/** PATCH /invoices/{id}: `customer` is looked up only when the patch names one. */
export function updateInvoice(w: InvoiceWrite, invoiceId: string, input: InvoicePatch): Promise<InvoiceResult> {
  const patch = input.customer_id === undefined ? input : { ...input, customer_id: normalizeId(input.customer_id) };
  return runOnInvoice(w, invoiceId, async (_state, metadata) => {
    const data: Extract<InvoiceCommand, { type: 'UpdateInvoice' }>['data'] = { invoice_id: invoiceId, patch };
    if (patch.customer_id !== undefined) data.customer = await w.facts.customer(w.organizationId, patch.customer_id);
    return { type: 'UpdateInvoice', data, metadata };
  });
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
