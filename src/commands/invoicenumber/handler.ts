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
 *    against each other (racing only turns into conflict retries);
 *  - the queue is drained in batches: the numbers of every waiting
 *    finalize go out in ONE append of consecutive events.
 * A number is never skipped: a sequence exists only once its event is in
 * the stream, and the step after it (InvoiceFinalized) is completed by the
 * recovery worker if this process dies.
 */
import { v7 as uuidv7 } from 'uuid';
import type { EventMetadata, EventStore, NewEvent } from '../../eventstore/types.ts';
import { WrongExpectedVersionError } from '../../eventstore/types.ts';
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
  resolve(number: string): void;
  reject(err: unknown): void;
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

const MAX_BATCH = 500;
const MAX_ATTEMPTS = 200; // conflicts only come from other processes, each of which makes progress

export class InvoiceNumbering {
  private readonly streams = new Map<string, CachedStream>();

  constructor(private readonly store: EventStore) {}

  /** The official number of this invoice: a new one, or the one it already has. */
  assign(organizationId: string, year: number, invoiceId: string, metadata: EventMetadata): Promise<string> {
    const stream = invoiceNumberStream(organizationId, year);
    let cached = this.streams.get(stream);
    if (!cached) {
      cached = { state: emptyNumberingState(), revision: -1, loaded: false, queue: [], draining: false };
      this.streams.set(stream, cached);
    }
    const entry = cached;
    // Refuse a malformed request here, alone, rather than fail the batch it would join.
    invoiceNumberDecider.decide({ type: 'AssignNumber', data: { invoice_id: invoiceId, year }, metadata: commandMetadataOf(metadata) }, emptyNumberingState());
    // A number the cache already knows is final: it is in the stream.
    const known = numberFor(entry.state, invoiceId);
    if (known) return Promise.resolve(known);
    return new Promise((resolve, reject) => {
      entry.queue.push({ invoiceId, year, metadata, resolve, reject });
      if (!entry.draining) void this.drain(stream, entry);
    });
  }

  private async drain(stream: string, entry: CachedStream): Promise<void> {
    entry.draining = true;
    try {
      while (entry.queue.length > 0) {
        const batch = entry.queue.splice(0, MAX_BATCH);
        try {
          const numbers = await this.assignBatch(stream, entry, batch);
          batch.forEach((p, i) => p.resolve(numbers[i]));
        } catch (err) {
          // On any doubt, forget the cache: the next call refolds from the stream.
          entry.state = emptyNumberingState();
          entry.revision = -1;
          entry.loaded = false;
          batch.forEach((p) => p.reject(err));
        }
      }
    } finally {
      entry.draining = false;
    }
  }

  private async catchUp(stream: string, entry: CachedStream): Promise<void> {
    const recorded = await this.store.readStream(stream, { fromRevision: entry.revision + 1 });
    entry.loaded = true;
    if (recorded.length === 0) return;
    foldNumbering(recorded.map((r) => ({ type: r.type, data: r.data }) as InvoiceNumberAssigned), entry.state);
    entry.revision = recorded[recorded.length - 1].revision;
  }

  private async assignBatch(stream: string, entry: CachedStream, batch: Pending[]): Promise<string[]> {
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
      if (events.length === 0) return numbers;
      try {
        const result = await this.store.appendToStream(stream, events, entry.revision === -1 ? 'no_stream' : entry.revision);
        entry.revision = result.nextRevision;
        return numbers;
      } catch (err) {
        // Undo the optimistic fold: those numbers were not given.
        for (const id of added) entry.state.byInvoice.delete(id);
        entry.state.next = before;
        if (!(err instanceof WrongExpectedVersionError) || attempt >= MAX_ATTEMPTS) throw err;
        // Another process appended first: catch up (next loop) after a short, jittered pause.
        if (attempt > 3) await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, attempt * 2)));
      }
    }
  }
}

const perStore = new WeakMap<EventStore, InvoiceNumbering>();

/** One numbering cache per event store (a process normally has one). */
export function invoiceNumbering(store: EventStore): InvoiceNumbering {
  let numbering = perStore.get(store);
  if (!numbering) {
    numbering = new InvoiceNumbering(store);
    perStore.set(store, numbering);
  }
  return numbering;
}
