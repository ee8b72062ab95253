/**
 * Generating one occurrence of a schedule (POST .../generate and every
 * scheduler run) through the ordinary invoice commands, never around them:
 *
 *  1. plan the schedule's next occurrence `seq` (INVALID_STATE unless active,
 *     CUSTOMER_INACTIVE unless its customer is active);
 *  2. dry-run the invoice decider on the invoice to be created (and, with
 *     auto_finalize, on its finalization): a run that would fail fails here,
 *     before anything is written, so it leaves no draft behind;
 *  3. create the invoice with id derived from (schedule id, seq) and
 *     "stream must not exist": a second scheduler, a double tick, a retried
 *     request or a rerun after a crash all land on the same invoice;
 *  4. finalize (the gapless numbering protocol) and send, each skipped when
 *     the invoice is already past it, so a rerun completes what a crash cut;
 *  5. record the occurrence on the schedule (RecordOccurrence at seq: a
 *     second recording decides nothing).
 * So every occurrence has exactly one invoice, whatever dies when.
 */
import type { EventMetadata, EventStore } from '../../eventstore/types.ts';
import type { InvoiceFacts } from '../invoice/facts.ts';
import { DomainError } from '../../shared/errors.ts';
import { envelope } from '../command.ts';
import type { InvoiceCommand } from '../invoice/commands.ts';
import { initialInvoiceState, invoiceDecider, isFinalizationPending } from '../invoice/decider.ts';
import { completePendingFinalization, finalizeInvoice } from '../invoice/handler-finalize.ts';
import { createInvoice, loadInvoice, sendInvoice, type InvoiceResult, type InvoiceWrite } from '../invoice/handlers.ts';
import { fold } from '../shared/decider.ts';
import { checkIfMatch, type LoadedStream } from '../shared/handler.ts';
import { planOccurrence, type PlannedOccurrence, type ScheduleState } from './decider.ts';
import { loadSchedule, runScheduleCommand, type ScheduleResult, type ScheduleWrite } from './handler.ts';

export interface GenerateDeps {
  store: EventStore;
  facts: InvoiceFacts;
  organizationId: string;
  metadata: EventMetadata;
}

export interface GenerateOptions {
  /** The invoice's issue date (generate's body); default: the run date. */
  issueDate?: string;
  /** Only generate when this is still the schedule's next occurrence (the scheduler's). */
  seq?: number;
  /**
   * Id of the RecordOccurrence event under an Idempotency-Key: an attempt that
   * finds it in the stream answers the invoice that attempt generated instead
   * of generating the next occurrence.
   */
  commandId?: string;
  /** The schedule's stream as the caller just loaded it (the scheduler): not read again. */
  loaded?: LoadedStream<ScheduleState>;
  /** If-Match: the schedule version the client read (VERSION_CONFLICT before anything is written when stale). */
  ifMatch?: number;
}

/**
 * The facts memoized for one scheduler run: the customer and the seller are
 * read once, not by each of the run's invoice commands (create, finalize).
 * Read models either way.
 */
export function memoizedFacts(facts: InvoiceFacts): InvoiceFacts {
  const customers = new Map<string, ReturnType<InvoiceFacts['customer']>>();
  const organizations = new Map<string, ReturnType<InvoiceFacts['organization']>>();
  return {
    customer(organizationId, customerId) {
      const key = `${organizationId}/${String(customerId)}`;
      if (!customers.has(key)) customers.set(key, facts.customer(organizationId, customerId));
      return customers.get(key)!;
    },
    organization(organizationId) {
      if (!organizations.has(organizationId)) organizations.set(organizationId, facts.organization(organizationId));
      return organizations.get(organizationId)!;
    },
  };
}

export interface Generated {
  seq: number;
  invoice: InvoiceResult;
  schedule: ScheduleResult;
}

/** Step 2: the invoice decider on the would-be invoice, in memory (pure): throws what the real commands would. */
function dryRun(plan: PlannedOccurrence, command: InvoiceCommand['metadata'], facts: { customer: Awaited<ReturnType<InvoiceFacts['customer']>>; organization?: Awaited<ReturnType<InvoiceFacts['organization']>> }): void {
  const created = invoiceDecider.decide(
    { type: 'CreateInvoice', data: { ...plan.invoice, invoice_id: plan.invoice_id, customer: facts.customer }, metadata: command },
    initialInvoiceState,
  );
  if (!facts.organization) return;
  invoiceDecider.decide(
    { type: 'StartFinalization', data: { invoice_id: plan.invoice_id, customer: facts.customer, organization: facts.organization }, metadata: command },
    fold(invoiceDecider, created),
  );
}

