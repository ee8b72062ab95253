/**
 * Migration 0100 (es_events.applied_inline, es_append's fourth argument):
 * down restores the three-argument function and drops the column, up brings
 * both back, and a three-argument call (the autocommit append) still marks
 * nothing while a call with `true` marks its events.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import * as m0100 from '../../src/db/migrations/0100_es_events_applied_inline.ts';
import * as m0103 from '../../src/db/migrations/0103_es_events_json_text.ts';
import * as m0104 from '../../src/db/migrations/0104_es_append_arrays.ts';
import * as m0106 from '../../src/db/migrations/0106_es_events_inline_projectors.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { esAppendSignature } from '../support/event-store.ts';

const event = (id: string) => JSON.stringify([{ body: '00', id, type: 'Test', data: {}, metadata: {} }]);

describe('migration 0100: es_events.applied_inline', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  before(async () => {
    database = await freshDatabase();
    await m0106.down(database.db);
    await m0104.down(database.db);
    await m0103.down(database.db); // back to the schema 0100 left (es_append's events as jsonb)
  });
  after(() => database?.drop());

  it('down and up again; the flag is set only by a call that says so', async () => {
    expect(await esAppendSignature(database)).to.equal('p_stream text, p_expected bigint, p_events jsonb, p_applied_inline boolean');
    await m0100.down(database.db);
    expect(await esAppendSignature(database)).to.equal('p_stream text, p_expected bigint, p_events jsonb');
    const { rows: columns } = await sql`select 1 from information_schema.columns where table_name = 'es_events' and column_name = 'applied_inline'`.execute(database.db);
    expect(columns).to.deep.equal([]);
    await sql`select es_append('test-a', -1, ${event('01a2178e-0000-7000-8000-000000000001')}::jsonb)`.execute(database.db);
    await m0100.up(database.db);
    expect(await esAppendSignature(database)).to.equal('p_stream text, p_expected bigint, p_events jsonb, p_applied_inline boolean');
    await sql`select es_append('test-b', -1, ${event('01a2178e-0000-7000-8000-000000000002')}::jsonb)`.execute(database.db);
    await sql`select es_append('test-c', -1, ${event('01a2178e-0000-7000-8000-000000000003')}::jsonb, true)`.execute(database.db);
    const { rows } = await sql<{ stream_id: string; applied_inline: boolean }>`
      select stream_id, applied_inline from es_events where stream_id like 'test-%' order by stream_id`.execute(database.db);
    expect(rows).to.deep.equal([
      { stream_id: 'test-a', applied_inline: false },
      { stream_id: 'test-b', applied_inline: false },
      { stream_id: 'test-c', applied_inline: true },
    ]);
  });
});
