/**
 * Step (2) of finalize (docs/architecture.md "Invariants across streams"): AssignNumber on the numbering
 * stream `invoicenumbers-<org>-<year>`, appended at its expected revision.
 *
 * Every finalize of an organization and year meets on that one stream, so
 * this is the hot spot of the protocol. Three things keep it fast:
 *  - the stream's state is cached in memory; appends go at the cached
 *    revision without reading first, and only when another process
 *    appended meanwhile (the append fails) do we read the events after the
 *    cached revision, then retry;
 *  - in one process the assignments of a stream are queued, never raced
 *    against each other (racing only turns into conflict retries); one
 *    queue per store object, so the scheduler's (the store without inline
 *    projections) meets the API's as another process's would;
 *  - the queue is drained in batches: the numbers of every waiting
 *    finalize go out in ONE append of consecutive events.
 * A number is never skipped: a sequence exists only once its event is in
 * the stream, and the step after it (InvoiceFinalized) is completed by the
 * recovery worker if this process dies.
 *
 * On a store with appendToStreams (PostgreSQL) finalize hands its invoice's
 * own append to `assignWithin`: the batch's number events and every waiting
 * invoice's lock and completion then commit in ONE transaction (one WAL
 * flush for the batch instead of three per finalize), and there is no step
 * for recovery to finish. Should one invoice's stream have moved (a
 * concurrent PATCH), that invoice is refused (its request reloads) and the
 * others go again together; should one invoice's completion or inline rows
 * fail, the batch goes again one invoice at a time, so only it fails.
 */
import { v7 as uuidv7 } from 'uuid';
import type { AppendResult, EventMetadata, EventStore, ExpectedRevision, NewEvent, StreamAppend } from '../../eventstore/types.ts';
import { InlineProjectionError, WrongExpectedVersionError } from '../../eventstore/types.ts';
import { commandMetadataOf } from '../command.ts';
import {
  applyInPlace,
  emptyNumberingState,
  foldNumbering,
  invoiceNumberDecider,
  invoiceNumberStream,
  numberFor,
  type InvoiceNumberAssigned,
  type NumberingState,
} from './decider.ts';

interface Pending {
  invoiceId: string;
  year: number;
  metadata: EventMetadata;
  /** assignWithin: the invoice's own append, committed with the number's event. */
  invoice?: InvoiceAppend;
  resolve(outcome: Assigned): void;
  reject(err: unknown): void;
}

/** The invoice's own part of assignWithin's transaction: its events once its number is known. */
export interface InvoiceAppend {
  stream: string;
  expected: ExpectedRevision;
  /** Called with the number (again, with another, after a numbering conflict). */
  events(number: string): NewEvent[];
}

/** A number and, for assignWithin, the result of the invoice's own append. */
interface Assigned {
  number: string;
  result: AppendResult | null;
}

interface CachedStream {
  state: NumberingState;
  /** Revision of the last event folded into `state` (-1: none). */
  revision: number;
  /** False until the stream was read once (and after a reset). */
  loaded: boolean;
  queue: Pending[];
  draining: boolean;
}

/** An invoice's own stream moved under a batch (not the numbering stream): its request reloads and decides again. */
class InvoiceStreamMoved extends Error {
  constructor(readonly conflict: WrongExpectedVersionError) {
    super(conflict.message);
  }
}

/**
 * A batch refused for a reason that belongs to one of its invoices and
 * certainly wrote nothing: its completion could not be decided, or an
 * inline projection threw (the transaction was rolled back). The others
 * must not pay for it.
 */
class BatchRefused extends Error {
  constructor(readonly reason: unknown) {
    super((reason as Error)?.message ?? String(reason));
  }
}

const MAX_BATCH = 500;
const MAX_ATTEMPTS = 200; // conflicts only come from other queues (processes, or this one's other store), each of which makes progress

export class InvoiceNumbering {
  private readonly streams = new Map<string, CachedStream>();

  constructor(private readonly store: EventStore) {}

