import { expect } from 'chai';
import type { CommandMetadata } from '../../src/commands/command.ts';
import type { CreateCustomerInput, CustomerCommand, CustomerPatch } from '../../src/commands/customer/commands.ts';
import { customerDecider, iceChange, initialCustomerState } from '../../src/commands/customer/decider.ts';
import type { Customer } from '../../src/commands/customer/events.ts';
import { fold } from '../../src/commands/shared/decider.ts';
import { given, history, messageFor } from './given.ts';

const ID = '0190a1b2-0000-7000-8000-000000000001';
const ICE = '001234567000089';
const at = (minute: number) => `2026-03-01T10:${String(minute).padStart(2, '0')}:00.000Z`;
const meta = (minute = 0): CommandMetadata => ({ now: at(minute), actor: 'key_1', organization_id: 'org_1' });

const create = (input: Partial<CreateCustomerInput> = {}, minute = 0): CustomerCommand => ({
  type: 'CreateCustomer',
  data: { customer_id: ID, name: 'Atlas SARL', type: 'b2b', ...input },
  metadata: meta(minute),
});
const update = (patch: CustomerPatch, minute = 1): CustomerCommand => ({
  type: 'UpdateCustomer',
  data: { customer_id: ID, patch },
  metadata: meta(minute),
});
const archive = (minute = 2): CustomerCommand => ({ type: 'ArchiveCustomer', data: { customer_id: ID }, metadata: meta(minute) });

const created = (overrides: Partial<Customer> = {}): Customer => ({
  id: ID, name: 'Atlas SARL', type: 'b2b', ice: null, legal_name: null, rc: null, email: null, phone: null,
  address: { street: null, city: null, postal_code: null, country: 'MA' }, notes: null, tags: [],
  status: 'active', archived_at: null, created_at: at(0), updated_at: at(0), version: 0, ...overrides,
});

const existing = (...more: CustomerCommand[]) => history(customerDecider, create({ ice: ICE }), ...more);

