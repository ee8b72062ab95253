/**
 * An invoice's event history as GET /invoices/{id}/events and the dashboard's
 * invoice page show it: public event names (docs/events.md), revision, time,
 * actor and data. The finalization lock has no public name; it is shown as
 * `invoice.finalization_started`.
 */
import { publicEventName } from '../commands/public-event-names.ts';
import type { RecordedEvent } from '../eventstore/types.ts';

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
