import { expect } from 'chai';
import type { AssignNumber, InvoiceNumberAssigned } from '../../src/commands/invoicenumber/decider.ts';
import {
  applyInPlace,
  emptyNumberingState,
  foldNumbering,
  formatInvoiceNumber,
  invoiceNumberDecider,
  invoiceNumberStream,
  numberFor,
} from '../../src/commands/invoicenumber/decider.ts';
import { fold } from '../../src/commands/shared/decider.ts';
import { given } from './given.ts';

const assign = (invoice_id: string, year = 2026): AssignNumber => ({
  type: 'AssignNumber',
  data: { invoice_id, year },
  metadata: { now: '2026-03-01T10:00:00.000Z', actor: 'system', organization_id: 'org_1' },
});
const assigned = (invoice_id: string, sequence: number, year = 2026): InvoiceNumberAssigned => ({
  type: 'InvoiceNumberAssigned',
  data: { invoice_id, number: formatInvoiceNumber(year, sequence), sequence, year },
});

describe('invoice number decider', () => {
  it('names one stream per organization and year', () => {
    expect(invoiceNumberStream('org_1', 2026)).to.equal('invoicenumbers-org_1-2026');
  });

  it('formats INV-YYYY-NNNNNN', () => {
    expect(formatInvoiceNumber(2026, 1)).to.equal('INV-2026-000001');
    expect(formatInvoiceNumber(2026, 123456)).to.equal('INV-2026-123456');
    expect(formatInvoiceNumber(2026, 1234567)).to.equal('INV-2026-1234567');
  });

  it('the first invoice of a year gets 000001', () => {
    given(invoiceNumberDecider).when(assign('inv-a')).then([
      { type: 'InvoiceNumberAssigned', data: { invoice_id: 'inv-a', number: 'INV-2026-000001', sequence: 1, year: 2026 } },
    ]);
  });

  it('the next invoice gets the next number, with no gap', () => {
    given(invoiceNumberDecider, [assigned('inv-a', 1), assigned('inv-b', 2)]).when(assign('inv-c')).then([assigned('inv-c', 3)]);
  });

  it('a repeated assignment decides nothing; numberFor reads the existing number', () => {
    const events = [assigned('inv-a', 1), assigned('inv-b', 2)];
    given(invoiceNumberDecider, events).when(assign('inv-a')).then([]);
    const state = fold(invoiceNumberDecider, events);
    expect(numberFor(state, 'inv-a')).to.equal('INV-2026-000001');
    expect(numberFor(state, 'inv-b')).to.equal('INV-2026-000002');
    expect(numberFor(state, 'inv-z')).to.equal(null);
  });

  it('1000 invoices (and two retries) through a cached state get exactly 1..1000', () => {
    const ids = Array.from({ length: 1000 }, (_, i) => `inv-${i}`);
    const cache = emptyNumberingState();
    const events: InvoiceNumberAssigned[] = [];
    for (const id of [...ids, 'inv-0', 'inv-999']) {
      for (const event of invoiceNumberDecider.decide(assign(id), cache)) events.push(applyInPlace(cache, event) && event);
    }
    expect(events.map((e) => e.data.sequence)).to.deep.equal(ids.map((_, i) => i + 1));
    expect(new Set(events.map((e) => e.data.number)).size).to.equal(1000);
    expect(fold(invoiceNumberDecider, events)).to.deep.equal(cache); // the pure fold agrees with the cache
    expect(foldNumbering(events)).to.deep.equal(cache);
  });

  it('evolve is pure: folding never changes an earlier state', () => {
    const before = fold(invoiceNumberDecider, [assigned('inv-a', 1)]);
    const after = invoiceNumberDecider.evolve(before, assigned('inv-b', 2));
    expect([before.next, before.byInvoice.size]).to.deep.equal([2, 1]);
    expect([after.next, after.byInvoice.size]).to.deep.equal([3, 2]);
    expect(invoiceNumberDecider.initialState.byInvoice.size).to.equal(0);
  });

  it('applyInPlace updates a cached state without copying', () => {
    const cache = emptyNumberingState();
    const same = applyInPlace(cache, assigned('inv-a', 1));
    expect(same).to.equal(cache);
    expect([cache.next, numberFor(cache, 'inv-a')]).to.deep.equal([2, 'INV-2026-000001']);
    expect(invoiceNumberDecider.initialState.byInvoice.size).to.equal(0);
  });

  it('refuses a command without invoice id or with a bad year', () => {
    given(invoiceNumberDecider).when(assign('')).thenError('VALIDATION_ERROR', ['invoice_id']);
    given(invoiceNumberDecider).when(assign('inv-a', 26)).thenError('VALIDATION_ERROR', ['year']);
  });
});
