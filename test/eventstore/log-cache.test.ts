import { expect } from 'chai';
import { LogCache } from '../../src/eventstore/log-cache.ts';
import type { RecordedEvent } from '../../src/eventstore/types.ts';

const pos = (n: number) => `${String(n).padStart(20, '0')}-${String(n).padStart(20, '0')}`;

/** An in-memory log that grows, with a reader that counts its queries. */
function memoryLog() {
  const log: RecordedEvent[] = [];
  let queries = 0;
  const append = (n: number) => {
    for (let i = 0; i < n; i++) {
      const k = log.length + 1;
      log.push({ id: `e${k}`, stream: 's', revision: k - 1, type: 'T', data: { k }, metadata: {} as any, position: pos(k), created_at: new Date() });
    }
  };
  const read = async (after: string | null, limit: number) => {
    queries++;
    await new Promise((r) => setTimeout(r, 1));
    return log.filter((e) => after === null || e.position > after).slice(0, limit);
  };
  return { log, append, read, queries: () => queries };
}

describe('LogCache (shared tail of the log)', () => {
  it('answers a prefix of what the store would (never empty while events follow), for any reader position', async () => {
    const m = memoryLog();
    const cache = new LogCache(m.read);
    m.append(50);
    for (const after of [null, pos(1), pos(10), pos(49), pos(50), pos(3)]) {
      for (const limit of [1, 7, 500]) {
        const got = (await cache.readAll(after, limit)).map((e) => e.id);
        const direct = (await m.read(after, limit)).map((e) => e.id);
        expect(direct.slice(0, got.length), `after ${after} limit ${limit}`).to.deep.equal(got);
        expect(got.length > 0, `after ${after} limit ${limit}`).to.equal(direct.length > 0);
      }
    }
  });

  it('serves several consumers at the tail with one query per new batch', async () => {
    const m = memoryLog();
    const cache = new LogCache(m.read);
    m.append(10);
    const consumers = Array.from({ length: 6 }, () => ({ at: null as string | null, seen: [] as string[] }));
    const step = () =>
      Promise.all(
        consumers.map(async (c) => {
          const got = await cache.readAll(c.at, 500);
          if (got.length) c.at = got[got.length - 1].position;
          c.seen.push(...got.map((e) => e.id));
        }),
      );
    await step();
    const before = m.queries();
    for (let round = 0; round < 20; round++) {
      m.append(3);
      await step();
    }
    // One query per round for all six (none would be 120).
    expect(m.queries() - before).to.equal(20);
    for (const c of consumers) expect(c.seen).to.deep.equal(m.log.map((e) => e.id));
  });

  it('a consumer far behind is served by the store without moving the shared window', async () => {
    const m = memoryLog();
    const cache = new LogCache(m.read);
    m.append(30_000); // more than the window holds
    const head = await cache.readAll(pos(29_990), 500);
    expect(head.map((e) => e.id)).to.deep.equal(m.log.slice(29_990).map((e) => e.id));
    const old = await cache.readAll(null, 5);
    expect(old.map((e) => e.id)).to.deep.equal(['e1', 'e2', 'e3', 'e4', 'e5']);
    const before = m.queries();
    expect(await cache.readAll(pos(29_995), 500)).to.have.length(5); // still cached
    expect(m.queries()).to.equal(before);
  });

  it('random interleavings of consumers never skip or repeat an event', async () => {
    const m = memoryLog();
    const cache = new LogCache(m.read);
    const consumers = Array.from({ length: 5 }, () => ({ at: null as string | null, seen: [] as string[] }));
    let seed = 7;
    const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let round = 0; round < 300; round++) {
      if (rand(3) === 0) m.append(rand(40));
      const c = consumers[rand(consumers.length)];
      const got = await cache.readAll(c.at, 1 + rand(60));
      if (got.length) c.at = got[got.length - 1].position;
      c.seen.push(...got.map((e) => e.id));
    }
    for (const c of consumers) expect(c.seen).to.deep.equal(m.log.slice(0, c.seen.length).map((e) => e.id));
  });
});
