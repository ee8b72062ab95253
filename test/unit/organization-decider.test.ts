import { expect } from 'chai';
import type { CommandMetadata } from '../../src/commands/command.ts';
import type { NewOrganizationInput, OrganizationCommand, OrganizationPatch } from '../../src/commands/organization/commands.ts';
import { iceChange, organizationDecider } from '../../src/commands/organization/decider.ts';
import type { Organization } from '../../src/commands/organization/events.ts';
import { fold } from '../../src/commands/shared/decider.ts';
import { given, history, messageFor } from './given.ts';

const ID = '0190a1b2-0000-7000-8000-0000000000a1';
const ACCOUNT = '0190a1b2-0000-7000-8000-0000000000b1';
const ICE = '001525417000071';
const OTHER_ICE = '002233445000066';
const at = (minute: number) => `2026-03-01T10:${String(minute).padStart(2, '0')}:00.000Z`;
const meta = (minute = 0): CommandMetadata => ({ now: at(minute), actor: 'key_1', organization_id: ID });

const provision = (input: Partial<NewOrganizationInput> = {}, minute = 0): OrganizationCommand => ({
  type: 'ProvisionOrganization',
  data: { organization_id: ID, account_id: ACCOUNT, entity_slot: 1, legal_name: 'Atlas Conseil SARL', ...input },
  metadata: meta(minute),
});
const update = (patch: OrganizationPatch, minute = 1): OrganizationCommand => ({
  type: 'UpdateOrganizationProfile',
  data: { organization_id: ID, patch },
  metadata: meta(minute),
});
const archive = (minute = 2): OrganizationCommand => ({ type: 'ArchiveOrganization', data: { organization_id: ID }, metadata: meta(minute) });
const restore = (minute = 3): OrganizationCommand => ({ type: 'RestoreOrganization', data: { organization_id: ID }, metadata: meta(minute) });
const apiAccess = (api_enabled: boolean, minute = 4): OrganizationCommand => ({
  type: 'ChangeOrganizationApiAccess',
  data: { organization_id: ID, api_enabled },
  metadata: meta(minute),
});

const provisioned = (overrides: Partial<Organization> = {}): Organization => ({
  id: ID, account_id: ACCOUNT, legal_name: 'Atlas Conseil SARL', ice: null, rc: null, if_number: null, vat_number: null,
  phone: null, email: null, website: null, billing_address: { street: null, city: null, postal_code: null, country: 'MA' },
  api_enabled: true, archived: false, archived_at: null, created_at: at(0), updated_at: at(0), version: 0, ...overrides,
});

const existing = (...more: OrganizationCommand[]) => history(organizationDecider, provision({ ice: ICE }), ...more);

