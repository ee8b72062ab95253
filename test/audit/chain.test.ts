/**
 * The documented hash chain (docs/audit.md) against a test vector computed
 * independently (Python: json.dumps(sort_keys=True, separators=(',', ':'),
 * ensure_ascii=False) equals RFC 8785 for this data, and hashlib.sha256), on
 * the pure functions, through the PostgreSQL store, and for events stored
 * before the chain existed (migration 0060's backfill).
 */
import { expect } from 'chai';
import { Migrator, sql } from 'kysely';
import fc from 'fast-check';
import { bodyDigest, canonicalBody, canonicalBodyFromText, chainHashes, GENESIS_HASH } from '../../src/eventstore/chain.ts';
import { canonicalJson } from '../../src/eventstore/jcs.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import type { NewEvent } from '../../src/eventstore/types.ts';
import { migrations } from '../../src/db/migrations/index.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { reference } from '../eventstore/chain-contract.ts';

const STREAM = 'invoice-0190a0e2-0000-7000-8000-000000000001';
const meta = (at: string) => ({
  organization_id: '0190a0e2-0000-7000-8000-0000000000aa',
  actor: 'system',
  request_id: null,
  correlation_id: null,
  causation_id: null,
  occurred_at: at,
});
export const VECTOR: NewEvent[] = [
  {
    id: '0190a0e2-0000-7000-8000-00000000000a',
    type: 'InvoiceCreated',
    data: { total: '1200.00', number: null, lines: [{ q: 2, desc: 'Conseil é' }] },
    metadata: meta('2026-11-22T13:05:00.000Z'),
  },
  {
    id: '0190a0e2-0000-7000-8000-00000000000b',
    type: 'InvoiceFinalized',
    data: { number: 'INV-2026-000001' },
    metadata: meta('2026-11-22T13:06:00.000Z'),
  },
];
const CANONICAL_0 =
  '{"data":{"lines":[{"desc":"Conseil é","q":2}],"number":null,"total":"1200.00"},"id":"0190a0e2-0000-7000-8000-00000000000a",' +
  '"metadata":{"actor":"system","causation_id":null,"correlation_id":null,"occurred_at":"2026-11-22T13:05:00.000Z",' +
  '"organization_id":"0190a0e2-0000-7000-8000-0000000000aa","request_id":null},"type":"InvoiceCreated"}';
const BODIES = [
  '1fcec2f3b1a090bf2fd26cdfa14c3a92d8e6c426c90f5e0c6ce473afd138e278',
  '06e2ab20df0b8b7c9073811607158c4fc2fe44f0171e38b40087a51303421603',
];
const HASHES = [
  '01c9da0f9af62fb11016afeb67de34e8593553831d98adfe450796202564c81b',
  '820215ffbcc2810bbdce34e8ca29b8a6e5edb5f6af4eb1dfc0e81a9d02fc2b45',
];

describe('hash chain: the documented test vector', function () {
  let database: TestDatabase;
  before(async () => {
    database = await freshDatabase();
  });
  after(() => database?.drop());

  it('canonical JSON, body digests and chain match the independent computation', function () {
    expect(canonicalBody(VECTOR[0])).to.equal(CANONICAL_0);
    expect(VECTOR.map(bodyDigest)).to.deep.equal(BODIES);
    expect(chainHashes(GENESIS_HASH, STREAM, 0, BODIES)).to.deep.equal(HASHES);
  });

  it('the body put together from canonical texts (what audit verify hashes on PostgreSQL) is the canonical body, for any event', function () {
    expect(canonicalBodyFromText(VECTOR[0].id, VECTOR[0].type, canonicalJson(VECTOR[0].data)!, canonicalJson(VECTOR[0].metadata)!)).to.equal(CANONICAL_0);
    const event = fc.record({ id: fc.uuid(), type: fc.string({ unit: 'grapheme' }), data: fc.jsonValue({ maxDepth: 4 }), metadata: fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 })) });
    fc.assert(
      fc.property(event, (e) => canonicalBodyFromText(e.id, e.type, canonicalJson(e.data)!, canonicalJson(e.metadata)!) === canonicalBody(e)),
      { numRuns: 2000 },
    );
  });

  it('the PostgreSQL store stores exactly these hashes', async function () {
    const store = await createPostgresEventStore(database.pool);
    try {
      await store.appendToStream(STREAM, [VECTOR[0]], 'no_stream');
      await store.appendToStream(STREAM, [VECTOR[1]], 0);
      expect((await store.readStream(STREAM)).map((e) => e.hash)).to.deep.equal(HASHES);
    } finally {
      await store.close();
    }
  });
});

describe('hash chain: events stored before migration 0060 are backfilled', function () {
  this.timeout(120_000);
  let database: TestDatabase;
  before(async () => {
    database = await freshDatabase();
  });
  after(() => database?.drop());

  it('hashes every existing stream from its first event, exactly as an append would have', async function () {
    const migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => migrations } });
    const names = Object.keys(migrations).sort();
    const down = await migrator.migrateTo(names[names.indexOf('0060_es_hash_chain') - 1]);
    expect(down.error).to.equal(undefined);
    // The pre-0060 es_append (no hashes), as an old server wrote.
    const streams = Array.from({ length: 7 }, (_, i) => `legacy-${i}`);
    for (let round = 0; round < 3; round++) {
      for (const [i, s] of streams.entries()) {
        const events = Array.from({ length: 1 + ((i + round) % 3) }, (_, k) => ({
          id: crypto.randomUUID(),
          type: `Legacy${k}`,
          data: { round, k, text: `é ${i}` },
          metadata: meta(new Date(Date.UTC(2026, 0, 1 + round)).toISOString()),
        }));
        await sql`select es_append(${s}, -1, ${JSON.stringify(events)}::jsonb)`.execute(database.db);
      }
    }
    const up = await migrator.migrateToLatest();
    expect(up.error).to.equal(undefined);
    const store = await createPostgresEventStore(database.pool);
    try {
      for (const s of streams) {
        const read = await store.readStream(s);
        expect(read.length).to.be.greaterThan(2);
        expect(read.map((e) => e.hash), s).to.deep.equal(reference(read));
      }
      // New appends continue the backfilled chains.
      await store.appendToStream(streams[0], [{ ...VECTOR[0], id: crypto.randomUUID() }], 'any');
      const read = await store.readStream(streams[0]);
      expect(read.map((e) => e.hash)).to.deep.equal(reference(read));
    } finally {
      await store.close();
    }
  });
});
