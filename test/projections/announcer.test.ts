import { expect } from 'chai';
import pg from 'pg';
import { LISTENER_PREFIX } from '../../src/eventstore/listener-census.ts';
import { announcerFor, PROGRESS_CHANNEL } from '../../src/projections/announcer.ts';
import { ProjectionProgress } from '../../src/projections/progress.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { until } from '../support/wait.ts';

const pos = (n: number) => `${String(n).padStart(20, '0')}-${String(n).padStart(20, '0')}`;

/**
 * How a process tells the others where its consumers are (announcer.ts), and
 * how the others read it (progress.ts): one notification for every consumer
 * that moved in the same turn of the event loop.
 */
describe('progress announcements between processes', () => {
  let t: TestDatabase;
  let listener: pg.Client;
  const received: string[] = [];

  beforeEach(async () => {
    t = await freshDatabase();
    received.length = 0;
    // Named as another process's listener is (Notifier): the announcer sends only while one exists (listener-census.ts).
    listener = new pg.Client({ connectionString: t.url, application_name: `${LISTENER_PREFIX}${PROGRESS_CHANNEL}` });
    await listener.connect();
    listener.on('notification', (m) => received.push(m.payload ?? ''));
    await listener.query(`listen ${PROGRESS_CHANNEL}`);
  });
  afterEach(async () => {
    await listener.end();
    await t.drop();
  });

  /**
   * Everything the announcer sent has arrived: close() waits for its sends to
   * commit, and a marker notified afterwards arrives after them (PostgreSQL
   * delivers notifications in commit order).
   */
  const settle = async (announcer: ReturnType<typeof announcerFor>) => {
    await announcer.close();
    const marker = `marker ${received.length}-${Date.now()}`;
    await listener.query(`select pg_notify($1, $2)`, [PROGRESS_CHANNEL, marker]);
    await until(() => received.includes(marker), 5000, 'the marker notification');
    received.splice(received.indexOf(marker), 1);
  };

  it('sends one notification for consumers that move together, with the newest position of each', async () => {
    const announcer = announcerFor(t.db);
    expect(announcerFor(t.db), 'one per database handle').to.equal(announcer);
    announcer.signal(pos(5), 'invoices');
    announcer.signal(pos(5), 'customers');
    announcer.signal(pos(7), 'invoices');
    announcer.signal(pos(6), 'invoices'); // older: ignored
    await settle(announcer);
    expect(received).to.have.length(1);
    expect(received[0].split('\n').sort()).to.deep.equal([`customers ${pos(5)}`, `invoices ${pos(7)}`]);
    announcer.signal(pos(9), 'webhooks');
    await settle(announcer);
    expect(received[1]).to.equal(`webhooks ${pos(9)}`);
  });

  it('sends nothing for consumers that report to this process’s own waiters, unless another process listens', async () => {
    await listener.end(); // no other process: only this process's own progress listener below
    listener = new pg.Client({ connectionString: t.url, application_name: 'test-spy' }); // hears, but is nobody
    await listener.connect();
    listener.on('notification', (m) => received.push(m.payload ?? ''));
    await listener.query(`listen ${PROGRESS_CHANNEL}`);
    const own = new ProjectionProgress(t.db, t.url, ['invoices']);
    await own.start();
    try {
      const announcer = announcerFor(t.db, { name: 'invoices', listener: own.listener });
      announcer.signal(pos(3), 'invoices');
      await settle(announcer);
      expect(received, 'only this process listens: nothing sent').to.deep.equal([]);
      // A consumer that does not report to the process's waiters is announced to them too.
      announcer.signal(pos(4), 'elsewhere');
      await settle(announcer);
      expect(received).to.deep.equal([`elsewhere ${pos(4)}`]);
      // Another process's waiters appear: announced again.
      const other = new ProjectionProgress(t.db, t.url, ['invoices']);
      await other.start();
      try {
        const waiting = other.waitFor(pos(5), 5000);
        await until(async () => {
          announcer.signal(pos(5), 'invoices');
          await settle(announcer);
          return received.some((p) => p === `invoices ${pos(5)}`);
        }, 5000, 'the announcement to the other process');
        expect(await waiting).to.equal(true);
      } finally {
        await other.close();
      }
    } finally {
      await own.close();
    }
  });

  it('is read by another process’s waiters, every line of it', async () => {
    const elsewhere = new ProjectionProgress(t.db, t.url, ['invoices', 'customers']);
    await elsewhere.start();
    try {
      const waiting = elsewhere.waitFor(pos(7), 5000);
      await listener.query(`select pg_notify($1, $2)`, [PROGRESS_CHANNEL, `invoices ${pos(8)}\ncustomers ${pos(7)}`]);
      expect(await waiting).to.equal(true);
      expect(elsewhere.position('invoices')).to.equal(pos(8));
      expect(elsewhere.position('customers')).to.equal(pos(7));
    } finally {
      await elsewhere.close();
    }
  });
});