describe('organization decider', () => {
  describe('ProvisionOrganization', () => {
    it('provisions with defaults: API on, not archived, country MA, version 0, its entity slot', () => {
      given(organizationDecider).when(provision()).then([
        { type: 'OrganizationProvisioned', data: { organization: provisioned(), entity_slot: 1 } },
      ]);
    });

    it('keeps every profile field, trimmed, blank optional text as null', () => {
      const [event] = given(organizationDecider).when(provision({
        legal_name: ' Atlas Conseil SARL ', ice: ICE, rc: 'RC 12345', if_number: '40123456', vat_number: ' ', phone: '+212 522 000000',
        email: 'compta@atlas.ma', website: 'https://atlas.ma', billing_address: { street: '1 Bd Zerktouni', city: 'Casablanca', postal_code: '20000' },
      })).thenTypes('OrganizationProvisioned');
      expect(event.data.organization).to.deep.equal(provisioned({
        ice: ICE, rc: 'RC 12345', if_number: '40123456', vat_number: null, phone: '+212 522 000000', email: 'compta@atlas.ma',
        website: 'https://atlas.ma', billing_address: { street: '1 Bd Zerktouni', city: 'Casablanca', postal_code: '20000', country: 'MA' },
      }));
    });

    it('names every invalid field at once', () => {
      const error = given(organizationDecider).when(provision({
        legal_name: '  ', ice: '12345', email: 'nope', website: 'atlas.ma', billing_address: { country: 'Morocco' },
      })).thenError('VALIDATION_ERROR', ['legal_name', 'ice', 'email', 'website', 'billing_address.country']);
      expect(messageFor(error, 'ice')).to.equal('must be exactly 15 digits');
      expect(messageFor(error, 'website')).to.equal('must be a URL starting with http:// or https://');
    });

    it('gives an over-long ICE the digit rule, like a customer ICE', () => {
      const error = given(organizationDecider).when(provision({ ice: '0012345670000891' })).thenError('VALIDATION_ERROR', ['ice']);
      expect(messageFor(error, 'ice')).to.equal('must be exactly 15 digits');
    });

    it('rejects over-long text and non-http websites', () => {
      given(organizationDecider).when(provision({ legal_name: 'x'.repeat(201), website: 'ftp://atlas.ma' }))
        .thenError('VALIDATION_ERROR', ['legal_name', 'website']);
    });

    it('is a no-op when the organization already exists (a retried command)', () => {
      given(organizationDecider, existing()).when(provision()).then([]);
    });
  });

  describe('UpdateOrganizationProfile', () => {
    it('changes only the fields sent and lists them, with the ICE before', () => {
      const [event] = given(organizationDecider, existing()).when(update({ legal_name: 'Atlas Group', ice: OTHER_ICE }))
        .thenTypes('OrganizationProfileUpdated');
      expect(event.data).to.deep.equal({
        organization: provisioned({ legal_name: 'Atlas Group', ice: OTHER_ICE, updated_at: at(1), version: 1 }),
        changed_fields: ['legal_name', 'ice'],
        previous_ice: ICE,
      });
    });

    it('clears optional fields with null but never legal_name', () => {
      given(organizationDecider, existing()).when(update({ legal_name: null as never })).thenError('VALIDATION_ERROR', ['legal_name']);
      const [event] = given(organizationDecider, existing()).when(update({ ice: null })).thenTypes('OrganizationProfileUpdated');
      expect(event.data.organization.ice).to.equal(null);
    });

    it('replaces the whole billing address (country defaults to MA again)', () => {
      const events = existing(update({ billing_address: { street: 'A', city: 'Rabat', country: 'FR' } }));
      const [event] = given(organizationDecider, events).when(update({ billing_address: { city: 'Fès' } }, 2)).thenTypes('OrganizationProfileUpdated');
      expect(event.data.organization.billing_address).to.deep.equal({ street: null, city: 'Fès', postal_code: null, country: 'MA' });
    });

    it('appends nothing when nothing changes', () => {
      given(organizationDecider, existing()).when(update({ ice: ICE, legal_name: 'Atlas Conseil SARL' })).then([]);
    });

    it('is refused while archived (FORBIDDEN, reason organization_archived)', () => {
      const error = given(organizationDecider, existing(archive())).when(update({ phone: '1' }, 5)).thenError('FORBIDDEN');
      expect(error.details).to.deep.equal({ reason: 'organization_archived' });
    });

    it('is NOT_FOUND before provisioning', () => {
      given(organizationDecider).when(update({ phone: '1' })).thenError('NOT_FOUND');
    });
  });

  describe('archive and restore', () => {
    it('archives once, then ALREADY_ARCHIVED', () => {
      given(organizationDecider, existing()).when(archive()).then([
        { type: 'OrganizationArchived', data: { organization: provisioned({ ice: ICE, archived: true, archived_at: at(2), updated_at: at(2), version: 1 }) } },
      ]);
      given(organizationDecider, existing(archive())).when(archive(5)).thenError('ALREADY_ARCHIVED');
    });

    it('restores an archived one, then NOT_ARCHIVED', () => {
      given(organizationDecider, existing(archive())).when(restore()).then([
        { type: 'OrganizationRestored', data: { organization: provisioned({ ice: ICE, updated_at: at(3), version: 2 }) } },
      ]);
      given(organizationDecider, existing()).when(restore()).thenError('NOT_ARCHIVED');
    });
  });

  describe('ChangeOrganizationApiAccess', () => {
    it('switches API access off and on, in any state, and ignores a repeat', () => {
      const [off] = given(organizationDecider, existing(archive())).when(apiAccess(false)).thenTypes('OrganizationApiAccessChanged');
      expect(off.data.organization).to.include({ api_enabled: false, archived: true, version: 2 });
      given(organizationDecider, existing()).when(apiAccess(true)).then([]);
    });
  });

  describe('iceChange (what the handler reserves)', () => {
    const state = (...more: OrganizationCommand[]) => fold(organizationDecider, existing(...more));

    it('claims the ICE of a new organization, nothing when it has none', () => {
      expect(iceChange(provision({ ice: ` ${ICE} ` }), organizationDecider.initialState)).to.deep.equal({ claim: ICE });
      expect(iceChange(provision(), organizationDecider.initialState)).to.deep.equal({ claim: null });
    });

    it('claims the new ICE on change and gives nothing up; nothing when unchanged or absent', () => {
      expect(iceChange(update({ ice: OTHER_ICE }), state())).to.deep.equal({ claim: OTHER_ICE });
      expect(iceChange(update({ ice: null }), state())).to.deep.equal({ claim: null });
      expect(iceChange(update({ ice: ICE }), state())).to.deep.equal({ claim: null });
      expect(iceChange(update({ phone: '1' }), state())).to.deep.equal({ claim: null });
    });

    it('remembers every ICE the organization named, each once, in order (recovery keeps them reserved)', () => {
      expect(state().ices).to.deep.equal([ICE]);
      expect(state(update({ ice: OTHER_ICE }), update({ ice: null }), update({ ice: ICE }), update({ ice: OTHER_ICE })).ices).to.deep.equal([ICE, OTHER_ICE]);
      expect(fold(organizationDecider, history(organizationDecider, provision())).ices).to.deep.equal([]);
    });

    it('refuses a malformed ICE before anything is reserved', () => {
      expect(() => iceChange(update({ ice: 'abc' }), state())).to.throw('The request is invalid.');
    });
  });
});