  /** The official number of this invoice: a new one, or the one it already has. */
  async assign(organizationId: string, year: number, invoiceId: string, metadata: EventMetadata): Promise<string> {
    return (await this.enqueue(organizationId, year, invoiceId, metadata)).number;
  }

  /**
   * The invoice's number and its own append in one transaction; only on a
   * store with appendToStreams. Rejects with the invoice stream's
   * WrongExpectedVersionError when that stream moved.
   */
  async assignWithin(organizationId: string, year: number, invoiceId: string, metadata: EventMetadata, invoice: InvoiceAppend): Promise<{ number: string; result: AppendResult }> {
    if (!this.store.appendToStreams) throw new TypeError('assignWithin needs a store with appendToStreams');
    const { number, result } = await this.enqueue(organizationId, year, invoiceId, metadata, invoice);
    return { number, result: result! };
  }

  private enqueue(organizationId: string, year: number, invoiceId: string, metadata: EventMetadata, invoice?: InvoiceAppend): Promise<Assigned> {
    const stream = invoiceNumberStream(organizationId, year);
    let cached = this.streams.get(stream);
    if (!cached) {
      cached = { state: emptyNumberingState(), revision: -1, loaded: false, queue: [], draining: false };
      this.streams.set(stream, cached);
    }
    const entry = cached;
    // Refuse a malformed request here, alone, rather than fail the batch it would join.
    invoiceNumberDecider.decide({ type: 'AssignNumber', data: { invoice_id: invoiceId, year }, metadata: commandMetadataOf(metadata) }, emptyNumberingState());
    // A number the cache already knows is final, it is in the stream, unless a batch is in flight:
    // its numbers are folded in before they commit (and taken out if they do not).
    const known = entry.draining ? null : numberFor(entry.state, invoiceId);
    if (known && !invoice) return Promise.resolve({ number: known, result: null });
    return new Promise((resolve, reject) => {
      entry.queue.push({ invoiceId, year, metadata, invoice, resolve, reject });
      if (!entry.draining) void this.drain(stream, entry);
    });
  }

  private async drain(stream: string, entry: CachedStream): Promise<void> {
    entry.draining = true;
    try {
      while (entry.queue.length > 0) await this.settle(stream, entry, entry.queue.splice(0, MAX_BATCH));
    } finally {
      entry.draining = false;
    }
  }

  /** Assigns a batch and resolves or rejects each of its requests. */
  private async settle(stream: string, entry: CachedStream, batch: Pending[]): Promise<void> {
    // Two finalizes of one invoice (say, a client's double click) cannot share a transaction: the second
    // goes in the next one, where its stale revision fails and its request reloads.
    const seen = new Set<string>();
    const [first, again] = [[] as Pending[], [] as Pending[]];
    for (const p of batch) {
      (seen.has(p.invoiceId) ? again : first).push(p);
      seen.add(p.invoiceId);
    }
    if (again.length > 0) {
      await this.settle(stream, entry, first);
      return this.settle(stream, entry, again);
    }
    try {
      const outcomes = await this.assignBatch(stream, entry, batch);
      batch.forEach((p, i) => p.resolve(outcomes[i]));
    } catch (err) {
      // In these two cases nothing was written, the fold was undone and the cache is still right.
      if (err instanceof InvoiceStreamMoved) {
        // The invoice whose stream moved is refused (its request reloads); the others go again together.
        const named = batch.filter((p) => p.invoice?.stream === err.conflict.stream);
        const moved = named.length > 0 ? named : batch; // (the store names a stream of the call: never empty)
        moved.forEach((p) => p.reject(err.conflict));
        const rest = batch.filter((p) => !moved.includes(p));
        if (rest.length > 0) await this.settle(stream, entry, rest);
        return;
      }
      if (err instanceof BatchRefused) {
        // Which invoice it was is not known: one at a time, so that only its request fails.
        if (batch.length > 1) for (const p of batch) await this.settle(stream, entry, [p]);
        else batch[0].reject(err.reason);
        return;
      }
      // On any doubt, forget the cache: the next call refolds from the stream.
      entry.state = emptyNumberingState();
      entry.revision = -1;
      entry.loaded = false;
      batch.forEach((p) => p.reject(err));
    }
  }

