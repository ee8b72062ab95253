/**
 * Repeated statements prepared once per connection (src/db/prepared.ts), on
 * a real PostgreSQL: what is prepared (a parameterized text sent a second
 * time), what is not (a text seen once, a statement without parameters,
 * a call that names its own statement), the per-connection bound, and that
 * a prepared statement follows a table swapped under it (as
 * `projections rebuild` swaps a read model's tables).
 */
import { expect } from 'chai';
import pg from 'pg';
import { prepareRepeated } from '../../src/db/prepared.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';

async function preparedTexts(client: pg.Client): Promise<string[]> {
  // Asked through the unpatched path: no parameters.
  const { rows } = await client.query('select statement from pg_prepared_statements order by statement');
  return rows.map((r) => r.statement);
}

describe('prepared statements for repeated SQL', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  let client: pg.Client;
  before(async () => {
    database = await freshDatabase();
  });
  beforeEach(async () => {
    client = prepareRepeated(new pg.Client({ connectionString: database.url }));
    await client.connect();
  });
  afterEach(() => client.end());
  after(() => database?.drop());

  it('prepares a parameterized text the second time this process sends it, once per connection', async () => {
    const text = `select $1::int + 1 as n /* ${Math.random()} */`;
    expect((await client.query(text, [1])).rows).to.deep.equal([{ n: 2 }]);
    expect(await preparedTexts(client)).to.deep.equal([]);
    expect((await client.query(text, [2])).rows).to.deep.equal([{ n: 3 }]);
    expect((await client.query(text, [3])).rows).to.deep.equal([{ n: 4 }]);
    expect(await preparedTexts(client)).to.deep.equal([text]);

    // Another connection of the same process prepares it on its first use.
    const other = prepareRepeated(new pg.Client({ connectionString: database.url }));
    await other.connect();
    try {
      expect((await other.query(text, [4])).rows).to.deep.equal([{ n: 5 }]);
      expect(await preparedTexts(other)).to.deep.equal([text]);
    } finally {
      await other.end();
    }
  });

  it('leaves alone statements without parameters (several in one message stay possible) and self-named ones', async () => {
    for (let i = 0; i < 3; i++) {
      const results = (await client.query('select 1 as a; select 2 as b')) as unknown as pg.QueryResult[];
      expect(results.map((r) => r.rows[0])).to.deep.equal([{ a: 1 }, { b: 2 }]);
      await client.query({ name: 'mine', text: 'select $1::int as c', values: [i] });
    }
    expect(await preparedTexts(client)).to.deep.equal(['select $1::int as c']);
  });

  it('prepares at most 200 statements per connection; the others still run', async () => {
    const texts = Array.from({ length: 210 }, (_, i) => `select $1::int * ${i} as n /* bound ${Math.random()} */`);
    for (const t of texts) await client.query(t, [1]);
    for (const [i, t] of texts.entries()) expect((await client.query(t, [2])).rows[0].n).to.equal(2 * i);
    expect((await preparedTexts(client)).length).to.equal(200);
  });

  it('a prepared statement reads the table that replaced its own under the same name', async () => {
    await client.query('create table swap_me (id int primary key, label text)');
    await client.query(`insert into swap_me values (1, 'old')`);
    const text = 'select label from swap_me where id = $1';
    for (let i = 0; i < 3; i++) expect((await client.query(text, [1])).rows).to.deep.equal([{ label: 'old' }]);
    await client.query(`create table swap_me_new (like swap_me including all); insert into swap_me_new values (1, 'new');
      begin; alter table swap_me rename to swap_me_old; alter table swap_me_new rename to swap_me; commit; drop table swap_me_old`);
    expect((await client.query(text, [1])).rows).to.deep.equal([{ label: 'new' }]);
    expect(await preparedTexts(client)).to.include(text);
  });
});
