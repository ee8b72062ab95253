/**
 * The one map from internal event types to public webhook names (reference,
 * Events: nine types). Events absent from it are internal and never published:
 * InvoiceFinalizationStarted (the finalize lock) and InvoiceNumberAssigned
 * (the numbering stream). The published `data` is the resource snapshot the
 * event carries (data.invoice or data.customer), verbatim.
 */
import type { CustomerEvent } from './customer/events.ts';
import type { InvoiceEvent } from './invoice/events.ts';

export const PUBLIC_EVENT_NAMES = {
  InvoiceCreated: 'invoice.created',
  InvoiceUpdated: 'invoice.updated',
  InvoiceFinalized: 'invoice.finalized',
  InvoiceSent: 'invoice.sent',
  InvoicePaid: 'invoice.paid',
  InvoiceVoided: 'invoice.voided',
  CustomerCreated: 'customer.created',
  CustomerUpdated: 'customer.updated',
  CustomerArchived: 'customer.deleted',
} as const satisfies Partial<Record<InvoiceEvent['type'] | CustomerEvent['type'], string>>;

export type PublishedEventType = keyof typeof PUBLIC_EVENT_NAMES;
export type PublicEventName = (typeof PUBLIC_EVENT_NAMES)[PublishedEventType];
export const PUBLIC_EVENT_NAME_LIST = Object.values(PUBLIC_EVENT_NAMES) as PublicEventName[];

/** The webhook name of an event type, or null for internal events. */
export function publicEventName(type: string): PublicEventName | null {
  return Object.prototype.hasOwnProperty.call(PUBLIC_EVENT_NAMES, type)
    ? PUBLIC_EVENT_NAMES[type as PublishedEventType]
    : null;
}

/**
 * What a webhook carries for a recorded event: its public name and the
 * resource snapshot as of that event; null when the event is internal.
 */
export function toPublicEvent(type: string, data: unknown): { name: PublicEventName; data: Record<string, unknown> } | null {
  const name = publicEventName(type);
  if (name === null) return null;
  const payload = data as { invoice?: Record<string, unknown>; customer?: Record<string, unknown> };
  const snapshot = name.startsWith('invoice.') ? payload.invoice : payload.customer;
  return snapshot ? { name, data: snapshot } : null;
}
