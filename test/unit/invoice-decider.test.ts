import { expect } from 'chai';
import { invoiceDecider } from '../../src/commands/invoice/decider.ts';
import type { Invoice } from '../../src/commands/invoice/events.ts';
import { given, messageFor } from './given.ts';
import { at, create, CUSTOMER_ID, customer, INVOICE_ID, OTHER_CUSTOMER_ID, states, update, type StateName } from './invoice-fixtures.ts';

const draft: Invoice = {
  id: INVOICE_ID, invoice_number: null, status: 'draft', customer_id: CUSTOMER_ID, customer_name: 'Atlas SARL',
  currency: 'MAD', issue_date: '2026-03-01', due_date: null, payment_terms: null, notes: null, internal_notes: null,
  items: [{ position: 1, description: 'Consulting', quantity: '10', unit_price: '100', tax_rate: '20', total: '1000.00' }],
  subtotal: '1000.00', total_tax: '200.00', total: '1200.00',
  tax_breakdown: [{ rate: '20', taxable_amount: '1000.00', tax_amount: '200.00' }], amount_due: '1200.00',
  finalized_at: null, sent_at: null, paid_at: null, payment_method: null, payment_reference: null,
  voided_at: null, void_reason: null, created_at: at(0), updated_at: at(0), version: 0,
};