describe('customer decider', () => {
  describe('CreateCustomer (none -> active, customer.created)', () => {
    it('creates with defaults: status active, country MA, version 0', () => {
      given(customerDecider).when(create()).then([{ type: 'CustomerCreated', data: { customer: created() } }]);
    });

    it('keeps every field, trimmed, blank optional text as null, tags deduplicated', () => {
      const [event] = given(customerDecider).when(create({
        name: '  Atlas SARL ', type: 'b2c', ice: ICE, legal_name: 'Atlas Société', rc: 'RC 1234', email: 'a@atlas.ma',
        phone: ' ', address: { street: '1 Bd Zerktouni', city: 'Casablanca', postal_code: '20000' },
        notes: 'Line 1\nLine 2\n', tags: ['vip', 'vip', 'north'],
      })).thenTypes('CustomerCreated');
      expect(event.data.customer).to.deep.equal(created({
        type: 'b2c', ice: ICE, legal_name: 'Atlas Société', rc: 'RC 1234', email: 'a@atlas.ma', phone: null,
        address: { street: '1 Bd Zerktouni', city: 'Casablanca', postal_code: '20000', country: 'MA' },
        notes: 'Line 1\nLine 2\n', tags: ['vip', 'north'],
      }));
    });

    it('allows a b2b customer without ICE (drafts are allowed; finalize checks it)', () => {
      given(customerDecider).when(create({ type: 'b2b', ice: null })).thenTypes('CustomerCreated');
    });

    it('names every invalid field at once', () => {
      const error = given(customerDecider).when(create({
        name: '', type: 'b2x' as never, ice: '12345', email: 'not-an-email', address: { country: 'Morocco' },
        tags: ['ok', ''],
      })).thenError('VALIDATION_ERROR', ['name', 'type', 'ice', 'email', 'address.country', 'tags[1]']);
      expect(messageFor(error, 'ice')).to.equal('must be exactly 15 digits');
      expect(messageFor(error, 'type')).to.equal('must be one of b2b, b2c');
    });

    it('limits name to 200 characters and tags to 50', () => {
      given(customerDecider).when(create({ name: 'x'.repeat(201) })).thenError('VALIDATION_ERROR', ['name']);
      given(customerDecider).when(create({ name: 'é'.repeat(200) })).thenTypes('CustomerCreated');
      const tags = Array.from({ length: 51 }, (_, i) => `t${i}`);
      given(customerDecider).when(create({ tags })).thenError('VALIDATION_ERROR', ['tags']);
    });

    it('rejects an ICE with letters or spaces inside', () => {
      given(customerDecider).when(create({ ice: '00123456700008A' })).thenError('VALIDATION_ERROR', ['ice']);
      given(customerDecider).when(create({ ice: '0012345 6700008' })).thenError('VALIDATION_ERROR', ['ice']);
      const error = given(customerDecider).when(create({ ice: '0012345670000891' })).thenError('VALIDATION_ERROR', ['ice']);
      expect(messageFor(error, 'ice')).to.equal('must be exactly 15 digits');
    });

    it('a second create of the same id decides nothing', () => {
      given(customerDecider, existing()).when(create()).then([]);
    });
  });

  describe('UpdateCustomer (any -> given status, customer.updated)', () => {
    it('changes the fields sent, bumps version and updated_at, lists changed fields', () => {
      given(customerDecider, existing()).when(update({ name: 'Atlas SA', email: 'x@atlas.ma' })).then([{
        type: 'CustomerUpdated',
        data: {
          customer: created({ ice: ICE, name: 'Atlas SA', email: 'x@atlas.ma', updated_at: at(1), version: 1 }),
          changed_fields: ['name', 'email'],
          previous_ice: ICE,
        },
      }]);
    });

    const transitions: [string, CustomerCommand[], CustomerPatch['status'], string | null][] = [
      ['active -> inactive', [], 'inactive', null],
      ['active -> archived (sets archived_at)', [], 'archived', at(5)],
      ['archived -> active (unarchives)', [archive()], 'active', null],
      ['archived -> inactive (clears archived_at)', [archive()], 'inactive', null],
      ['inactive -> active', [update({ status: 'inactive' })], 'active', null],
      ['inactive -> archived', [update({ status: 'inactive' })], 'archived', at(5)],
    ];
    for (const [name, before, status, archivedAt] of transitions) {
      it(`status ${name}`, () => {
        const [event] = given(customerDecider, existing(...before)).when(update({ status }, 5)).thenTypes('CustomerUpdated');
        expect(event.data.customer.status).to.equal(status);
        expect(event.data.customer.archived_at).to.equal(archivedAt);
        expect(event.data.customer.version).to.equal(before.length + 1);
      });
    }

    it('archiving through PATCH is customer.updated, and DELETE afterwards is ALREADY_ARCHIVED', () => {
      given(customerDecider, existing()).when(update({ status: 'archived' })).thenTypes('CustomerUpdated');
      given(customerDecider, existing(update({ status: 'archived' }))).when(archive()).thenError('ALREADY_ARCHIVED');
    });

    it('an archived customer stays editable', () => {
      const [event] = given(customerDecider, existing(archive())).when(update({ phone: '+212 600 000 000' }, 7))
        .thenTypes('CustomerUpdated');
      expect(event.data.customer).to.include({ status: 'archived', archived_at: at(2), phone: '+212 600 000 000', version: 2 });
    });

    it('a PATCH that changes nothing decides nothing', () => {
      given(customerDecider, existing()).when(update({ name: 'Atlas SARL', ice: ICE, tags: [] })).then([]);
      given(customerDecider, existing()).when(update({})).then([]);
    });

    it('replaces the whole address; country falls back to MA', () => {
      const before = existing(update({ address: { city: 'Rabat', country: 'FR' } }));
      const [event] = given(customerDecider, before).when(update({ address: { street: '2 Rue X' } }, 3)).thenTypes('CustomerUpdated');
      expect(event.data.customer.address).to.deep.equal({ street: '2 Rue X', city: null, postal_code: null, country: 'MA' });
    });

    it('clearing the ICE reports the previous one', () => {
      const [event] = given(customerDecider, existing()).when(update({ ice: null })).thenTypes('CustomerUpdated');
      expect(event.data).to.deep.include({ changed_fields: ['ice'], previous_ice: ICE });
      expect(event.data.customer.ice).to.equal(null);
    });

    it('rejects invalid values with field names', () => {
      given(customerDecider, existing())
        .when(update({ name: null as never, status: 'deleted' as never, ice: '1', tags: 'vip' as never }))
        .thenError('VALIDATION_ERROR', ['name', 'status', 'ice', 'tags']);
    });

    it('an unknown customer is NOT_FOUND', () => {
      given(customerDecider).when(update({ name: 'X' })).thenError('NOT_FOUND');
    });
  });

  describe('ArchiveCustomer (DELETE)', () => {
    it('not archived -> archived, customer.deleted', () => {
      given(customerDecider, existing()).when(archive(9)).then([{
        type: 'CustomerArchived',
        data: { customer: created({ ice: ICE, status: 'archived', archived_at: at(9), updated_at: at(9), version: 1 }) },
      }]);
    });

    it('inactive -> archived', () => {
      given(customerDecider, existing(update({ status: 'inactive' }))).when(archive()).thenTypes('CustomerArchived');
    });

    it('archived -> ALREADY_ARCHIVED', () => {
      given(customerDecider, existing(archive())).when(archive(3)).thenError('ALREADY_ARCHIVED');
    });

    it('an unknown customer is NOT_FOUND', () => {
      given(customerDecider).when(archive()).thenError('NOT_FOUND');
    });
  });

  it('version is the stream revision of each event', () => {
    const events = existing(update({ name: 'B' }), archive(), update({ status: 'active' }, 4));
    expect(events.map((e) => e.data.customer.version)).to.deep.equal([0, 1, 2, 3]);
    expect(fold(customerDecider, events).revision).to.equal(3);
  });

  describe('iceChange (reservations for the handler)', () => {
    const state = fold(customerDecider, existing());
    it('create claims its ICE', () => expect(iceChange(create({ ice: ICE }), initialCustomerState)).to.deep.equal({ claim: ICE, release: null }));
    it('create without ICE claims nothing', () => expect(iceChange(create(), initialCustomerState)).to.deep.equal({ claim: null, release: null }));
    it('a new ICE claims it and releases the old', () => {
      expect(iceChange(update({ ice: '999999999999999' }), state)).to.deep.equal({ claim: '999999999999999', release: ICE });
    });
    it('clearing releases', () => expect(iceChange(update({ ice: '' }), state)).to.deep.equal({ claim: null, release: ICE }));
    it('same ICE or no ICE in the patch: nothing', () => {
      expect(iceChange(update({ ice: ICE }), state)).to.deep.equal({ claim: null, release: null });
      expect(iceChange(update({ name: 'X' }), state)).to.deep.equal({ claim: null, release: null });
    });
    it('archiving keeps the reservation', () => expect(iceChange(archive(), state)).to.deep.equal({ claim: null, release: null }));
  });
});
