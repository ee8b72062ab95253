/**
 * Appends under a condition (EventStore.withCondition, AppendCondition): the
 * condition's statement runs in the append's own transaction and refuses it
 * whole (es_require, SQLSTATE ES010), alone, in a group of creations, across
 * several streams; its state tells the caller whether anything may have been
 * written. Against a real PostgreSQL store with an inline projection, and
 * one without.
 */
import { expect } from 'chai';
import type { PostgresStoreOptions } from '../../src/eventstore/postgres.ts';
import { appendCondition, ConditionFailedError, type AppendResult, type EventStore } from '../../src/eventstore/types.ts';
import { sqlLiteral } from '../../src/eventstore/sql-literal.ts';
import { freshPostgresStore } from '../support/event-store.ts';
import { newEvent, streamName } from './contract.ts';
import { interceptQueries, queryText } from '../support/pool-queries.ts';

/** A gate the condition reads: the append commits only while the gate is open, and counts it. */
const GATE = `update gates set passed = passed + 1 where name = $1::text
  returning es_require(open, 'the gate ' || name || ' is closed') as ok, passed`;
const gated = (gate: string) => appendCondition(`with g as (${GATE}) select es_require(coalesce((select ok from g), false), 'no gate') as ok, (select passed from g) as passed`, [sqlLiteral(gate)], gate);

/** An inline projection writing one row per event in the append's message. */
const rowPerEvent: PostgresStoreOptions['inline'] = {
  handles: () => true,
  mark: 1,
  opening: () => null,
  async apply() {
    throw new Error('apply() is not called when statements() answers');
  },
  statements: (events, literal) => ({
    statements: [
      {
        sql: 'insert into gated_rows (event_id, stream) select e, s from unnest($1::uuid[], $2::text[]) as t(e, s)',
        args: [literal(`{${events.map((e) => e.id).join(',')}}`), literal(`{${events.map((e) => `"${e.stream}"`).join(',')}}`)],
      },
    ],
    committed: () => {},
    refused: () => {},
  }),
};

/** The same rows written after the message, by apply() (a projection that must read first: BEGIN, message, apply(), COMMIT). */
const rowPerEventAfter: PostgresStoreOptions['inline'] = {
  handles: () => true,
  mark: 1,
  opening: () => null,
  async apply(events, client) {
    await client.query('insert into gated_rows (event_id, stream) select e, s from unnest($1::uuid[], $2::text[]) as t(e, s)', [
      events.map((e) => e.id),
      events.map((e) => e.stream),
    ]);
  },
  statements: () => null,
};

