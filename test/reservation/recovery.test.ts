import { expect } from 'chai';
import { v7 as uuid } from 'uuid';
import {
  claim,
  intendRelease,
  ORGANIZATION_ICE,
  readReservation,
  release,
  type ReservationScope,
} from '../../src/commands/reservation/index.ts';
import { provisionOrganization, releaseFormerIce, updateOrganizationProfile } from '../../src/commands/organization/handler.ts';
import { organizationHolderChecks } from '../../src/commands/organization/holders.ts';
import { organizationStream } from '../../src/commands/organization/events.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import type { EventStore } from '../../src/eventstore/types.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import {
  pendingReservationChecks,
  reservationChecksConsumer,
  sweepReservationChecks,
} from '../../src/workers/reservation-recovery.ts';
import { metadata } from '../eventstore/contract.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { freshPostgresStore, storeWith, type PostgresStoreSetup } from '../support/event-store.ts';
import { randomIce } from './protocol.ts';

/** Owners that exist and the value each holds, as the owner streams would say. */
const holding = new Map<string, string>();
const holderChecks = { testice: async (_store: unknown, owner: string, value: string) => holding.get(owner) === value };

describe('reservation recovery', function () {
  let database: TestDatabase;
  let store: EventStore;
  let scope: ReservationScope;
  let consumed: string | null;

  /** Delivers the new log events to the checks consumer, each batch twice (it must not matter). */
  async function consume(): Promise<void> {
    const events = (await store.readAll(consumed, 1000)).filter((e) => reservationChecksConsumer.handles.includes(e.type));
    if (events.length === 0) return;
    for (let i = 0; i < 2; i++) await database.db.transaction().execute((trx) => reservationChecksConsumer.apply(events, trx));
    consumed = events[events.length - 1].position;
  }
  const sweep = (graceMs: number) => sweepReservationChecks({ db: database.db, store, logger: silentLogger, holderChecks }, graceMs);
  const ownerOf = async (value: string) => (await readReservation(store, scope, value)).owner;

  beforeEach(async function () {
    database = await freshDatabase();
    store = await createPostgresEventStore(database.pool);
    scope = { kind: 'testice', prefix: `testice-${uuid()}` };
    consumed = null;
  });
  afterEach(async function () {
    await store.close();
    await database.drop();
  });

  it('frees claims whose owner never came to exist or moved on, keeps the others, checks each once', async function () {
    const [kept, orphan, stillHeld, givenUp, released] = [randomIce(), randomIce(), randomIce(), randomIce(), randomIce()];
    const owners = { kept: uuid(), orphan: uuid(), stillHeld: uuid(), givenUp: uuid(), released: uuid() };
    holding.set(owners.kept, kept);
    holding.set(owners.stillHeld, stillHeld); // its write failed after the intent: it still holds the value
    holding.set(owners.givenUp, randomIce()); // its write succeeded, then the process died before the release
    await claim(store, scope, kept, owners.kept, metadata());
    await claim(store, scope, orphan, owners.orphan, metadata());
    await claim(store, scope, stillHeld, owners.stillHeld, metadata());
    await intendRelease(store, scope, stillHeld, owners.stillHeld, metadata());
    await claim(store, scope, givenUp, owners.givenUp, metadata());
    await intendRelease(store, scope, givenUp, owners.givenUp, metadata());
    await claim(store, scope, released, owners.released, metadata());
    await release(store, scope, released, owners.released, metadata());
    await consume();
    expect(await pendingReservationChecks(database.db)).to.equal(4);

    expect(await sweep(60_000)).to.deep.equal({ confirmed: 0, released: 0 }); // within the grace period: a write may be in flight
    expect(await sweep(0)).to.deep.equal({ confirmed: 2, released: 2 });
    expect(await ownerOf(kept)).to.equal(owners.kept);
    expect(await ownerOf(stillHeld)).to.equal(owners.stillHeld);
    expect(await ownerOf(orphan)).to.equal(null);
    expect(await ownerOf(givenUp)).to.equal(null);

    await consume();
    expect(await pendingReservationChecks(database.db)).to.equal(0);
    expect(await sweep(0)).to.deep.equal({ confirmed: 0, released: 0 });
  });

  it('leaves a check whose stream moved on to the newer event, and never frees a kind nobody vouches for', async function () {
    const value = randomIce();
    const owner = uuid();
    await claim(store, scope, value, owner, metadata());
    await consume();
    await intendRelease(store, scope, value, owner, metadata()); // not consumed yet: the row is out of date
    expect(await sweep(0)).to.deep.equal({ confirmed: 0, released: 0 });
    expect(await ownerOf(value)).to.equal(owner);
    await consume();
    expect(await sweep(0)).to.deep.equal({ confirmed: 0, released: 1 });

    const unknown: ReservationScope = { kind: 'nobody-checks-this', prefix: `nobody-checks-this-${uuid()}` };
    await claim(store, unknown, value, owner, metadata());
    await consume();
    await sweep(0);
    expect((await readReservation(store, unknown, value)).owner).to.equal(owner);
  });
});

