/**
 * Migration 0103 (es_events.data and metadata as `json` holding the RFC 8785
 * text the hash covers): events stored before it, as `jsonb`, are rewritten
 * into their canonical text with their hashes still valid (verify passes on
 * the stored text's fast path), es_append stores what it is given byte for
 * byte, and down brings back the `jsonb` columns and function.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { verifyLog } from '../../src/audit/verify.ts';
import * as m0103 from '../../src/db/migrations/0103_es_events_json_text.ts';
import * as m0104 from '../../src/db/migrations/0104_es_append_arrays.ts';
import * as m0106 from '../../src/db/migrations/0106_es_events_inline_projectors.ts';
import { canonicalJson } from '../../src/eventstore/jcs.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import type { NewEvent } from '../../src/eventstore/types.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { esAppendSignature, eventsAsOneJsonArray, eventWithData } from '../support/event-store.ts';

async function columnTypes(database: TestDatabase): Promise<Record<string, string>> {
  const { rows } = await sql<{ column_name: string; data_type: string }>`
    select column_name, data_type from information_schema.columns where table_name = 'es_events' and column_name in ('data', 'metadata')`.execute(database.db);
  return Object.fromEntries(rows.map((r) => [r.column_name, r.data_type]));
}

const organization = uuidv7();
const newEvent = (data: unknown): NewEvent => eventWithData(organization, data);

describe('migration 0103: es_events as the hashed text', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  before(async () => {
    database = await freshDatabase();
  });
  after(() => database?.drop());

  it('rewrites the events stored as jsonb into their canonical text, hashes intact; down and up again', async () => {
    expect(await columnTypes(database)).to.deep.equal({ data: 'json', metadata: 'json' });
    await m0106.down(database.db);
    await m0104.down(database.db); // es_append as 0103 made it
    expect(await esAppendSignature(database)).to.equal('p_stream text, p_expected bigint, p_events json, p_applied_inline boolean');
    await m0103.down(database.db);
    expect(await columnTypes(database)).to.deep.equal({ data: 'jsonb', metadata: 'jsonb' });
    expect(await esAppendSignature(database)).to.equal('p_stream text, p_expected bigint, p_events jsonb, p_applied_inline boolean');

    // Events appended as before 0103 (the same payload, into jsonb): members reordered, spaces added.
    const before = [
      newEvent({ zeta: 1, alpha: { b: [2.5, 'é « » "q"', null], a: true }, amount: '10.50', long_key_name: 0 }),
      newEvent({ notes: 'ligne\nsuivante \\ fin', arabic: 'فاتورة', emoji: '😀', n: 12345678901234 }),
    ];
    const stream = `invoice-${uuidv7()}`;
    await sql`select es_append(${stream}, -2, ${eventsAsOneJsonArray(before)}::jsonb)`.execute(database.db);
    const texts = async () =>
      (await sql<{ data: string; metadata: string }>`select data::text as data, metadata::text as metadata from es_events where stream_id = ${stream} order by revision`.execute(database.db)).rows;
    expect((await texts())[0].data).to.not.equal(canonicalJson(before[0].data)); // jsonb's printing

    await m0103.up(database.db);
    await m0104.up(database.db);
    await m0106.up(database.db);
    expect(await columnTypes(database)).to.deep.equal({ data: 'json', metadata: 'json' });
    expect(await texts()).to.deep.equal(before.map((e) => ({ data: canonicalJson(e.data), metadata: canonicalJson(e.metadata) })));

    // The store appends after them; the chain runs on, and verify finds every hash in the stored text.
    const store = await createPostgresEventStore(database.pool);
    try {
      const after = newEvent({ b: 2, a: 1 });
      await store.appendToStream(stream, [after], 1);
      const stored = await texts();
      expect(stored[2]).to.deep.equal({ data: '{"a":1,"b":2}', metadata: canonicalJson(after.metadata) });
      const report = await verifyLog(store, { organizations: [organization] });
      expect(report).to.include({ ok: true, events: 3, breaks_count: 0 });
      expect((await store.readStream(stream)).map((e) => e.data)).to.deep.equal([...before, after].map((e) => JSON.parse(JSON.stringify(e.data))));
    } finally {
      await store.close();
    }
  });
  it('rewrites a log longer than one batch, and leaves a value JavaScript cannot print canonically as stored', async () => {
    await m0106.down(database.db);
    await m0104.down(database.db);
    await m0103.down(database.db);
    // 4,500 events in jsonb (the batch is 2,000), and one whose number JavaScript reads as Infinity.
    await sql`insert into es_events (stream_id, revision, event_id, type, data, metadata, hash)
      select 'bulk-' || i, 0, gen_random_uuid(), 'T', jsonb_build_object('zeta', i, 'alpha', 'x'), jsonb_build_object('organization_id', 'o'), md5(i::text)
      from generate_series(1, 4500) i`.execute(database.db);
    await sql`insert into es_events (stream_id, revision, event_id, type, data, metadata, hash) values ('huge-1', 0, gen_random_uuid(), 'T', '{"n": 1e400}', '{}', 'x')`.execute(database.db);
    const hugeText = async () => (await sql<{ data: string }>`select data::text as data from es_events where stream_id = 'huge-1'`.execute(database.db)).rows[0].data;
    const hugeBefore = await hugeText(); // as jsonb prints it
    await m0103.up(database.db);
    const { rows } = await sql<{ n: string; canonical: string }>`
      select count(*)::text as n, count(*) filter (where data::text = '{"alpha":"x","zeta":' || substr(stream_id, 6) || '}' and metadata::text = '{"organization_id":"o"}')::text as canonical
      from es_events where stream_id like 'bulk-%'`.execute(database.db);
    expect(rows).to.deep.equal([{ n: '4500', canonical: '4500' }]);
    expect(await hugeText()).to.equal(hugeBefore); // JSON.parse reads Infinity, which RFC 8785 cannot print: left as stored
    await m0104.up(database.db);
  });
});
