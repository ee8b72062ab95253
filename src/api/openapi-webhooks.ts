/**
 * The `webhooks` section of the OpenAPI document: the nine events of
 * src/commands/public-event-names.ts, each a POST the service sends to the
 * organization's endpoint, in either convention (docs/webhooks.md): A
 * (`event`, `data`, `organization_id`, `created_at`; X-Webhook-* headers,
 * timestamp in seconds) or B (`id`, `type`, `created`, `data`,
 * `organization_id`; X-Service-* headers, timestamp in milliseconds). `data`
 * is the resource as of the event: the invoice (without its embedded
 * customer) or the customer.
 */
import { PUBLIC_EVENT_NAME_LIST } from '../commands/public-event-names.ts';
import { named, representation } from './openapi-named.ts';
import { customerSchema } from './schemas/customers.ts';
import { invoiceSchema } from './schemas/invoices.ts';
import type { JsonSchema } from './route.ts';

const INVOICE_EVENTS = PUBLIC_EVENT_NAME_LIST.filter((n) => n.startsWith('invoice.'));
const CUSTOMER_EVENTS = PUBLIC_EVENT_NAME_LIST.filter((n) => n.startsWith('customer.'));

const conventionA = (name: string, events: readonly string[], data: JsonSchema) =>
  named(name, representation({
    event: { type: 'string', enum: [...events] },
    data,
    organization_id: { type: 'string', format: 'uuid' },
    created_at: { type: 'string', format: 'date-time', description: 'When the event happened.' },
  }, { description: 'Convention A body (the default).' }));

const conventionB = (name: string, events: readonly string[], data: JsonSchema) =>
  named(name, representation({
    id: { type: 'string', format: 'uuid', description: 'The event id: the same on every delivery of this event; store it to skip duplicates.' },
    type: { type: 'string', enum: [...events] },
    created: { type: 'string', format: 'date-time', description: 'When the event happened.' },
    data,
    organization_id: { type: 'string', format: 'uuid' },
  }, { description: 'Convention B body.' }));

const BODIES = {
  invoice: [conventionA('InvoiceWebhookA', INVOICE_EVENTS, invoiceSchema), conventionB('InvoiceWebhookB', INVOICE_EVENTS, invoiceSchema)],
  customer: [conventionA('CustomerWebhookA', CUSTOMER_EVENTS, customerSchema), conventionB('CustomerWebhookB', CUSTOMER_EVENTS, customerSchema)],
};

const headerParam = (name: string, description: string, schema: JsonSchema = { type: 'string' }) => ({ name, in: 'header', required: false, description, schema });

const HEADERS = [
  headerParam('X-Webhook-Signature', 'Convention A: v1= followed by the lowercase hex HMAC-SHA256 of "<X-Webhook-Timestamp>.<raw body>", keyed with the signing secret\'s UTF-8 bytes.'),
  headerParam('X-Webhook-Timestamp', 'Convention A: Unix time in seconds.', { type: 'string', pattern: '^[0-9]+$' }),
  headerParam('X-Webhook-Event', 'Convention A: the event name.'),
  headerParam('X-Webhook-Delivery-Id', 'Convention A: the delivery id, identical across retries and replays.'),
  headerParam('X-Webhook-Test', 'Convention A: "true" on a sample event sent from the dashboard or `webhook test` (absent on real events).', { type: 'string', enum: ['true'] }),
  headerParam('X-Service-Signature', 'Convention B: lowercase hex HMAC-SHA256 (no prefix) of "<X-Service-Timestamp>.<raw body>".'),
  headerParam('X-Service-Timestamp', 'Convention B: Unix time in milliseconds; reject one older than 5 minutes.', { type: 'string', pattern: '^[0-9]+$' }),
  headerParam('X-Service-Event', 'Convention B: the event name.'),
  headerParam('X-Service-Delivery-ID', 'Convention B: the delivery id.'),
  headerParam('X-Service-Test', 'Convention B: "true" on a sample event sent from the dashboard or `webhook test` (absent on real events).', { type: 'string', enum: ['true'] }),
];

const WHEN: Record<string, string> = {
  'invoice.created': 'A draft invoice was created (POST /invoices, or a recurring schedule).',
  'invoice.updated': 'A draft invoice was updated (PATCH /invoices/{id}).',
  'invoice.finalized': 'An invoice received its official number (POST /invoices/{id}/finalize).',
  'invoice.sent': 'An invoice was recorded as sent.',
  'invoice.paid': 'An invoice was recorded as paid.',
  'invoice.voided': 'An invoice was voided.',
  'customer.created': 'A customer was created.',
  'customer.updated': 'A customer was updated.',
  'customer.deleted': 'A customer was archived (DELETE /customers/{id}).',
};

function hook(event: string, write: (schema: JsonSchema) => unknown): Record<string, unknown> {
  const [a, b] = event.startsWith('invoice.') ? BODIES.invoice : BODIES.customer;
  return {
    post: {
      operationId: `${event.replace(/\.(\w)/, (_m, c: string) => c.toUpperCase())}Webhook`,
      summary: event,
      description: `${WHEN[event] ?? event} Sent to every endpoint of the organization subscribed to \`${event}\`, signed in the endpoint's convention (A or B). Answer 2xx within 30 s; anything else is retried after about 1, 5, 15, 60 and 240 minutes.`,
      tags: ['Webhooks'],
      security: [],
      parameters: HEADERS,
      requestBody: {
        required: true,
        content: { 'application/json': { schema: write({ oneOf: [a, b] }) } },
      },
      responses: {
        '200': { description: 'Any 2xx acknowledges the delivery.' },
        default: { description: 'Anything else (or no answer within 30 s) is retried.' },
      },
    },
  };
}

/** The section, with schemas written by the document's writer (named ones become $refs). */
export function webhooks(write: (schema: JsonSchema) => unknown): Record<string, unknown> {
  return Object.fromEntries(PUBLIC_EVENT_NAME_LIST.map((event) => [event, hook(event, write)]));
}