/** Step 4: finalize and send what is not yet; each step tolerates a concurrent run of the same occurrence. */
async function advance(w: InvoiceWrite, invoice: InvoiceResult, autoFinalize: boolean, autoSend: boolean): Promise<InvoiceResult> {
  const id = invoice.invoice.id;
  let current = invoice;
  const reload = async (): Promise<InvoiceResult> => {
    const { state, revision, position } = await loadInvoice(w.store, w.organizationId, id);
    return { invoice: state.invoice!, state, revision, position, appended: false };
  };
  if (autoFinalize && current.invoice.status === 'draft') {
    try {
      if (isFinalizationPending(current.state)) {
        await completePendingFinalization(w.store, w.facts, w.organizationId, id);
        current = await reload();
      } else {
        current = await finalizeInvoice(w, id);
      }
    } catch (err) {
      // Another run of this occurrence is finalizing it: its lock is taken, recovery or that run finishes it.
      if (!(err instanceof DomainError && err.code === 'INVOICE_NOT_DRAFT')) throw err;
      await completePendingFinalization(w.store, w.facts, w.organizationId, id);
      current = await reload();
    }
  }
  if (autoSend && current.invoice.status === 'finalized') {
    try {
      current = await sendInvoice(w, id);
    } catch (err) {
      if (!(err instanceof DomainError && err.code === 'INVALID_STATUS_TRANSITION')) throw err;
      current = await reload();
    }
  }
  return current;
}

/**
 * Generates the schedule's next occurrence. Returns null when `options.seq`
 * is no longer the next one (another run got there first).
 */
export async function generateOccurrence(d: GenerateDeps, scheduleId: string, options: GenerateOptions = {}): Promise<Generated | null> {
  const { metadata, commandMetadata } = envelope(d.metadata, d.organizationId);
  const loaded = options.loaded ?? (await loadSchedule(d.store, d.organizationId, scheduleId));
  const schedule = loaded.state.schedule!;
  const done = options.commandId ? loaded.recorded.find((r) => r.id === options.commandId) : undefined;
  if (done) {
    const run = (done.data as { run: { seq: number; invoice_id: string } }).run;
    const { state, revision, position } = await loadInvoice(d.store, d.organizationId, run.invoice_id);
    const invoice: InvoiceResult = { invoice: state.invoice!, state, revision, position, appended: false };
    return { seq: run.seq, invoice, schedule: { events: [], state: loaded.state, revision: loaded.revision, position: null, earlier: loaded.recorded } };
  }
  if (options.seq !== undefined && schedule.seq !== options.seq) return null;
  checkIfMatch(options.ifMatch, loaded.revision, 'schedule');
  const customer = await d.facts.customer(d.organizationId, schedule.customer_id);
  const plan = planOccurrence(loaded.state, customer, options.issueDate);
  const organization = schedule.auto_finalize ? await d.facts.organization(d.organizationId) : undefined;
  dryRun(plan, commandMetadata, { customer, organization });

  const invoiceWrite: InvoiceWrite = { store: d.store, organizationId: d.organizationId, metadata, facts: d.facts };
  const created = await createInvoice(invoiceWrite, plan.invoice, plan.invoice_id);
  const invoice = await advance(invoiceWrite, created, schedule.auto_finalize, schedule.auto_send);

  const scheduleWrite: ScheduleWrite = { store: d.store, organizationId: d.organizationId, metadata };
  const command = {
    type: 'RecordOccurrence' as const,
    data: { schedule_id: scheduleId, seq: plan.seq, invoice_id: plan.invoice_id, invoice_number: invoice.invoice.invoice_number, run_date: plan.run_date },
    metadata: commandMetadata,
  };
  const recorded = await runScheduleCommand({ ...scheduleWrite, commandId: options.commandId }, command, loaded);
  return { seq: plan.seq, invoice, schedule: recorded };
}
