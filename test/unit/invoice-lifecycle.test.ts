import { expect } from 'chai';
import { invoiceDecider, isFinalizationPending } from '../../src/commands/invoice/decider.ts';
import { fold } from '../../src/commands/shared/decider.ts';
import { given, history, messageFor } from './given.ts';
import {
  at, complete, create, customer, NUMBER, organization, pay, send, start, states, voidIt, type StateName,
} from './invoice-fixtures.ts';

describe('invoice decider: finalize, send, pay, void', () => {
  describe('StartFinalization + CompleteFinalization (draft -> finalized, invoice.finalized)', () => {
    it('locks the draft, freezing the buyer as validated', () => {
      const renamed = customer({ name: 'Atlas SARL (renamed)' });
      const [event] = given(invoiceDecider, states.draft()).when(start(renamed)).thenTypes('InvoiceFinalizationStarted');
      expect(event.data.customer).to.deep.equal(renamed);
      expect(event.data.invoice).to.include({ status: 'draft', invoice_number: null, customer_name: 'Atlas SARL (renamed)', version: 1, updated_at: at(2) });
      expect(isFinalizationPending(fold(invoiceDecider, [...states.draft(), event]))).to.equal(true);
    });

    it('puts the number on the invoice; finalized_at is when finalize was asked', () => {
      const [event] = given(invoiceDecider, states.locked()).when(complete(NUMBER, 30)).thenTypes('InvoiceFinalized');
      expect(event.data.invoice).to.include({
        status: 'finalized', invoice_number: NUMBER, finalized_at: at(2), updated_at: at(30), version: 2, amount_due: '1200.00',
      });
      expect(event.data.customer).to.deep.equal(customer());
      expect(isFinalizationPending(fold(invoiceDecider, [...states.locked(), event]))).to.equal(false);
    });

    it('completing twice with the same number decides nothing (recovery races the request)', () => {
      given(invoiceDecider, states.finalized()).when(complete(NUMBER)).then([]);
      given(invoiceDecider, states.paid()).when(complete(NUMBER)).then([]);
    });

    it('completing with another number is INVOICE_NOT_DRAFT', () => {
      given(invoiceDecider, states.finalized()).when(complete('INV-2026-000002')).thenError('INVOICE_NOT_DRAFT');
    });

    it('completing an unlocked draft is refused; a number of another year is a bug', () => {
      given(invoiceDecider, states.draft()).when(complete()).thenError('INVALID_STATUS_TRANSITION');
      expect(() => invoiceDecider.decide(complete('INV-2025-000001'), fold(invoiceDecider, states.locked()))).to.throw(/does not fit/);
    });

    const notDraft: StateName[] = ['locked', 'finalized', 'sent', 'paid', 'void'];
    for (const state of notDraft) {
      it(`finalize of ${state} -> INVOICE_NOT_DRAFT`, () => {
        given(invoiceDecider, states[state]()).when(start()).thenError('INVOICE_NOT_DRAFT');
      });
    }

    const cannotIssue: [string, Parameters<typeof create>, Parameters<typeof start>, string[]][] = [
      ['no line', [{ items: [] }], [], ['items']],
      ['a zero total', [{ items: [{ description: 'Free', quantity: 1, unit_price: 0 }] }], [], ['total']],
      ['due_date before issue_date', [{ due_date: '2026-02-28' }], [], ['due_date']],
      ['an archived customer', [], [customer({ status: 'archived' })], ['customer_id']],
      ['an inactive customer', [], [customer({ status: 'inactive' })], ['customer_id']],
      ['a customer that no longer exists', [], [null], ['customer_id']],
      ['a B2B customer without ICE', [], [customer({ ice: null })], ['customer.ice']],
      ['a seller without legal_name', [], [customer(), { ...organization, legal_name: null }], ['organization.legal_name']],
      ['a seller without ICE', [], [customer(), { ...organization, ice: '' }], ['organization.ice']],
      ['everything at once', [{ items: [], due_date: '2026-01-01' }], [customer({ ice: null, status: 'archived' }), { legal_name: null, ice: null }],
        ['items', 'due_date', 'customer_id', 'customer.ice', 'organization.legal_name', 'organization.ice']],
    ];
    for (const [name, createArgs, startArgs, fields] of cannotIssue) {
      it(`finalize with ${name} -> VALIDATION_ERROR ${fields.join(', ')}`, () => {
        given(invoiceDecider, history(invoiceDecider, create(...createArgs))).when(start(...startArgs)).thenError('VALIDATION_ERROR', fields);
      });
    }

    it('a B2C customer without ICE can be invoiced; the due date may equal the issue date', () => {
      given(invoiceDecider, history(invoiceDecider, create({ due_date: '2026-03-01' }, customer({ type: 'b2c', ice: null }))))
        .when(start(customer({ type: 'b2c', ice: null }))).thenTypes('InvoiceFinalizationStarted');
    });

    it('explains the zero total', () => {
      const error = given(invoiceDecider, history(invoiceDecider, create({ items: [{ description: 'Free', quantity: 1, unit_price: 0 }] })))
        .when(start()).thenError('VALIDATION_ERROR');
      expect(messageFor(error, 'total')).to.equal('must be greater than 0');
    });
  });

  describe('SendInvoice (finalized -> sent, invoice.sent)', () => {
    it('finalized -> sent', () => {
      const [event] = given(invoiceDecider, states.finalized()).when(send(9)).thenTypes('InvoiceSent');
      expect(event.data.invoice).to.include({ status: 'sent', sent_at: at(9), version: 3 });
    });
    for (const state of ['draft', 'locked', 'sent', 'paid', 'void'] as StateName[]) {
      it(`${state} -> INVALID_STATUS_TRANSITION`, () => given(invoiceDecider, states[state]()).when(send()).thenError('INVALID_STATUS_TRANSITION'));
    }
  });

  describe('PayInvoice (finalized | sent -> paid, invoice.paid)', () => {
    it('finalized -> paid: amount_due is zero, paid_at defaults to now', () => {
      const [event] = given(invoiceDecider, states.finalized()).when(pay({}, 8)).thenTypes('InvoicePaid');
      expect(event.data.invoice).to.include({ status: 'paid', paid_at: at(8), amount_due: '0.00', total: '1200.00', payment_method: null });
    });

    it('sent -> paid with the payment details, paid_at normalized to UTC', () => {
      const [event] = given(invoiceDecider, states.sent())
        .when(pay({ paid_at: '2026-03-01T09:30:00+01:00', payment_method: 'virement', payment_reference: 'VIR-778' }))
        .thenTypes('InvoicePaid');
      expect(event.data.invoice).to.include({ paid_at: '2026-03-01T08:30:00.000Z', payment_method: 'virement', payment_reference: 'VIR-778', version: 4 });
    });

    it('paid_at at most 5 minutes after the command (clock skew), never further in the future', () => {
      // The command runs at at(5) = 10:05Z.
      const [event] = given(invoiceDecider, states.sent()).when(pay({ paid_at: '2026-03-01T10:10:00Z' })).thenTypes('InvoicePaid');
      expect(event.data.invoice.paid_at).to.equal('2026-03-01T10:10:00.000Z');
      given(invoiceDecider, states.sent()).when(pay({ paid_at: '2026-03-01T10:10:00.001Z' })).thenError('VALIDATION_ERROR');
      given(invoiceDecider, states.sent()).when(pay({ paid_at: '2026-03-02T09:30:00+01:00' })).thenError('VALIDATION_ERROR');
    });

    it('amount_due is zero in the currency format (JPY "0")', () => {
      const events = history(invoiceDecider, create({ currency: 'JPY' }), start(), complete());
      const [event] = given(invoiceDecider, events).when(pay()).thenTypes('InvoicePaid');
      expect(event.data.invoice.amount_due).to.equal('0');
    });

    it('refuses a paid_at that is not an ISO datetime', () => {
      for (const paid_at of ['2026-03-02', '2026-02-30T10:00:00Z', 'yesterday']) {
        given(invoiceDecider, states.finalized()).when(pay({ paid_at })).thenError('VALIDATION_ERROR', ['paid_at']);
      }
    });

    for (const state of ['draft', 'locked', 'paid', 'void'] as StateName[]) {
      it(`${state} -> INVALID_STATUS_TRANSITION`, () => given(invoiceDecider, states[state]()).when(pay()).thenError('INVALID_STATUS_TRANSITION'));
    }
  });

  describe('VoidInvoice (finalized | sent -> void, invoice.voided)', () => {
    for (const state of ['finalized', 'sent'] as StateName[]) {
      it(`${state} -> void, with the reason`, () => {
        const [event] = given(invoiceDecider, states[state]()).when(voidIt('  Duplicate  ', 20)).thenTypes('InvoiceVoided');
        expect(event.data.reason).to.equal('Duplicate');
        expect(event.data.invoice).to.include({ status: 'void', voided_at: at(20), void_reason: 'Duplicate', invoice_number: NUMBER, amount_due: '1200.00' });
      });
    }

    it('paid -> CANNOT_VOID_PAID', () => given(invoiceDecider, states.paid()).when(voidIt()).thenError('CANNOT_VOID_PAID'));
    it('void -> ALREADY_VOIDED', () => given(invoiceDecider, states.void()).when(voidIt()).thenError('ALREADY_VOIDED'));
    it('draft -> INVALID_STATUS_TRANSITION', () => given(invoiceDecider, states.draft()).when(voidIt()).thenError('INVALID_STATUS_TRANSITION'));
    it('locked draft -> INVALID_STATUS_TRANSITION', () => given(invoiceDecider, states.locked()).when(voidIt()).thenError('INVALID_STATUS_TRANSITION'));

    for (const reason of [undefined, null, '', '   ', 'x'.repeat(501), 42]) {
      it(`reason ${JSON.stringify(reason)?.slice(0, 12)} -> VALIDATION_ERROR reason`, () => {
        const command = voidIt();
        (command.data as { reason: unknown }).reason = reason; // voidIt(undefined) would take the default
        given(invoiceDecider, states.finalized()).when(command).thenError('VALIDATION_ERROR', ['reason']);
      });
    }

    it('a reason of 500 characters is fine', () => {
      given(invoiceDecider, states.finalized()).when(voidIt('x'.repeat(500))).thenTypes('InvoiceVoided');
    });
  });

  it('version is the stream revision of each event', () => {
    const events = history(invoiceDecider, create(), start(), complete(), send(), pay());
    expect(events.map((e) => e.data.invoice.version)).to.deep.equal([0, 1, 2, 3, 4]);
    expect(events.map((e) => e.type)).to.deep.equal(['InvoiceCreated', 'InvoiceFinalizationStarted', 'InvoiceFinalized', 'InvoiceSent', 'InvoicePaid']);
  });

  it('an unknown invoice is NOT_FOUND for every action', () => {
    for (const command of [start(), complete(), send(), pay(), voidIt()]) given(invoiceDecider).when(command).thenError('NOT_FOUND');
  });
});
