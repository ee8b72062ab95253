/**
 * compiledOnce (src/projections/inline-statements.ts): a template compiled
 * once and filled with each call's values must give exactly what compiling
 * it with those values gives, against a real PostgreSQL too.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { compiledOnce } from '../../src/projections/inline-statements.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';

type Values = { ids: string[]; names: string[]; limit: number };
const template = (v: Values) => sql<{ id: string; name: string; tag: string }>`
  select * from unnest(${v.ids}::text[], ${v.names}::text[]) as t(id, name)
  cross join (select ${'constant'}::text as tag) c
  where t.id = any(${v.ids}::text[]) limit ${v.limit}`;

describe('compiledOnce', () => {
  let database: TestDatabase;
  before(async () => {
    database = await freshDatabase();
  });
  after(async () => {
    await database?.drop();
  });

  it('fills the text compiled once with each call\'s values, constants kept, as compiling with them would', async () => {
    const once = compiledOnce(template);
    for (const values of [
      { ids: ['a', 'b'], names: ['Alpha', 'Beta'], limit: 5 },
      { ids: ['c'], names: ["O'Brien"], limit: 1 },
      { ids: [], names: [], limit: 0 },
    ]) {
      const direct = template(values).compile(database.db); // compiled afresh, by the database's own Kysely
      const filled = once(values);
      expect(filled.sql).to.equal(direct.sql);
      expect(filled.parameters).to.deep.equal(direct.parameters);
      const { rows } = await database.db.executeQuery(filled);
      expect(rows).to.deep.equal(values.ids.slice(0, values.limit).map((id, i) => ({ id, name: values.names[i], tag: 'constant' })));
    }
  });

  it('refuses a template that computes with a value (it would be frozen at the first call)', () => {
    const mapped = compiledOnce((v: Values) => sql`select ${v.ids.map((id) => id.toUpperCase())}::text[]`);
    expect(() => mapped({ ids: ['a'], names: [], limit: 1 })).to.throw(TypeError);
    const asText = compiledOnce((v: Values) => sql`select ${sql.raw(`${v.limit}`)}`);
    expect(() => asText({ ids: [], names: [], limit: 1 })).to.throw(TypeError, 'compiledOnce');
  });
});
