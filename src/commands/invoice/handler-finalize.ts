/**
 * Finalize: the gapless-number protocol of docs/architecture.md "Invariants across streams", built from
 * single-stream appends so it runs unchanged on PostgreSQL and EventStoreDB.
 *
 *  (1) StartFinalization on `invoice-<id>` at its expected revision: the
 *      draft is validated for issue and locked. Of two concurrent finalizes
 *      exactly one appends; the other reloads and gets INVOICE_NOT_DRAFT.
 *  (2) AssignNumber on `invoicenumbers-<org>-<year>` at its expected revision
 *      (src/commands/invoicenumber/handler.ts). The stream remembers which
 *      invoice got which number, so a repeat returns the same number.
 *  (3) CompleteFinalization on `invoice-<id>`: the number lands on the
 *      invoice. Repeating it with the same number decides nothing.
 *
 * A process that dies after (1) leaves a locked draft; after (2) a number
 * that is not yet on its invoice. completePendingFinalization() (the
 * recovery worker, src/workers/finalization-recovery.ts) redoes (2) and (3)
 * for such an invoice: (2) returns the number already given, if any, so
 * numbers are never skipped nor given twice, whoever finishes the job.
 *
 * On PostgreSQL (a store with appendToStreams) the three steps are decided
 * in the same order but appended together: the lock and the completion on
 * the invoice stream, the number on the numbering stream, in one
 * transaction (shared with the other finalizes waiting on that numbering
 * stream). Nothing is left for recovery, and a finalize costs one commit
 * instead of three. The checks are the same: step (1) at the invoice's
 * expected revision (If-Match, Idempotency-Key, concurrent finalizes), step
 * (2) at the numbering stream's.
 */
import { v7 as uuidv7 } from 'uuid';
import type { AppendResult, EventMetadata, EventStore, ExpectedRevision, NewEvent } from '../../eventstore/types.ts';
import { validationError } from '../../shared/errors.ts';
import { commandMetadataOf, systemMetadata } from '../command.ts';
import { notBefore } from '../shared/handler.ts';
import type { InvoiceCustomer } from './commands.ts';
import { invoiceNumbering } from '../invoicenumber/handler.ts';
import { invoiceDecider, isFinalizationPending, numberingYear, type InvoiceState } from './decider.ts';
import { invoiceStream, type InvoiceEvent } from './events.ts';
import { loadInvoice, runOnInvoice, type InvoiceResult, type InvoiceWrite } from './handlers.ts';

/** POST /invoices/{id}/finalize. If-Match applies to step (1), the only step the client asked for. */
export async function finalizeInvoice(w: InvoiceWrite, invoiceId: string): Promise<InvoiceResult> {
  // Read once, beside the first load: no attempt of this request changes it.
  const organizationRead = w.facts.organization(w.organizationId);
  organizationRead.catch(() => {}); // awaited below; a failure surfaces there, not as an unhandled rejection
  const customers = new Map<string, Promise<InvoiceCustomer | null>>();
  const started = await runOnInvoice(w, invoiceId, async (state, metadata) => {
    // Refuse before the lock what the numbering stream would refuse after it.
    const year = state.invoice ? numberingYear(state.invoice) : 0;
    if (state.invoice && (year < 1000 || year > 9999)) throw validationError([{ field: 'issue_date', message: 'must be in the years 1000 to 9999' }]);
    // The customer is the one the invoice names in this state: a concurrent PATCH may change it
    // between attempts, so it is read here (once per customer id), not before the runner.
    const customerId = state.invoice?.customer_id ?? '';
    if (!customers.has(customerId)) customers.set(customerId, w.facts.customer(w.organizationId, state.invoice?.customer_id));
    const [customer, organization] = await Promise.all([customers.get(customerId)!, organizationRead]);
    return { type: 'StartFinalization', data: { invoice_id: invoiceId, customer, organization }, metadata };
  }, { ifMatch: w.ifMatch, append: w.store.appendToStreams ? (events, expected, decided, state) => appendWithNumber(w, invoiceId, events, expected, decided, state) : undefined });
  // Done in one transaction, or by an earlier attempt of this request (Idempotency-Key): answer the invoice as it is.
  // Still locked: the lock went alone (EventStoreDB), or a process died after it; steps (2) and (3) follow.
  if (!isFinalizationPending(started.state)) return started;
  return completeFinalization(w, invoiceId, started);
}

