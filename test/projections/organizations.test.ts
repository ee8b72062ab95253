import { expect } from 'chai';
import { v7 as uuid } from 'uuid';
import type { CommandMetadata } from '../../src/commands/command.ts';
import type { OrganizationCommand } from '../../src/commands/organization/commands.ts';
import { organizationDecider } from '../../src/commands/organization/decider.ts';
import { organizationStream } from '../../src/commands/organization/events.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import type { EventStore, RecordedEvent } from '../../src/eventstore/types.ts';
import { organizationsProjector } from '../../src/projections/organizations.ts';
import { rebuildProjection } from '../../src/projections/rebuild.ts';
import { history } from '../unit/given.ts';
import { metadata } from '../eventstore/contract.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';

const ACCOUNT = uuid();
const at = (minute: number) => `2026-03-01T10:${String(minute).padStart(2, '0')}:00.000Z`;

function lifeOf(id: string, ice: string): OrganizationCommand[] {
  const meta = (minute: number): CommandMetadata => ({ now: at(minute), actor: 'key_1', organization_id: id });
  const data = { organization_id: id };
  return [
    { type: 'ProvisionOrganization', data: { ...data, account_id: ACCOUNT, entity_slot: 1, legal_name: 'Atlas', ice }, metadata: meta(0) },
    { type: 'UpdateOrganizationProfile', data: { ...data, patch: { website: 'https://atlas.ma', billing_address: { city: 'Rabat' } } }, metadata: meta(1) },
    { type: 'ArchiveOrganization', data, metadata: meta(2) },
    { type: 'ChangeOrganizationApiAccess', data: { ...data, api_enabled: false }, metadata: meta(3) },
    { type: 'RestoreOrganization', data, metadata: meta(4) },
  ];
}

describe('organizations projector', function () {
  let database: TestDatabase;
  let store: EventStore;
  let events: RecordedEvent[];

  const rows = () => database.db.selectFrom('organizations').selectAll().orderBy('id').execute();
  const apply = (batch: RecordedEvent[]) => database.db.transaction().execute((trx) => organizationsProjector.apply(batch, trx));

  beforeEach(async function () {
    database = await freshDatabase();
    store = await createPostgresEventStore(database.pool);
    for (const [id, ice] of [[uuid(), '001525417000071'], [uuid(), '002233445000066']]) {
      const decided = history(organizationDecider, ...lifeOf(id, ice));
      const appended = decided.map((e) => ({ id: uuid(), type: e.type, data: e.data, metadata: metadata({ organization_id: id }) }));
      await store.appendToStream(organizationStream(id), appended, 'no_stream');
    }
    events = await store.readAll(null, 100);
  });
  afterEach(async function () {
    await store.close();
    await database.drop();
  });

  it('keeps the newest snapshot of each organization, whatever the batching, each batch delivered twice', async function () {
    await apply(events);
    const once = await rows();
    expect(once).to.have.length(2);
    expect(once[0]).to.include({ account_id: ACCOUNT, legal_name: 'Atlas', website: 'https://atlas.ma', archived: false, api_enabled: false, version: 4 });
    expect(once[0].billing_address).to.deep.equal({ street: null, city: 'Rabat', postal_code: null, country: 'MA' });
    expect(once[0].archived_at).to.equal(null);

    await apply(events);
    expect(await rows()).to.deep.equal(once);

    await database.db.deleteFrom('organizations').execute();
    for (const event of events) {
      await apply([event]);
      await apply([event]);
    }
    expect(await rows()).to.deep.equal(once);

    // An older snapshot delivered late changes nothing.
    await apply([events[0]]);
    expect(await rows()).to.deep.equal(once);
  });

  it('a rebuild from position zero gives the live rows', async function () {
    await apply(events);
    const live = await rows();
    await rebuildProjection(database.db, store, organizationsProjector);
    expect(await rows()).to.deep.equal(live);
  });
});