  private async catchUp(stream: string, entry: CachedStream): Promise<void> {
    const recorded = await this.store.readStream(stream, { fromRevision: entry.revision + 1 });
    entry.loaded = true;
    if (recorded.length === 0) return;
    foldNumbering(recorded.map((r) => ({ type: r.type, data: r.data }) as InvoiceNumberAssigned), entry.state);
    entry.revision = recorded[recorded.length - 1].revision;
  }

  private async assignBatch(stream: string, entry: CachedStream, batch: Pending[]): Promise<Assigned[]> {
    for (let attempt = 1; ; attempt++) {
      // Optimistic: a loaded cache is usually current (one process finalizes most of an
      // organization's invoices); if not, the append fails and we read what we missed.
      if (!entry.loaded || attempt > 1) await this.catchUp(stream, entry);
      const before = entry.state.next;
      const added: string[] = [];
      const events: NewEvent[] = [];
      for (const p of batch) {
        const command = { type: 'AssignNumber' as const, data: { invoice_id: p.invoiceId, year: p.year }, metadata: commandMetadataOf(p.metadata) };
        for (const event of invoiceNumberDecider.decide(command, entry.state)) {
          applyInPlace(entry.state, event);
          added.push(p.invoiceId);
          events.push({ id: uuidv7(), type: event.type, data: event.data, metadata: p.metadata });
        }
      }
      const numbers = batch.map((p) => numberFor(entry.state, p.invoiceId) as string);
      const expected: ExpectedRevision = entry.revision === -1 ? 'no_stream' : entry.revision;
      // Undo the optimistic fold when nothing is appended: those numbers were not given.
      const undo = () => {
        for (const id of added) entry.state.byInvoice.delete(id);
        entry.state.next = before;
      };
      let own: (StreamAppend | null)[];
      try {
        own = batch.map((p, i) => (p.invoice ? { stream: p.invoice.stream, expected: p.invoice.expected, events: p.invoice.events(numbers[i]) } : null));
      } catch (err) {
        undo();
        throw new BatchRefused(err);
      }
      const invoiceAppends = own.filter((a): a is StreamAppend => a !== null);
      try {
        if (invoiceAppends.length === 0) {
          if (events.length > 0) entry.revision = (await this.store.appendToStream(stream, events, expected)).nextRevision;
          return numbers.map((number) => ({ number, result: null }));
        }
        const appends = events.length > 0 ? [...invoiceAppends, { stream, events, expected }] : invoiceAppends;
        const results = await this.store.appendToStreams!(appends);
        if (events.length > 0) entry.revision = results[results.length - 1].nextRevision;
        let next = 0;
        return numbers.map((number, i) => ({ number, result: own[i] ? results[next++] : null }));
      } catch (err) {
        undo();
        if (err instanceof InlineProjectionError) throw new BatchRefused(err);
        if (err instanceof WrongExpectedVersionError && err.stream !== stream) throw new InvoiceStreamMoved(err);
        if (!(err instanceof WrongExpectedVersionError) || attempt >= MAX_ATTEMPTS) throw err;
        // Another process appended first: catch up (next loop) after a short, jittered pause.
        if (attempt > 3) await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, attempt * 2)));
      }
    }
  }
}

const perStore = new WeakMap<EventStore, InvoiceNumbering>();

/**
 * One numbering cache per event store object. A process has two: its store,
 * and the same without inline projections for the scheduler
 * (Runtime.backgroundStore), whose batches must not carry the API's
 * finalizes nor the reverse; they meet on the stream as two processes do.
 */
export function invoiceNumbering(view: EventStore): InvoiceNumbering {
  // A request's view of the store (EventStore.origin) shares its store's numbering.
  const store = view.origin ?? view;
  let numbering = perStore.get(store);
  if (!numbering) {
    numbering = new InvoiceNumbering(store);
    perStore.set(store, numbering);
  }
  return numbering;
}