describe('organization ICEs: never given back, freed only by the operator', function () {
  let setup: PostgresStoreSetup;
  let store: EventStore;
  beforeEach(async function () {
    setup = await freshPostgresStore();
    store = setup.store;
  });
  afterEach(() => setup.cleanup());

  const write = () => ({ store, metadata: metadata({ actor: 'system' }) });
  async function organizationWith(ice: string): Promise<string> {
    const result = await provisionOrganization(write(), {
      organization_id: uuid(), account_id: uuid(), entity_cap: 3, profile: { legal_name: 'Atlas Conseil SARL', ice },
    });
    return result.state.organization!.id;
  }
  const ownerOf = async (ice: string) => (await readReservation(store, ORGANIZATION_ICE, ice)).owner;

  it('recovery keeps every ICE an organization named, and frees one it never named', async function () {
    const [first, second, never] = [randomIce(), randomIce(), randomIce()];
    const org = await organizationWith(first);
    await updateOrganizationProfile(write(), org, { ice: second });
    await updateOrganizationProfile(write(), org, { ice: null });
    expect(await ownerOf(first)).to.equal(org);
    expect(await ownerOf(second)).to.equal(org);
    expect(await organizationHolderChecks.orgice(store, org, first, 'orgice')).to.equal(true);
    expect(await organizationHolderChecks.orgice(store, org, second, 'orgice')).to.equal(true);
    expect(await organizationHolderChecks.orgice(store, org, never, 'orgice')).to.equal(false);
    expect(await organizationHolderChecks.orgice(store, uuid(), first, 'orgice')).to.equal(false);
  });

  it('a write that fails never frees an ICE the organization came to name meanwhile (the same PATCH twice, at once)', async function () {
    const [first, next] = [randomIce(), randomIce()];
    const org = await organizationWith(first);
    // The second PATCH lands between the first one's claim (which took the ICE) and its append (now stale).
    let raced = false;
    const racing = storeWith(store, {
      appendToStream: async (stream: string, events: any, expected: any) => {
        if (!raced && stream === organizationStream(org)) {
          raced = true;
          await updateOrganizationProfile(write(), org, { ice: next }); // its claim finds the ICE already held
        }
        return store.appendToStream(stream, events, expected);
      },
    });
    const err = await updateOrganizationProfile({ store: racing, metadata: metadata({ actor: 'system' }), ifMatch: 0 }, org, { ice: next }).then(() => null, (e) => e);
    expect(raced).to.equal(true);
    expect(err?.code).to.equal('VERSION_CONFLICT');
    expect(await ownerOf(next)).to.equal(org); // the organization names it: the failed write's undo kept it
  });

  it('the operator frees a former ICE, never the current one, and says when nothing is reserved', async function () {
    const [mistaken, right, free] = [randomIce(), randomIce(), randomIce()];
    const org = await organizationWith(mistaken);
    expect(await releaseFormerIce(store, mistaken, metadata({ actor: 'system' }))).to.deep.equal({ outcome: 'in_use', owner: org, archived: false });
    expect(await ownerOf(mistaken)).to.equal(org);
    await updateOrganizationProfile(write(), org, { ice: right });
    expect(await releaseFormerIce(store, mistaken, metadata({ actor: 'system' }))).to.deep.equal({ outcome: 'released', owner: org });
    expect(await ownerOf(mistaken)).to.equal(null);
    expect(await ownerOf(right)).to.equal(org);
    expect(await releaseFormerIce(store, free, metadata({ actor: 'system' }))).to.deep.equal({ outcome: 'not_reserved' });
    // The entity the ICE identifies can now use it.
    expect(await ownerOf(mistaken)).to.equal(null);
    const rightful = await organizationWith(mistaken);
    expect(await ownerOf(mistaken)).to.equal(rightful);
  });
});