for (const [name, options] of [
  ['with an inline projection, creations in groups', { inline: rowPerEvent, groupCreations: () => true }],
  ['with an inline projection written by apply(), creations in groups', { inline: rowPerEventAfter, groupCreations: () => true }],
  ['without inline projections', {}],
] as const) {
  describe(`postgres event store: appends under a condition (${name})`, function () {
    let setup: Awaited<ReturnType<typeof freshPostgresStore>>;
    const inline = 'inline' in options;
    beforeEach(async () => {
      setup = await freshPostgresStore(options as PostgresStoreOptions);
      await setup.database.pool.query(`create table gates (name text primary key, open boolean not null, passed int not null default 0);
        create table gated_rows (event_id uuid primary key, stream text not null)`);
    });
    afterEach(() => setup.cleanup());

    const gate = async (name: string, open: boolean) =>
      setup.database.pool.query('insert into gates (name, open) values ($1, $2) on conflict (name) do update set open = excluded.open', [name, open]);
    const passed = async (name: string) => (await setup.database.pool.query('select passed from gates where name = $1', [name])).rows[0]?.passed;
    const rows = async (stream: string) => (await setup.database.pool.query('select count(*)::int as n from gated_rows where stream = $1', [stream])).rows[0].n;

    it('commits while the condition holds, with its row, and tells so', async () => {
      await gate('a', true);
      const condition = gated('a');
      const stream = streamName('gated');
      const view = setup.store.withCondition!(condition);
      const result = await view.appendToStream(stream, [newEvent('Created')], 'no_stream');
      expect(result.nextRevision).to.equal(0);
      expect(condition.state).to.equal('committed');
      expect(condition.seen).to.deep.include({ ok: true, passed: 1 });
      expect((await setup.store.readStream(stream)).length).to.equal(1);
      expect(await rows(stream)).to.equal(inline ? 1 : 0);
      expect(await passed('a')).to.equal(1);
    });

    it('refuses the whole append when the condition no longer holds: nothing written, nothing counted', async () => {
      await gate('b', false);
      const condition = gated('b');
      const stream = streamName('gated');
      const err = await setup.store.withCondition!(condition).appendToStream(stream, [newEvent('Created')], 'no_stream').catch((e: unknown) => e);
      expect(err).to.be.instanceOf(ConditionFailedError);
      expect(String((err as Error).message)).to.include('the gate b is closed');
      expect(condition.state).to.equal('refused');
      expect(await setup.store.readStream(stream)).to.deep.equal([]);
      expect(await rows(stream)).to.equal(0);
      expect(await passed('b'), "the condition's own write rolled back with it").to.equal(0);
    });

    it('runs the condition on every append of the view, the existing streams too', async () => {
      await gate('c', true);
      const stream = streamName('gated');
      const condition = gated('c');
      const view = setup.store.withCondition!(condition);
      await view.appendToStream(stream, [newEvent('Created')], 'no_stream');
      await view.appendToStream(stream, [newEvent('Changed')], 0);
      expect(await passed('c')).to.equal(2);
      await gate('c', false);
      const err = await view.appendToStream(stream, [newEvent('Changed')], 1).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(ConditionFailedError);
      expect((await setup.store.readStream(stream)).length).to.equal(2);
    });

    it('answers a retried append whose events are stored as then, its condition committed by the first attempt', async () => {
      await gate('d', true);
      const stream = streamName('gated');
      const event = newEvent('Created');
      const first = await setup.store.withCondition!(gated('d')).appendToStream(stream, [event], 'no_stream');
      const again = gated('d');
      const replay = await setup.store.withCondition!(again).appendToStream(stream, [event], 'no_stream');
      expect(replay).to.deep.equal({ ...first, replayed: true });
      expect(again.state).to.equal('committed');
      expect(again.seen, 'not counted again').to.equal(null);
      expect(await passed('d')).to.equal(1);
    });

    it('refuses every stream of an atomic append when the condition fails', async () => {
      await gate('e', false);
      const streams = [streamName('gated'), streamName('gated')];
      const condition = gated('e');
      const err = await setup.store
        .withCondition!(condition)
        .appendToStreams!(streams.map((stream) => ({ stream, events: [newEvent('Created')], expected: 'no_stream' as const })))
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(ConditionFailedError);
      expect(condition.state).to.equal('refused');
      for (const s of streams) expect(await setup.store.readStream(s)).to.deep.equal([]);
    });

    it('leaves a condition whose statement cannot be prepared unsent', async () => {
      const condition = appendCondition('select es_require(no_such_column, $1::text)', [sqlLiteral('x')], 'x');
      const stream = streamName('gated');
      const err = await setup.store.withCondition!(condition).appendToStream(stream, [newEvent('Created')], 'no_stream').catch((e: unknown) => e);
      expect(err).to.be.instanceOf(Error);
      expect(condition.state).to.equal('unsent');
      expect(await setup.store.readStream(stream)).to.deep.equal([]);
    });

    it('offers no view without the condition', () => {
      const view: EventStore = setup.store.withCondition!(gated('f'));
      expect(view.withoutInlineProjections).to.equal(undefined);
      expect(view.withCondition).to.equal(undefined);
    });

    if (inline) {
      it("runs the condition after the projection's rows are written, its locks after theirs", async () => {
        const stream = streamName('gated');
        // Holds only once the append's own row is written in its transaction.
        const condition = appendCondition(`select es_require(exists (select from gated_rows where stream = $1::text), 'no row yet') as ok`, [sqlLiteral(stream)], stream);
        await setup.store.withCondition!(condition).appendToStream(stream, [newEvent('Created')], 'no_stream');
        expect(condition.state).to.equal('committed');
        expect(await rows(stream)).to.equal(1);
      });

      for (const lookup of ['fails', 'answers'] as const) {
        it(`keeps a condition whose group's COMMIT answer was lost \`sent\` when the retry alone is refused (the lookup of its events ${lookup})`, async () => {
          await gate('lost', true);
          await gate('open', true);
          let lostOnce = false;
          let lookupFails = false;
          interceptQueries(setup.database.pool, (query, run) => {
            const text = queryText(query);
            if (!lostOnce && text.includes('execute') && text.includes("('lost')")) {
              // The group commits; its answer is lost with the connection.
              lostOnce = true;
              lookupFails = lookup === 'fails';
              return run().then(() => {
                throw new Error('Connection terminated unexpectedly');
              });
            }
            if (lookupFails && text.includes('from es_events where event_id = any')) return Promise.reject(new Error('timeout exceeded when trying to connect'));
            return null;
          });
          const settle = (p: Promise<AppendResult>) => p.then((r) => ({ ok: r }), (err: unknown) => ({ err }));
          // One append in flight; the others queue behind it and go as one group, whose answer is lost.
          const lead = settle(setup.store.appendToStream(streamName('gated'), [newEvent('Created')], 'no_stream'));
          const target = { stream: streamName('gated'), condition: gated('lost') };
          const others = Array.from({ length: 3 }, () => ({ stream: streamName('gated'), condition: gated('open') }));
          const outcomes = await Promise.all([
            lead,
            ...[target, ...others].map((a) => settle(setup.store.withCondition!(a.condition).appendToStream(a.stream, [newEvent('Created')], 'no_stream'))),
          ]);
          expect(lostOnce, 'the group was written').to.equal(true);
          expect((await setup.store.readStream(target.stream)).length, 'the group committed').to.equal(1);
          if (lookup === 'fails') {
            expect('err' in outcomes[1], JSON.stringify(outcomes[1])).to.equal(true);
            expect(target.condition.state, 'the outcome stays unknown: never "nothing was written"').to.equal('sent');
          } else {
            expect((outcomes[1] as { ok: AppendResult }).ok.replayed).to.equal(true);
            expect(target.condition.state).to.equal('committed');
            expect(target.condition.seen).to.equal(null);
          }
          expect(await passed('lost'), 'counted once, by the group').to.equal(1);
        });
      }

      it("refuses a condition for sure when, after a group whose connection failed, its retry alone is refused by the condition itself", async () => {
        await gate('closing', true);
        let failed = false;
        interceptQueries(setup.database.pool, (query) => {
          if (failed || !queryText(query).includes("('closing')")) return null;
          // The group's connection fails before PostgreSQL runs anything (outcome unknown to the store), and the
          // gate closes meanwhile.
          failed = true;
          return setup.database.pool.query(`update gates set open = false where name = 'closing'`).then(() => {
            throw new Error('Connection terminated unexpectedly');
          });
        });
        const settle = (p: Promise<AppendResult>) => p.then((r) => ({ ok: r }), (err: unknown) => ({ err }));
        const lead = settle(setup.store.appendToStream(streamName('gated'), [newEvent('Created')], 'no_stream'));
        const target = { stream: streamName('gated'), condition: gated('closing') };
        const outcomes = await Promise.all([
          lead,
          settle(setup.store.withCondition!(target.condition).appendToStream(target.stream, [newEvent('Created')], 'no_stream')),
          ...Array.from({ length: 3 }, () => settle(setup.store.appendToStream(streamName('gated'), [newEvent('Created')], 'no_stream'))),
        ]);
        expect(failed).to.equal(true);
        expect((outcomes[1] as { err: unknown }).err).to.be.instanceOf(ConditionFailedError);
        // es_append ran before the condition in the retry, so its refusal proves no attempt stored the events.
        expect(target.condition.state).to.equal('refused');
        expect(await setup.store.readStream(target.stream)).to.deep.equal([]);
      });

      it('in a group of creations, refuses only the append whose condition fails; the others are written', async () => {
        await gate('open', true);
        await gate('shut', false);
        const settle = (p: Promise<AppendResult>) => p.then((r) => ({ ok: r }), (err: unknown) => ({ err }));
        // One append in flight; the others queue behind it and go as one group, which the shut gate refuses
        // whole, and then one by one.
        const lead = settle(setup.store.appendToStream(streamName('gated'), [newEvent('Created')], 'no_stream'));
        const open = Array.from({ length: 5 }, () => ({ stream: streamName('gated'), condition: gated('open') }));
        const shut = { stream: streamName('gated'), condition: gated('shut') };
        const outcomes = await Promise.all([
          lead,
          ...[...open, shut].map((a) => settle(setup.store.withCondition!(a.condition).appendToStream(a.stream, [newEvent('Created')], 'no_stream'))),
        ]);
        expect(outcomes.slice(0, 6).every((o) => 'ok' in o), JSON.stringify(outcomes)).to.equal(true);
        expect((outcomes[6] as { err: unknown }).err).to.be.instanceOf(ConditionFailedError);
        for (const a of open) {
          expect(a.condition.state).to.equal('committed');
          expect(await rows(a.stream)).to.equal(1);
        }
        expect(shut.condition.state).to.equal('refused');
        expect(await setup.store.readStream(shut.stream)).to.deep.equal([]);
        expect(await passed('open'), 'each open append counted once, though its group was retried').to.equal(5);
      });
    }
  });
}
