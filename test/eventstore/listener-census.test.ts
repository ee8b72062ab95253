import { expect } from 'chai';
import pg from 'pg';
import { ListenerCensus } from '../../src/eventstore/listener-census.ts';
import { CoalescedNotify, Notifier } from '../../src/eventstore/notifier.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import type { EventStore } from '../../src/eventstore/types.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { until } from '../support/wait.ts';
import { newEvent, streamName } from './contract.ts';

/**
 * Notifications only while another process listens (src/eventstore/listener-census.ts):
 * a process alone on its database tells its own consumers in memory, so its
 * NOTIFYs would reach nobody who needs them. A spy that LISTENs under a name
 * the census does not count sees whether anything was sent at all.
 */
describe('ListenerCensus: NOTIFY only when another process listens', () => {
  let t: TestDatabase;
  let spy: pg.Client;
  const heard: string[] = [];
  const closers: (() => Promise<unknown>)[] = [];

  beforeEach(async () => {
    t = await freshDatabase();
    heard.length = 0;
    spy = new pg.Client({ connectionString: t.url, application_name: 'test-spy' });
    await spy.connect();
    spy.on('notification', (m) => heard.push(m.payload ?? ''));
    await spy.query('listen es_appended');
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => {});
    await spy.end();
    await t.drop();
  });

  /** Everything sent before now has been heard by the spy: a marker notified afterwards arrives after it. */
  async function settled(): Promise<string[]> {
    const marker = `marker-${Date.now()}-${Math.random()}`;
    await spy.query('select pg_notify($1, $2)', ['es_appended', marker]);
    await until(() => heard.includes(marker), 5000, 'the marker notification');
    return heard.filter((p) => !p.startsWith('marker-'));
  }

  async function listener(): Promise<{ notifier: Notifier; payloads: string[] }> {
    const notifier = new Notifier(t.url, 'es_appended');
    const payloads: string[] = [];
    notifier.subscribe((p) => payloads.push(p));
    await notifier.ready();
    closers.push(() => notifier.close());
    return { notifier, payloads };
  }

  it('sends nothing while only its own listener listens, and notifies a listener that appears', async () => {
    const own = await listener();
    const census = new ListenerCensus(t.pool, 0); // read afresh on every question: no waiting out its age
    const notify = new CoalescedNotify(t.pool, 'es_appended', undefined, () => census.othersListen('es_appended', own.notifier));
    notify.signal('1');
    await notify.close();
    expect(await settled(), 'alone: nothing sent').to.deep.equal([]);

    const other = await listener(); // another process's LISTEN connection
    notify.signal('2');
    await notify.close();
    await until(() => other.payloads.includes('2'), 5000, 'the other listener to hear the append');
    expect(await settled()).to.deep.equal(['2']);
  });

  it('reads the census again as soon as a listener connects anywhere on the database, not a minute later', async () => {
    const own = await listener();
    const census = new ListenerCensus(t.pool, 60_000); // would otherwise keep its answer for a minute
    expect(await census.othersListen('es_appended', own.notifier)).to.equal(false);
    await listener(); // another process's: it says so on the census channel, and this process hears it
    await until(() => census.othersListen('es_appended', own.notifier), 5000, 'the census to count the new listener');
  });

  it('counts a listener of another channel or another database as nobody', async () => {
    const own = await listener();
    const elsewhere = await freshDatabase();
    closers.push(() => elsewhere.drop());
    const foreign = new Notifier(elsewhere.url, 'es_appended');
    await foreign.ready();
    closers.push(() => foreign.close());
    const otherChannel = new Notifier(t.url, 'projection_progress');
    await otherChannel.ready();
    closers.push(() => otherChannel.close());
    const census = new ListenerCensus(t.pool, 0);
    expect(await census.othersListen('es_appended', own.notifier)).to.equal(false);
    expect(await census.othersListen('projection_progress', own.notifier)).to.equal(true);
  });

  it('assumes everyone listens while the census cannot be read, or shows not even the sender’s own listener', async () => {
    const census = new ListenerCensus({ query: () => Promise.reject(new Error('connection terminated')) }, 0);
    expect(await census.othersListen('es_appended', null)).to.equal(true);
    // A pooler that drops application_name: our own listener is connected, yet no listener is seen.
    const blind = new ListenerCensus({ query: async () => ({ rows: [] }) }, 0);
    expect(await blind.othersListen('es_appended', { pid: 4242 })).to.equal(true);
    expect(await blind.othersListen('es_appended', null), 'nobody listening at all, our own included: nobody').to.equal(false);
  });

  it('a store alone sends no es_appended; a second store on the database (another process) is woken by one', async () => {
    const alone: EventStore = await createPostgresEventStore(t.pool, t.url);
    closers.push(() => alone.close());
    // Its own consumers are told in memory: a subscription of the same store sees the append.
    const seen: string[] = [];
    const sub = alone.subscribeToAll(await alone.headPosition(), async (events) => void seen.push(...events.map((e) => e.id)));
    closers.push(() => sub.stop());
    const first = newEvent('Census');
    await alone.appendToStream(streamName('census'), [first], 'no_stream');
    await until(() => seen.includes(first.id), 5000, 'the store’s own subscription');
    expect(await settled(), 'no NOTIFY from a process alone').to.deep.equal([]);

    const other: EventStore = await createPostgresEventStore(t.pool, t.url);
    closers.push(() => other.close());
    const seenElsewhere: string[] = [];
    const otherSub = other.subscribeToAll(await other.headPosition(), async (events) => void seenElsewhere.push(...events.map((e) => e.id)));
    closers.push(() => otherSub.stop());
    await until(async () => (await t.pool.query("select 1 from pg_stat_activity where application_name = 'invoicing:listen:es_appended'")).rowCount === 2, 5000, 'both stores listening');
    // The new listener said so on the census channel: the next append is announced, without waiting
    // out the census's second (each attempt appends a new event, until the news has arrived).
    let announced: string | null = null;
    await until(async () => {
      const next = newEvent('Census');
      await alone.appendToStream(streamName('census'), [next], 'no_stream');
      if ((await settled()).length === 0) return false;
      announced = next.id;
      return true;
    }, 5000, 'an append announced to the other process');
    await until(() => seenElsewhere.includes(announced!), 5000, 'the other store’s subscription');
  });
});
