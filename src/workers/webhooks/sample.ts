/**
 * Sample payloads for `webhook test` (the reference's "dashboard function
 * sends sample events for testing"): a plausible invoice or customer
 * snapshot in the state the event implies, with fresh ids so a receiver's
 * de-duplication never swallows a test. Shapes follow docs/events.md.
 */
import { v7 as uuidv7 } from 'uuid';
import { PUBLIC_EVENT_NAME_LIST } from '../../commands/public-event-names.ts';
import { DomainError } from '../../shared/errors.ts';
import type { PublishedEvent } from './signing.ts';

function sampleInvoice(name: string, now: string): Record<string, unknown> {
  const status = ({ 'invoice.finalized': 'finalized', 'invoice.sent': 'sent', 'invoice.paid': 'paid', 'invoice.voided': 'void' } as Record<string, string>)[name] ?? 'draft';
  const issued = status !== 'draft';
  const year = now.slice(0, 4);
  return {
    id: uuidv7(),
    invoice_number: issued ? `INV-${year}-000001` : null,
    status,
    customer_id: uuidv7(),
    customer_name: 'Atlas Conseil SARL',
    currency: 'MAD',
    issue_date: now.slice(0, 10),
    due_date: null,
    payment_terms: 'Paiement à 30 jours',
    notes: 'Exemple envoyé par webhook test',
    internal_notes: null,
    items: [{ position: 1, description: 'Prestation de conseil', quantity: '2', unit_price: '1500.00', tax_rate: '20', total: '3000.00' }],
    subtotal: '3000.00',
    total_tax: '600.00',
    total: '3600.00',
    tax_breakdown: [{ rate: '20', taxable_amount: '3000.00', tax_amount: '600.00' }],
    amount_due: status === 'paid' ? '0.00' : '3600.00',
    finalized_at: issued ? now : null,
    sent_at: status === 'sent' || status === 'paid' ? now : null,
    paid_at: status === 'paid' ? now : null,
    payment_method: status === 'paid' ? 'bank_transfer' : null,
    payment_reference: status === 'paid' ? 'VIR-000123' : null,
    voided_at: status === 'void' ? now : null,
    void_reason: status === 'void' ? 'Exemple d’annulation' : null,
    created_at: now,
    updated_at: now,
    version: { draft: name === 'invoice.updated' ? 1 : 0, finalized: 2, sent: 3, paid: 4, void: 3 }[status],
  };
}

function sampleCustomer(name: string, now: string): Record<string, unknown> {
  const deleted = name === 'customer.deleted';
  return {
    id: uuidv7(),
    name: 'Atlas Conseil SARL',
    type: 'b2b',
    ice: '001234567000089',
    legal_name: 'Atlas Conseil SARL',
    rc: '123456',
    email: 'comptabilite@atlas-conseil.ma',
    phone: '+212522000000',
    address: { street: '12 boulevard Zerktouni', city: 'Casablanca', postal_code: '20000', country: 'MA' },
    notes: null,
    tags: ['exemple'],
    status: deleted ? 'archived' : 'active',
    archived_at: deleted ? now : null,
    created_at: now,
    updated_at: now,
    version: name === 'customer.created' ? 0 : 1,
  };
}

export function sampleEvent(name: string, organizationId: string, now = new Date()): PublishedEvent {
  if (!(PUBLIC_EVENT_NAME_LIST as readonly string[]).includes(name)) {
    throw new DomainError('VALIDATION_ERROR', `unknown event "${name}" (known: ${PUBLIC_EVENT_NAME_LIST.join(', ')})`);
  }
  const at = now.toISOString();
  const data = name.startsWith('invoice.') ? sampleInvoice(name, at) : sampleCustomer(name, at);
  return { id: uuidv7(), name, organizationId, createdAt: at, data };
}
