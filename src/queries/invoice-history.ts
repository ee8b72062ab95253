/**
 * The history an API client sees: GET /invoices/{id}/events (and the
 * dashboard's invoice page), read from the invoice's own stream.
 */
import { publicEventName } from '../commands/public-event-names.ts';
import type { RecordedEvent } from '../eventstore/types.ts';

/**
 * GET /invoices/{id}/events. Every event of the stream is shown, the
 * internal finalization lock included: versions are stream revisions, so a
 * hidden event would leave a hole a client would take for lost history.
 * Types use the webhook names; the lock is `invoice.finalization_started`
 * (never sent as a webhook). `data` is the event's data as stored.
 */
export function invoiceHistory(recorded: RecordedEvent[]) {
  return recorded.map((r) => ({
    id: r.id,
    type: publicEventName(r.type) ?? (r.type === 'InvoiceFinalizationStarted' ? 'invoice.finalization_started' : r.type),
    revision: r.revision,
    occurred_at: r.metadata.occurred_at,
    actor: r.metadata.actor,
    data: r.data,
  }));
}
