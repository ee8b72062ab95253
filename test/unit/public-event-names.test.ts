import { expect } from 'chai';
import { CUSTOMER_EVENT_TYPES } from '../../src/commands/customer/events.ts';
import { INVOICE_EVENT_TYPES } from '../../src/commands/invoice/events.ts';
import { PUBLIC_EVENT_NAME_LIST, publicEventName, toPublicEvent } from '../../src/commands/public-event-names.ts';

describe('public event names', () => {
  it('publishes exactly the nine events of the reference', () => {
    expect(PUBLIC_EVENT_NAME_LIST).to.have.members([
      'invoice.created', 'invoice.updated', 'invoice.finalized', 'invoice.sent', 'invoice.paid', 'invoice.voided',
      'customer.created', 'customer.updated', 'customer.deleted',
    ]);
  });

  it('maps every domain event, keeping the two internal ones private', () => {
    const names = [...INVOICE_EVENT_TYPES, ...CUSTOMER_EVENT_TYPES, 'InvoiceNumberAssigned'].map((t) => [t, publicEventName(t)]);
    expect(Object.fromEntries(names)).to.deep.equal({
      InvoiceCreated: 'invoice.created', InvoiceUpdated: 'invoice.updated', InvoiceFinalizationStarted: null,
      InvoiceFinalized: 'invoice.finalized', InvoiceSent: 'invoice.sent', InvoicePaid: 'invoice.paid', InvoiceVoided: 'invoice.voided',
      CustomerCreated: 'customer.created', CustomerUpdated: 'customer.updated', CustomerArchived: 'customer.deleted',
      InvoiceNumberAssigned: null,
    });
    expect(publicEventName('toString')).to.equal(null);
  });

  it('publishes the snapshot the event carries', () => {
    expect(toPublicEvent('InvoiceFinalized', { invoice: { id: 'i' }, customer: { id: 'c' } })).to.deep.equal({ name: 'invoice.finalized', data: { id: 'i' } });
    expect(toPublicEvent('CustomerArchived', { customer: { id: 'c' } })).to.deep.equal({ name: 'customer.deleted', data: { id: 'c' } });
    expect(toPublicEvent('InvoiceFinalizationStarted', { invoice: { id: 'i' } })).to.equal(null);
  });
});
