/**
 * Migration 0106 (es_events.inline_projectors, es_append's last argument):
 * down and up again; the previous version's call (eight arguments, no mark)
 * still appends beside it, its events marked 0; the store's own inline
 * appends carry the mark their projections give.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import * as m0106 from '../../src/db/migrations/0106_es_events_inline_projectors.ts';
import { appendArguments, createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import type { NewEvent } from '../../src/eventstore/types.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { esAppendSignature, eventWithData } from '../support/event-store.ts';

const organization = uuidv7();
const newEvent = (data: unknown): NewEvent => eventWithData(organization, data);
const PREVIOUS = 'p_stream text, p_expected bigint, p_ids uuid[], p_types text[], p_data json[], p_metadata json[], p_bodies text[], p_applied_inline boolean';

describe('migration 0106: es_events.inline_projectors', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  before(async () => {
    database = await freshDatabase();
  });
  after(() => database?.drop());

  /** es_append as the previous version calls it: eight arguments, the last one applied_inline. */
  const previousAppend = (stream: string, event: NewEvent) => {
    const a = appendArguments(stream, [event]);
    return sql`select es_append(${stream}, -1, ${a.ids}::uuid[], ${a.types}::text[], ${a.data}::json[], ${a.metadata}::json[], ${a.bodies}::text[], true)`.execute(database.db);
  };
  const marks = async (streams: string[]) =>
    (await sql<{ stream_id: string; applied_inline: boolean; inline_projectors: number }>`
      select stream_id, applied_inline, inline_projectors from es_events where stream_id = any(${streams}::text[]) order by global_position`.execute(database.db)).rows;

  it('down and up again; the previous version appends beside it, unmarked; a mark is stored as given', async () => {
    expect(await esAppendSignature(database)).to.equal(`${PREVIOUS}, p_inline_projectors smallint`);
    await m0106.down(database.db);
    expect(await esAppendSignature(database)).to.equal(PREVIOUS);
    const [old, beside, marked] = [`test-${uuidv7()}`, `test-${uuidv7()}`, `test-${uuidv7()}`];
    await previousAppend(old, newEvent({ n: 1 }));
    await m0106.up(database.db);
    expect(await esAppendSignature(database)).to.equal(`${PREVIOUS}, p_inline_projectors smallint`);
    await previousAppend(beside, newEvent({ n: 2 }));
    const a = appendArguments(marked, [newEvent({ n: 3 }), newEvent({ n: 4 })]);
    await sql`select es_append(${marked}, -1, ${a.ids}::uuid[], ${a.types}::text[], ${a.data}::json[], ${a.metadata}::json[], ${a.bodies}::text[], true, 5::smallint)`.execute(database.db);
    expect(await marks([old, beside, marked])).to.deep.equal([
      { stream_id: old, applied_inline: true, inline_projectors: 0 },
      { stream_id: beside, applied_inline: true, inline_projectors: 0 },
      { stream_id: marked, applied_inline: true, inline_projectors: 5 },
      { stream_id: marked, applied_inline: true, inline_projectors: 5 },
    ]);
  });

  it("the store's inline append marks its events with its projections' mark, and reads it back", async () => {
    const store = await createPostgresEventStore(database.pool, undefined, {
      inline: { handles: (type) => type === 'Projected', mark: 9, opening: () => null, async apply() {}, statements: () => ({ statements: [], committed() {}, refused() {} }) },
    });
    try {
      const [projected, other] = [`test-${uuidv7()}`, `test-${uuidv7()}`];
      await store.appendToStream(projected, [{ ...newEvent({ n: 5 }), type: 'Projected' }], 'no_stream');
      await store.appendToStream(other, [newEvent({ n: 6 })], 'no_stream');
      expect(await marks([projected, other])).to.deep.equal([
        { stream_id: projected, applied_inline: true, inline_projectors: 9 },
        { stream_id: other, applied_inline: false, inline_projectors: 0 },
      ]);
      const read = (await store.readAll(null, 1000)).filter((e) => e.stream === projected || e.stream === other);
      expect(read.map((e) => e.inlineProjectors)).to.deep.equal([9, 0]);
    } finally {
      await store.close();
    }
  });
});
