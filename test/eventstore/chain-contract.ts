/**
 * The hash chain part of the event store contract (docs/audit.md "The hash
 * chain"): run by runEventStoreContract for every adapter. The expected hashes
 * come from the few lines an auditor would write (reference() below: RFC 8785
 * via the `canonicalize` package, node:crypto), not from src/eventstore/chain.ts,
 * so an adapter that drifts from the documented encoding fails here.
 */
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import canonicalize from 'canonicalize';
import { v4 as uuid } from 'uuid';
import type { EventStore, NewEvent, RecordedEvent } from '../../src/eventstore/types.ts';

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** The documented chain, recomputed from what the store returns. */
export function reference(events: Pick<RecordedEvent, 'id' | 'stream' | 'revision' | 'type' | 'data' | 'metadata'>[]): string[] {
  let prev = '0'.repeat(64);
  return events.map((e) => {
    const body = sha256(canonicalize({ id: e.id, type: e.type, data: e.data, metadata: e.metadata })!);
    prev = sha256(`${prev}\n${e.stream}\n${e.revision}\n${body}`);
    return prev;
  });
}

function chainEvent(i: number): NewEvent {
  return {
    id: uuid(),
    type: `Chained${i % 3}`,
    // Keys out of order, non-ASCII text, numbers and nesting: the canonical form must not depend on them.
    data: { z: i, a: `ligne ${i} — é 漢字 "q"`, amount: '12.50', nested: { b: [1, 2.5, null, true], a: {} } },
    metadata: {
      occurred_at: '2026-11-22T13:05:00.000Z',
      actor: 'system',
      organization_id: uuid(),
      request_id: null,
      correlation_id: null,
      causation_id: null,
    },
  };
}

export function describeHashChain(getStore: () => EventStore, category: string): void {
  describe('hash chain', function () {
    it('chains every event of a stream to the previous one, across batches, as documented', async function () {
      const store = getStore();
      const s = `${category}-${uuid()}`;
      await store.appendToStream(s, [chainEvent(0)], 'no_stream');
      await store.appendToStream(s, [chainEvent(1), chainEvent(2), chainEvent(3)], 0);
      await store.appendToStream(s, [chainEvent(4)], 'any');
      const read = await store.readStream(s);
      expect(read.map((e) => e.hash)).to.deep.equal(reference(read));
      expect(new Set(read.map((e) => e.hash)).size).to.equal(5);
      const backwards = await store.readStream(s, { direction: 'backwards' });
      expect(backwards.map((e) => e.hash)).to.deep.equal(read.map((e) => e.hash).reverse());
    });

    it('readAll carries the same hashes as readStream', async function () {
      const store = getStore();
      const start = await store.headPosition();
      const s = `${category}-${uuid()}`;
      await store.appendToStream(s, [chainEvent(0), chainEvent(1)], 'no_stream');
      const viaAll: RecordedEvent[] = [];
      let cursor = start;
      for (;;) {
        const page = await store.readAll(cursor, 500);
        if (page.length === 0) break;
        viaAll.push(...page.filter((e) => e.stream === s));
        cursor = page[page.length - 1].position;
      }
      expect(viaAll.map((e) => e.hash)).to.deep.equal((await store.readStream(s)).map((e) => e.hash));
    });

    it('the same events in two streams chain differently (the stream name is hashed)', async function () {
      const store = getStore();
      const e = chainEvent(7);
      const [a, b] = [`${category}-${uuid()}`, `${category}-${uuid()}`];
      await store.appendToStream(a, [e], 'no_stream');
      await store.appendToStream(b, [{ ...e, id: e.id.replace(/^.{8}/, '00000000') }], 'no_stream');
      const [ra] = await store.readStream(a);
      const [rb] = await store.readStream(b);
      expect(ra.hash).to.not.equal(rb.hash);
      expect([ra.hash, rb.hash]).to.deep.equal([...reference([ra]), ...reference([rb])]);
    });

    it('stays one unbroken chain under 30 concurrent appenders with "any"', async function () {
      this.timeout(120_000);
      const store = getStore();
      const s = `${category}-${uuid()}`;
      const results = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => store.appendToStream(s, [chainEvent(i), chainEvent(i + 100)], 'any')));
      expect(results.filter((r) => r.status === 'rejected')).to.deep.equal([]);
      const read = await store.readStream(s);
      expect(read.map((e) => e.revision)).to.deep.equal(Array.from({ length: 60 }, (_, i) => i));
      expect(read.map((e) => e.hash)).to.deep.equal(reference(read));
    });

    it('a retried append (same event ids) keeps the chain as it was', async function () {
      const store = getStore();
      const s = `${category}-${uuid()}`;
      const batch = [chainEvent(0), chainEvent(1)];
      await store.appendToStream(s, batch, 'no_stream');
      const before = (await store.readStream(s)).map((e) => e.hash);
      await store.appendToStream(s, batch, 'no_stream');
      const read = await store.readStream(s);
      expect(read.map((e) => e.hash)).to.deep.equal(before);
      expect(read.map((e) => e.hash)).to.deep.equal(reference(read));
    });
  });
}
