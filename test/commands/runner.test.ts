/**
 * The one command runner on the real PostgreSQL event store: retries on a
 * concurrent writer, and when every attempt meets one, 409 VERSION_CONFLICT
 * with current_version (never the store's raw conflict, which is a 500).
 */
import { expect } from 'chai';
import { v7 as uuidv7 } from 'uuid';
import { commandMetadataOf, type CommandMetadata } from '../../src/commands/command.ts';
import type { Decider } from '../../src/commands/shared/decider.ts';
import { MAX_ATTEMPTS, runCommand } from '../../src/commands/shared/handler.ts';
import type { EventMetadata } from '../../src/eventstore/types.ts';
import { DomainError } from '../../src/shared/errors.ts';
import { freshPostgresStore, type PostgresStoreSetup } from '../support/event-store.ts';

type Bumped = { type: 'Bumped'; data: { by: string; at: string } };
type Bump = { by: string; metadata: CommandMetadata };
const counter: Decider<Bump, Bumped, number> = {
  initialState: 0,
  evolve: (n) => n + 1,
  decide: (command) => [{ type: 'Bumped', data: { by: command.by, at: command.metadata.now } }],
};
const metadata: EventMetadata = { organization_id: null, actor: 'test', request_id: null, correlation_id: null, causation_id: null, occurred_at: new Date().toISOString() };
const bump = (by: string, m = metadata) => ({ id: uuidv7(), type: 'Bumped', data: { by, at: m.occurred_at }, metadata: m });
/** A command of the request whose events carry `metadata`. */
const command = (by: string, m = metadata): Bump => ({ by, metadata: commandMetadataOf(m) });

describe('command runner', () => {
  let setup: PostgresStoreSetup;
  beforeEach(async () => {
    setup = await freshPostgresStore();
  });
  afterEach(() => setup.cleanup());

  it('decides again on the new state after a concurrent append, and appends once', async () => {
    const { store } = setup;
    const stream = `counter-${uuidv7()}`;
    await store.appendToStream(stream, [bump('seed')], 'no_stream');
    let calls = 0;
    const result = await runCommand(store, stream, counter, async (state) => {
      if (++calls === 1) await store.appendToStream(stream, [bump('rival')], state - 1); // a writer gets in between
      return command('me');
    }, { metadata });
    expect(calls).to.equal(2);
    expect(result.state).to.equal(3);
    expect(result.revision).to.equal(2);
    expect((await store.readStream(stream)).map((e) => (e.data as any).by)).to.deep.equal(['seed', 'rival', 'me']);
  });

  it(`answers VERSION_CONFLICT (409, current_version) when all ${MAX_ATTEMPTS} attempts meet a concurrent writer`, async () => {
    const { store } = setup;
    const stream = `counter-${uuidv7()}`;
    await store.appendToStream(stream, [bump('seed')], 'no_stream');
    let calls = 0;
    const err = await runCommand(store, stream, counter, async (state) => {
      calls++;
      await store.appendToStream(stream, [bump('rival')], state - 1); // every attempt loses
      return command('me');
    }, { metadata, what: 'counter' }).then(() => null, (e) => e);
    expect(err).to.be.instanceOf(DomainError);
    expect(err.code).to.equal('VERSION_CONFLICT');
    expect(err.status).to.equal(409);
    expect(err.details).to.deep.equal({ current_version: MAX_ATTEMPTS });
    expect(calls).to.equal(MAX_ATTEMPTS);
    expect((await store.readStream(stream)).some((e) => (e.data as any).by === 'me')).to.equal(false);
  });

  it('with If-Match, a concurrent append is VERSION_CONFLICT at once, with current_version', async () => {
    const { store } = setup;
    const stream = `counter-${uuidv7()}`;
    await store.appendToStream(stream, [bump('seed')], 'no_stream');
    let calls = 0;
    const err = await runCommand(store, stream, counter, async () => {
      calls++;
      await store.appendToStream(stream, [bump('rival')], 0);
      return command('me');
    }, { metadata, ifMatch: 0 }).then(() => null, (e) => e);
    expect(calls).to.equal(1);
    expect(err.code).to.equal('VERSION_CONFLICT');
    expect(err.details).to.deep.equal({ current_version: 1 });
  });

  it('a command id already in the stream answers the state as it is, appending nothing', async () => {
    const { store } = setup;
    const stream = `counter-${uuidv7()}`;
    const commandId = uuidv7();
    const first = await runCommand(store, stream, counter, command('me'), { metadata, commandId });
    const again = await runCommand(store, stream, counter, command('me'), { metadata, commandId });
    expect(first.events).to.have.length(1);
    expect(again.events).to.have.length(0);
    expect(again.revision).to.equal(0);
    expect(await store.readStream(stream)).to.have.length(1);
  });

  it('stamps a command no earlier than the stream\'s last event (a request that waited behind a later writer)', async () => {
    const { store } = setup;
    const stream = `counter-${uuidv7()}`;
    const arrived = new Date(Date.now() - 60_000).toISOString();
    const later = { ...metadata, occurred_at: new Date().toISOString() };
    await store.appendToStream(stream, [bump('rival', later)], 'no_stream');
    const mine = { ...metadata, occurred_at: arrived };
    const result = await runCommand(store, stream, counter, command('me', mine), { metadata: mine });
    const [, me] = await store.readStream(stream);
    expect(result.events[0].data).to.deep.equal({ by: 'me', at: later.occurred_at });
    expect(me.metadata.occurred_at).to.equal(later.occurred_at);
    // A command that arrived after the last event keeps its own time.
    const after = { ...metadata, occurred_at: new Date(Date.parse(later.occurred_at) + 1000).toISOString() };
    const next = await runCommand(store, stream, counter, command('next', after), { metadata: after });
    expect(next.events[0].data).to.deep.equal({ by: 'next', at: after.occurred_at });
  });
});
