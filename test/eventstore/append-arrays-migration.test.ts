/**
 * Migration 0104 (es_append's events as parallel arrays): down restores 0103's
 * one-JSON-array function, up brings the arrays back; a stream appended by
 * both chains on unbroken (verify passes on it), the lone-event path and the
 * several-events path store the same text and hashes as each other, and
 * arrays of different lengths are refused before anything is written.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { verifyLog } from '../../src/audit/verify.ts';
import * as m0104 from '../../src/db/migrations/0104_es_append_arrays.ts';
import * as m0106 from '../../src/db/migrations/0106_es_events_inline_projectors.ts';
import { canonicalBody, chainHashes, GENESIS_HASH, sha256Hex } from '../../src/eventstore/chain.ts';
import { canonicalJson } from '../../src/eventstore/jcs.ts';
import { appendArguments, createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import type { NewEvent } from '../../src/eventstore/types.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { esAppendSignature, eventsAsOneJsonArray, eventWithData } from '../support/event-store.ts';

const organization = uuidv7();
const newEvent = (data: unknown): NewEvent => eventWithData(organization, data);
const ARRAYS = 'p_stream text, p_expected bigint, p_ids uuid[], p_types text[], p_data json[], p_metadata json[], p_bodies text[], p_applied_inline boolean';

describe('migration 0104: es_append from arrays', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  before(async () => {
    database = await freshDatabase();
    await m0106.down(database.db); // es_append as 0104 made it
  });
  after(() => database?.drop());

  it('down and up again: a stream appended through both functions chains on, and verify passes', async () => {
    expect(await esAppendSignature(database)).to.equal(ARRAYS);
    await m0104.down(database.db);
    expect(await esAppendSignature(database)).to.equal('p_stream text, p_expected bigint, p_events json, p_applied_inline boolean');
    const stream = `invoice-${uuidv7()}`;
    const first = newEvent({ z: 1, a: 'é « » "q" \\ fin' });
    await sql`select es_append(${stream}, -2, ${eventsAsOneJsonArray([first])}::json)`.execute(database.db);
    await m0104.up(database.db);
    expect(await esAppendSignature(database)).to.equal(ARRAYS);
    await m0106.up(database.db); // the schema this version's store reads

    const store = await createPostgresEventStore(database.pool);
    try {
      const lone = newEvent({ n: 2, notes: 'ligne\nsuivante', arabic: 'فاتورة' });
      const pair = [newEvent({ n: 3, emoji: '😀' }), newEvent({ n: 4, nested: { b: [1.5, null], a: true } })];
      await store.appendToStream(stream, [lone], 0); // the lone-event path
      await store.appendToStream(stream, pair, 1); // the loop
      const events = [first, lone, ...pair];
      const { rows } = await sql<{ revision: string; data: string; metadata: string; hash: string }>`
        select revision::text, data::text as data, metadata::text as metadata, hash from es_events where stream_id = ${stream} order by revision`.execute(database.db);
      expect(rows.map((r) => r.data)).to.deep.equal(events.map((e) => canonicalJson(e.data)));
      expect(rows.map((r) => r.metadata)).to.deep.equal(events.map((e) => canonicalJson(e.metadata)));
      expect(rows.map((r) => r.hash)).to.deep.equal(chainHashes(GENESIS_HASH, stream, 0, events.map((e) => sha256Hex(canonicalBody(e)))));
      expect(await verifyLog(store, { organizations: [organization] })).to.include({ ok: true, events: 4, breaks_count: 0 });
    } finally {
      await store.close();
    }
  });

  it('refuses arrays of different lengths, or none, and writes nothing', async () => {
    const stream = `invoice-${uuidv7()}`;
    const args = appendArguments(stream, [newEvent({ a: 1 }), newEvent({ b: 2 })]);
    const refused = async (ids: string[], bodies: string[]) => {
      let error: any;
      try {
        await sql`select es_append(${stream}, -1, ${ids}::uuid[], ${args.types}::text[], ${args.data}::json[], ${args.metadata}::json[], ${bodies}::text[])`.execute(database.db);
      } catch (err) {
        error = err;
      }
      expect(error?.code, String(error)).to.equal('22023');
    };
    await refused(args.ids.slice(0, 1), args.bodies);
    await refused(args.ids, args.bodies.slice(1));
    await refused([], []);
    const { rows } = await sql`select 1 from es_streams where stream_id = ${stream}`.execute(database.db);
    expect(rows).to.deep.equal([]);
  });
});