/** Steps (1) to (3) in one transaction: the lock's events, then the number's and the completion's, decided once the number is known. */
async function appendWithNumber(
  w: InvoiceWrite,
  invoiceId: string,
  lock: NewEvent[],
  expected: ExpectedRevision,
  decided: InvoiceEvent[],
  state: InvoiceState,
): Promise<{ result: AppendResult; appended: InvoiceEvent[] }> {
  const locked = decided.reduce(invoiceDecider.evolve, state);
  const metadata = lock[0].metadata;
  let completion: InvoiceEvent[] = [];
  const { result } = await invoiceNumbering(w.store).assignWithin(w.organizationId, numberingYear(locked.invoice!), invoiceId, metadata, {
    stream: invoiceStream(invoiceId),
    expected,
    events(number) {
      // The completion of the append that commits is the one decided last.
      completion = invoiceDecider.decide({ type: 'CompleteFinalization', data: { invoice_id: invoiceId, invoice_number: number }, metadata: commandMetadataOf(metadata) }, locked);
      return [...lock, ...completion.map((e) => ({ id: uuidv7(), type: e.type, data: e.data, metadata }))];
    },
  });
  return { result, appended: [...decided, ...completion] };
}

/** Steps (2) and (3) for an invoice whose finalization was started (`started`: its state after step 1). */
async function completeFinalization(w: InvoiceWrite, invoiceId: string, started: InvoiceResult): Promise<InvoiceResult> {
  // Stamped no earlier than the lock (the runner's rule; the state passed to it below comes without its events).
  const request: EventMetadata = { ...w.metadata, occurred_at: notBefore(w.metadata.occurred_at, started.invoice.updated_at) };
  const metadata: EventMetadata = { ...request, organization_id: w.organizationId };
  const year = numberingYear(started.invoice);
  const number = await invoiceNumbering(w.store).assign(w.organizationId, year, invoiceId, metadata);
  return runOnInvoice(
    { ...w, metadata: request, commandId: undefined }, // the request's command id is on the lock (step 1), not on this step
    invoiceId,
    (_state, command) => ({ type: 'CompleteFinalization', data: { invoice_id: invoiceId, invoice_number: number }, metadata: command }),
    // No If-Match: the lock is ours, and a concurrent append can only be recovery's same completion.
    { ifMatch: undefined, known: { recorded: [], state: started.state, revision: started.revision, position: started.position } },
  );
}

/**
 * Recovery of one invoice: completes a finalization left between (1) and
 * (3). Returns the number, or null when there was nothing to complete.
 * Safe to run concurrently with the request that started it and with other
 * recovering processes: every step is idempotent.
 */
export async function completePendingFinalization(
  store: EventStore,
  facts: InvoiceWrite['facts'],
  organizationId: string,
  invoiceId: string,
): Promise<string | null> {
  const { recorded, state, revision } = await loadInvoice(store, organizationId, invoiceId);
  if (!isFinalizationPending(state)) return null;
  const lock = recorded[recorded.length - 1];
  const metadata = systemMetadata({
    organization_id: organizationId,
    correlation_id: lock.metadata.correlation_id ?? null,
    causation_id: lock.id, // the InvoiceFinalizationStarted this completes
  });
  const started: InvoiceResult = { invoice: state.invoice!, state, revision, position: lock.position, appended: false };
  const done = await completeFinalization({ store, organizationId, metadata, facts }, invoiceId, started);
  return done.invoice.invoice_number;
}