describe('invoice decider: create and update', () => {
  describe('CreateInvoice (none -> draft, invoice.created)', () => {
    it('creates a draft with server-computed totals and defaults (MAD, 20%)', () => {
      given(invoiceDecider).when(create()).then([{ type: 'InvoiceCreated', data: { invoice: draft } }]);
    });

    it('keeps the representation field order of CONTRACT section 5', () => {
      const [event] = given(invoiceDecider).when(create()).thenTypes('InvoiceCreated');
      expect(Object.keys(event.data.invoice)).to.deep.equal(Object.keys(draft));
    });

    it('echoes quantity, unit_price and tax_rate as canonical decimal strings', () => {
      const [event] = given(invoiceDecider).when(create({
        items: [{ description: 'Pens', quantity: 3, unit_price: 0.335 }, { description: 'Paper', quantity: '2.50', unit_price: '4.0000', tax_rate: 5.5 }],
        due_date: '2026-03-31', payment_terms: 'Net 30', notes: 'Merci', internal_notes: 'VIP',
      })).thenTypes('InvoiceCreated');
      const { items, subtotal, total_tax, total } = event.data.invoice;
      expect(items.map((l) => [l.position, l.quantity, l.unit_price, l.tax_rate, l.total])).to.deep.equal([
        [1, '3', '0.335', '20', '1.01'],
        [2, '2.5', '4', '5.5', '10.00'],
      ]);
      expect([subtotal, total_tax, total]).to.deep.equal(['11.01', '0.75', '11.76']);
      expect(event.data.invoice).to.include({ due_date: '2026-03-31', payment_terms: 'Net 30', notes: 'Merci', internal_notes: 'VIP' });
    });

    it('formats amounts in the currency minor units (JPY)', () => {
      const [event] = given(invoiceDecider).when(create({ currency: 'JPY', items: [{ description: 'X', quantity: 12, unit_price: 100 }] }))
        .thenTypes('InvoiceCreated');
      expect(event.data.invoice).to.include({ currency: 'JPY', subtotal: '1200', total_tax: '240', total: '1440', amount_due: '1440' });
    });

    it('accepts 500 lines, and a draft without lines or with due_date before issue_date', () => {
      const items = Array.from({ length: 500 }, (_, i) => ({ description: `L${i}`, quantity: 1, unit_price: 1 }));
      given(invoiceDecider).when(create({ items })).thenTypes('InvoiceCreated');
      given(invoiceDecider).when(create({ items: [] })).thenTypes('InvoiceCreated');
      given(invoiceDecider).when(create({ due_date: '2026-02-01' })).thenTypes('InvoiceCreated');
    });

    const badCustomers: [string, ReturnType<typeof customer> | null, string][] = [
      ['unknown', null, 'must name an existing customer'],
      ['of another id', customer({ id: OTHER_CUSTOMER_ID }), 'must name an existing customer'],
      ['archived', customer({ status: 'archived' }), 'customer is archived'],
      ['inactive', customer({ status: 'inactive' }), 'customer is inactive'],
    ];
    for (const [name, facts, message] of badCustomers) {
      it(`refuses a customer that is ${name} (customer_id)`, () => {
        const error = given(invoiceDecider).when(create({}, facts)).thenError('VALIDATION_ERROR', ['customer_id']);
        expect(messageFor(error, 'customer_id')).to.equal(message);
      });
    }

    it('names every invalid field with a clear message', () => {
      const error = given(invoiceDecider).when(create({
        issue_date: '2026-02-30', due_date: 'tomorrow', currency: 'XYZ',
        items: [
          { description: 'ok', quantity: 0, unit_price: 1, tax_rate: 101 },
          { description: '', quantity: 1.23456, unit_price: -1 },
          { description: 'x'.repeat(1001), quantity: 'abc', unit_price: 1, tax_rate: 5.555 },
          'not a line' as never,
        ],
      })).thenError('VALIDATION_ERROR', [
        'issue_date', 'due_date', 'currency',
        'items[0].quantity', 'items[0].tax_rate',
        'items[1].description', 'items[1].quantity', 'items[1].unit_price',
        'items[2].description', 'items[2].quantity', 'items[2].tax_rate', 'items[3]',
      ]);
      expect(messageFor(error, 'items[0].quantity')).to.equal('must be greater than 0');
      expect(messageFor(error, 'items[0].tax_rate')).to.equal('must be at most 100');
      expect(messageFor(error, 'items[1].quantity')).to.equal('must have at most 4 decimal places');
      expect(messageFor(error, 'items[1].unit_price')).to.equal('must be greater than or equal to 0');
      expect(messageFor(error, 'items[2].description')).to.equal('must be at most 1000 characters');
      expect(messageFor(error, 'issue_date')).to.equal('must be a calendar date (YYYY-MM-DD)');
    });

    it('requires issue_date and items, and refuses more than 500 lines', () => {
      given(invoiceDecider).when(create({ issue_date: undefined, items: undefined })).thenError('VALIDATION_ERROR', ['issue_date', 'items']);
      const items = Array.from({ length: 501 }, () => ({ description: 'L', quantity: 1, unit_price: 1 }));
      const error = given(invoiceDecider).when(create({ items })).thenError('VALIDATION_ERROR', ['items']);
      expect(messageFor(error, 'items')).to.equal('must contain at most 500 lines');
    });

    it('a line without quantity or unit_price names each', () => {
      given(invoiceDecider).when(create({ items: [{ description: 'X' } as never] }))
        .thenError('VALIDATION_ERROR', ['items[0].quantity', 'items[0].unit_price']);
    });

    it('a second create of the same id decides nothing (scheduler double tick)', () => {
      given(invoiceDecider, states.draft()).when(create()).then([]);
    });
  });

  describe('UpdateInvoice (draft -> draft, invoice.updated)', () => {
    it('replaces all lines and recomputes totals', () => {
      const [event] = given(invoiceDecider, states.draft())
        .when(update({ items: [{ description: 'A', quantity: 1, unit_price: 50, tax_rate: 10 }, { description: 'B', quantity: 2, unit_price: 25 }] }))
        .thenTypes('InvoiceUpdated');
      const invoice = event.data.invoice;
      expect(invoice.items.map((l) => [l.position, l.description, l.total])).to.deep.equal([[1, 'A', '50.00'], [2, 'B', '50.00']]);
      expect(invoice.tax_breakdown).to.deep.equal([
        { rate: '20', taxable_amount: '50.00', tax_amount: '10.00' },
        { rate: '10', taxable_amount: '50.00', tax_amount: '5.00' },
      ]);
      expect(invoice).to.include({ subtotal: '100.00', total_tax: '15.00', total: '115.00', amount_due: '115.00', version: 1, updated_at: at(1), created_at: at(0) });
      expect(event.data.changed_fields).to.deep.equal(['items', 'subtotal', 'total_tax', 'total', 'tax_breakdown', 'amount_due']);
    });

    it('a currency change reformats every amount', () => {
      const [event] = given(invoiceDecider, states.draft()).when(update({ currency: 'KWD' })).thenTypes('InvoiceUpdated');
      expect(event.data.invoice).to.include({ currency: 'KWD', subtotal: '1000.000', total: '1200.000' });
    });

    it('changes the customer when the new one is active, and takes its name', () => {
      const other = customer({ id: OTHER_CUSTOMER_ID, name: 'Sahara SA' });
      const [event] = given(invoiceDecider, states.draft()).when(update({ customer_id: OTHER_CUSTOMER_ID }, other)).thenTypes('InvoiceUpdated');
      expect(event.data.invoice).to.include({ customer_id: OTHER_CUSTOMER_ID, customer_name: 'Sahara SA' });
    });

    it('refuses a new customer that is unknown, archived or inactive', () => {
      const draftEvents = states.draft();
      given(invoiceDecider, draftEvents).when(update({ customer_id: OTHER_CUSTOMER_ID }, null)).thenError('VALIDATION_ERROR', ['customer_id']);
      given(invoiceDecider, draftEvents).when(update({ customer_id: OTHER_CUSTOMER_ID })).thenError('VALIDATION_ERROR', ['customer_id']);
      given(invoiceDecider, draftEvents).when(update({ customer_id: CUSTOMER_ID }, customer({ status: 'archived' })))
        .thenError('VALIDATION_ERROR', ['customer_id']);
      given(invoiceDecider, draftEvents).when(update({ customer_id: CUSTOMER_ID }, customer({ status: 'inactive' })))
        .thenError('VALIDATION_ERROR', ['customer_id']);
    });

    it('clears optional fields with null; a PATCH changing nothing decides nothing', () => {
      const before = [...states.draft(), ...given(invoiceDecider, states.draft()).when(update({ notes: 'x', due_date: '2026-04-01' })).thenTypes('InvoiceUpdated')];
      const [event] = given(invoiceDecider, before).when(update({ notes: null, due_date: null }, undefined, 2)).thenTypes('InvoiceUpdated');
      expect(event.data.invoice).to.include({ notes: null, due_date: null, version: 2 });
      given(invoiceDecider, states.draft()).when(update({ currency: 'MAD', items: [{ description: 'Consulting', quantity: '10.0', unit_price: 100 }] })).then([]);
    });

    it('validates fields like create', () => {
      given(invoiceDecider, states.draft()).when(update({ issue_date: null as never, items: [{ description: 'X', quantity: -1, unit_price: 1 }] }))
        .thenError('VALIDATION_ERROR', ['issue_date', 'items[0].quantity']);
    });

    const notEditable: StateName[] = ['locked', 'finalized', 'sent', 'paid', 'void'];
    for (const state of notEditable) {
      it(`${state} -> INVOICE_NOT_EDITABLE`, () => {
        given(invoiceDecider, states[state]()).when(update({ notes: 'late edit' })).thenError('INVOICE_NOT_EDITABLE');
      });
    }

    it('an unknown invoice is NOT_FOUND', () => {
      given(invoiceDecider).when(update({ notes: 'x' })).thenError('NOT_FOUND');
    });
  });
});
