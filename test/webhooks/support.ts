/**
 * Webhook test kit: a real HTTP receiver on loopback that records every
 * request (raw body bytes, headers, arrival time) and answers as told;
 * invoice/customer events shaped like docs/events.md, appended straight to
 * the event store; endpoints and organizations written to their tables.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Kysely } from 'kysely';
import type { EventStore, NewEvent } from '../../src/eventstore/types.ts';
import { addEndpoint } from '../../src/workers/webhooks/endpoints.ts';
import { createAccount, insertOrganizationRow } from '../support/fixtures.ts';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  path: string;
  at: number; // Date.now()
}

/** What the receiver does with a request; default 200 "ok". */
/** `reset`: the connection is destroyed without an answer; `delayMs`: the answer comes that much later. */
export type Behavior = (r: Received, index: number) => { status?: number; body?: string | Buffer; headers?: Record<string, string>; hang?: boolean; reset?: boolean; delayMs?: number } | void;

export class Receiver {
  readonly requests: Received[] = [];
  behavior: Behavior = () => {};
  private server: http.Server | null = null;
  private readonly hanging = new Set<http.ServerResponse>();
  port = 0;

  async start(port = 0): Promise<this> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const r: Received = { headers: req.headers, body: Buffer.concat(chunks), path: req.url ?? '/', at: Date.now() };
        const index = this.requests.push(r) - 1;
        const answer = this.behavior(r, index) ?? {};
        if (answer.hang) return void this.hanging.add(res);
        if (answer.reset) return void req.socket.destroy();
        const reply = () => {
          res.writeHead(answer.status ?? 200, answer.headers ?? { 'content-type': 'text/plain' });
          res.end(answer.body ?? 'ok');
        };
        if (answer.delayMs) setTimeout(reply, answer.delayMs);
        else reply();
      });
    });
    server.keepAliveTimeout = 5000;
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Stops listening and drops every connection (a receiver going down). */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Requests per delivery id (either convention's header). */
  byDelivery(): Map<string, Received[]> {
    const map = new Map<string, Received[]>();
    for (const r of this.requests) {
      const id = String(r.headers['x-webhook-delivery-id'] ?? r.headers['x-service-delivery-id']);
      map.set(id, [...(map.get(id) ?? []), r]);
    }
    return map;
  }
}

const meta = (organizationId: string) => ({
  organization_id: organizationId,
  actor: 'system',
  request_id: null,
  correlation_id: null,
  causation_id: null,
  occurred_at: new Date().toISOString(),
});

export function invoiceSnapshot(id: string, status = 'draft', version = 0): Record<string, unknown> {
  const now = new Date().toISOString();
  return {
    id, invoice_number: status === 'draft' ? null : 'INV-2025-000001', status, customer_id: randomUUID(), customer_name: 'Café Atlas — Fès',
    currency: 'MAD', issue_date: '2025-03-01', due_date: null, payment_terms: null, notes: null, internal_notes: null,
    items: [{ position: 1, description: 'Thé à la menthe', quantity: '3', unit_price: '10.00', tax_rate: '20', total: '30.00' }],
    subtotal: '30.00', total_tax: '6.00', total: '36.00', tax_breakdown: [{ rate: '20', taxable_amount: '30.00', tax_amount: '6.00' }],
    amount_due: status === 'paid' ? '0.00' : '36.00', finalized_at: null, sent_at: null, paid_at: null, payment_method: null,
    payment_reference: null, voided_at: null, void_reason: null, created_at: now, updated_at: now, version,
  };
}

/** InvoiceCreated (+ optionally more lifecycle events) for a new invoice; returns the appended events. */
export async function appendInvoice(store: EventStore, organizationId: string, types: string[] = ['InvoiceCreated']): Promise<NewEvent[]> {
  const id = randomUUID();
  const status: Record<string, string> = { InvoiceCreated: 'draft', InvoiceUpdated: 'draft', InvoiceFinalized: 'finalized', InvoiceSent: 'sent', InvoicePaid: 'paid', InvoiceVoided: 'void' };
  const events = types.map((type, version) => ({ id: randomUUID(), type, data: { invoice: invoiceSnapshot(id, status[type], version) }, metadata: meta(organizationId) }));
  await store.appendToStream(`invoice-${id}`, events, 'no_stream');
  return events;
}

export async function appendCustomer(store: EventStore, organizationId: string, type = 'CustomerCreated'): Promise<NewEvent> {
  const id = randomUUID();
  const now = new Date().toISOString();
  const customer = { id, name: 'Épicerie Rif', type: 'b2c', ice: null, legal_name: null, rc: null, email: null, phone: null, address: { street: null, city: 'Tanger', postal_code: null, country: 'MA' }, notes: null, tags: [], status: type === 'CustomerArchived' ? 'archived' : 'active', archived_at: null, created_at: now, updated_at: now, version: 0 };
  const event = { id: randomUUID(), type, data: { customer }, metadata: meta(organizationId) };
  await store.appendToStream(`customer-${id}`, [event], 'any');
  return event;
}

export async function newOrganization(db: Kysely<any>, archived = false): Promise<string> {
  return insertOrganizationRow(db, await createAccount(db, 'professional'), { archived });
}

export async function newEndpoint(db: Kysely<any>, organizationId: string, url: string, convention: 'A' | 'B' = 'A', events?: string[]): Promise<{ id: string; secret: string }> {
  const { endpoint, secret } = await addEndpoint(db, { organizationId, url, convention, events }, { allowInsecure: true });
  return { id: endpoint.id, secret };
}

export { sleep, until } from '../support/wait.ts';
