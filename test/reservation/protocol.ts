/**
 * The reservation protocol against the event store port only, so the same
 * suite proves it on PostgreSQL and, where EVENTSTORE_URL is set, on
 * EventStoreDB (protocol.test.ts runs it on both).
 */
import { expect } from 'chai';
import { randomInt } from 'node:crypto';
import { v7 as uuid } from 'uuid';
import {
  claim,
  claimFirstFree,
  claimIce,
  customerIceScope,
  organizationSlotScope,
  readReservation,
  release,
  ReservationTakenError,
  reservationStream,
  writeWithReservations,
  iceAlreadyUsed,
  type ReservationScope,
} from '../../src/commands/reservation/index.ts';
import type { EventStore } from '../../src/eventstore/types.ts';
import { DomainError } from '../../src/shared/errors.ts';
import { metadata } from '../eventstore/contract.ts';

/** A fresh 15-digit value per test: EventStoreDB streams outlive a test run. */
export function randomIce(): string {
  return String(randomInt(1e9)).padStart(9, '0') + String(randomInt(1e6)).padStart(6, '0');
}

export function runReservationProtocol(name: string, setup: () => Promise<{ store: EventStore; cleanup(): Promise<void> }>): void {
  describe(`reservation protocol: ${name}`, function () {
    let store: EventStore;
    let cleanup: () => Promise<void>;
    let scope: ReservationScope;
    const types = async (value: string) => (await store.readStream(reservationStream(scope, value))).map((e) => e.type);

    before(async function () {
      ({ store, cleanup } = await setup());
    });
    after(async function () {
      await cleanup?.();
    });
    beforeEach(function () {
      scope = customerIceScope(uuid()); // a tenant of its own per test
    });

    it('claims a free value once; the same owner claiming again appends nothing', async function () {
      const ice = randomIce();
      expect(await claim(store, scope, ice, 'a', metadata())).to.equal('claimed');
      expect(await claim(store, scope, ice, 'a', metadata())).to.equal('already_held');
      expect(await types(ice)).to.deep.equal(['ReservationClaimed']);
      expect(await readReservation(store, scope, ice)).to.deep.equal({ owner: 'a', revision: 0 });
    });

    it('refuses another owner; claimIce answers VALIDATION_ERROR ice "already used"', async function () {
      const ice = randomIce();
      await claim(store, scope, ice, 'a', metadata());
      let taken: unknown;
      await claim(store, scope, ice, 'b', metadata()).catch((err) => (taken = err));
      expect(taken).to.be.instanceOf(ReservationTakenError).and.include({ owner: 'a' });
      const error = await claimIce(store, scope, ice, 'b', metadata()).catch((err) => err);
      expect(error).to.be.instanceOf(DomainError);
      expect(error).to.include({ code: 'VALIDATION_ERROR' });
      expect(error.details).to.deep.equal({ fields: [{ field: 'ice', message: 'already used' }] });
    });

    it('only the owner releases; a released value can be claimed again at that revision', async function () {
      const ice = randomIce();
      await claim(store, scope, ice, 'a', metadata());
      expect(await release(store, scope, ice, 'b', metadata())).to.equal(false);
      expect(await release(store, scope, ice, 'a', metadata())).to.equal(true);
      expect(await release(store, scope, ice, 'a', metadata())).to.equal(false);
      expect(await claim(store, scope, ice, 'b', metadata())).to.equal('claimed');
      expect(await types(ice)).to.deep.equal(['ReservationClaimed', 'ReservationReleased', 'ReservationClaimed']);
      expect((await readReservation(store, scope, ice)).owner).to.equal('b');
    });

    it('10 concurrent claims of one value: exactly one wins, nine are "already used"', async function () {
      const ice = randomIce();
      const owners = Array.from({ length: 10 }, () => uuid());
      const outcomes = await Promise.allSettled(owners.map((o) => claimIce(store, scope, ice, o, metadata())));
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      expect(won).to.have.length(1);
      for (const lost of outcomes.filter((o) => o.status === 'rejected')) {
        expect((lost as PromiseRejectedResult).reason).to.include({ code: 'VALIDATION_ERROR' });
      }
      expect(await types(ice)).to.deep.equal(['ReservationClaimed']);
      expect(owners).to.include((await readReservation(store, scope, ice)).owner);
    });

    it('10 concurrent claims and releases of one value never leave two owners', async function () {
      const ice = randomIce();
      const cycle = async (owner: string) => {
        for (let i = 0; i < 3; i++) {
          if ((await claim(store, scope, ice, owner, metadata()).catch(() => null)) === 'claimed') {
            await release(store, scope, ice, owner, metadata());
          }
        }
      };
      await Promise.all(Array.from({ length: 10 }, () => cycle(uuid())));
      // Replaying the stream: every claim follows a release (or the start).
      let owner: string | null = null;
      for (const e of await store.readStream(reservationStream(scope, ice))) {
        const data = e.data as { owner: string };
        if (e.type === 'ReservationClaimed') expect(owner, 'claimed while held').to.equal(null);
        if (e.type === 'ReservationReleased') expect(owner).to.equal(data.owner);
        owner = e.type === 'ReservationClaimed' ? data.owner : null;
      }
      expect(owner).to.equal(null);
    });

    it('entity slots: 5 concurrent owners under a cap of 3 take slots 1..3, two get none', async function () {
      const slots = organizationSlotScope(uuid());
      const taken = await Promise.all(Array.from({ length: 5 }, () => claimFirstFree(store, slots, 3, uuid(), metadata())));
      expect(taken.filter((s) => s !== null).sort()).to.deep.equal([1, 2, 3]);
      expect(taken.filter((s) => s === null)).to.have.length(2);
    });

    describe('writeWithReservations', function () {
      it('claims, marks the value given up, writes, then releases it', async function () {
        const [before, after] = [randomIce(), randomIce()];
        await claim(store, scope, before, 'a', metadata());
        const result = await writeWithReservations(
          store,
          { owner: 'a', metadata: metadata(), claims: [{ scope, value: after, taken: iceAlreadyUsed }], releases: [{ scope, value: before }] },
          async () => 'written',
        );
        expect(result).to.equal('written');
        expect(await types(before)).to.deep.equal(['ReservationClaimed', 'ReservationReleaseIntended', 'ReservationReleased']);
        expect(await readReservation(store, scope, after)).to.include({ owner: 'a' });
      });

      it('a failed write gives back what it claimed and keeps what was held before', async function () {
        const [held, wanted] = [randomIce(), randomIce()];
        await claim(store, scope, held, 'a', metadata());
        const boom = new Error('owner write failed');
        const plan = {
          owner: 'a', metadata: metadata(), releases: [{ scope, value: held }],
          claims: [{ scope, value: wanted, taken: iceAlreadyUsed }, { scope, value: held, taken: iceAlreadyUsed }],
        };
        const error = await writeWithReservations(store, plan, async () => { throw boom; }).catch((err) => err);
        expect(error).to.equal(boom);
        expect((await readReservation(store, scope, wanted)).owner).to.equal(null);
        expect((await readReservation(store, scope, held)).owner).to.equal('a');
      });

      it('a taken value refuses the write before it runs and gives back the earlier claims', async function () {
        const [free, taken] = [randomIce(), randomIce()];
        await claim(store, scope, taken, 'other', metadata());
        let wrote = false;
        const plan = {
          owner: 'a', metadata: metadata(), releases: [],
          claims: [{ scope, value: free, taken: iceAlreadyUsed }, { scope, value: taken, taken: iceAlreadyUsed }],
        };
        const error = await writeWithReservations(store, plan, async () => { wrote = true; }).catch((err) => err);
        expect(error).to.include({ code: 'VALIDATION_ERROR' });
        expect(wrote).to.equal(false);
        expect((await readReservation(store, scope, free)).owner).to.equal(null);
      });
    });
  });
}
