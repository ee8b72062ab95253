/** Load for the webhook benchmark: invoice events, the plain-POST baseline, polling. */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { NewEvent } from '../../src/eventstore/types.ts';
import { runConcurrently } from '../support/concurrency.ts';
import { msSince } from '../support/stats.ts';

/** One InvoiceCreated with a full snapshot (~1 KB of JSON), as docs/events.md has it. */
export function invoiceEvents(organizationId: string): NewEvent[] {
  const now = new Date().toISOString();
  const invoice = {
    id: randomUUID(), invoice_number: null, status: 'draft', customer_id: randomUUID(), customer_name: 'Atlas Conseil SARL',
    currency: 'MAD', issue_date: now.slice(0, 10), due_date: null, payment_terms: 'Paiement à 30 jours', notes: null, internal_notes: null,
    items: [
      { position: 1, description: 'Prestation de conseil et accompagnement', quantity: '3', unit_price: '1250.00', tax_rate: '20', total: '3750.00' },
      { position: 2, description: 'Déplacement Casablanca - Rabat', quantity: '1', unit_price: '400.00', tax_rate: '20', total: '400.00' },
    ],
    subtotal: '4150.00', total_tax: '830.00', total: '4980.00', tax_breakdown: [{ rate: '20', taxable_amount: '4150.00', tax_amount: '830.00' }],
    amount_due: '4980.00', finalized_at: null, sent_at: null, paid_at: null, payment_method: null, payment_reference: null,
    voided_at: null, void_reason: null, created_at: now, updated_at: now, version: 0,
  };
  const metadata = { organization_id: organizationId, actor: 'bench', request_id: randomUUID(), correlation_id: null, causation_id: null, occurred_at: now };
  return [{ id: randomUUID(), type: 'InvoiceCreated', data: { invoice }, metadata }];
}

/** The baseline: `total` keep-alive POSTs of these bodies at `concurrency`, no database; returns ms. */
export async function postPlain(port: number, bodies: string[], total: number, concurrency: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const post = (body: string) =>
    new Promise<void>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, path: '/baseline', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        res.resume().on('end', () => resolve());
      });
      req.on('error', reject);
      req.end(body);
    });
  const start = process.hrtime.bigint();
  await runConcurrently(total, concurrency, (i) => post(bodies[i % bodies.length]));
  const ms = msSince(start);
  agent.destroy();
  return ms;
}

export async function waitFor(check: () => Promise<boolean>, timeoutMs: number, everyMs = 50): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`benchmark condition not reached within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
