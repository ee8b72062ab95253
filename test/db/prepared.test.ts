/**
 * Repeated writes prepared once per connection (src/db/prepared.ts), on a
 * real PostgreSQL: what is prepared (a parameterized write sent a second
 * time), what is not (a text seen once, reads, writes with a LIMIT, a
 * statement without parameters, a call that names its own statement), the
 * per-connection bound, and that a prepared statement follows a table
 * swapped under it (as `projections rebuild` swaps a read model's tables).
 */
import { expect } from 'chai';
import pg from 'pg';
import { preparable, prepareRepeated } from '../../src/db/prepared.ts';
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

  it('prepares writes only: reads and writes that stop at a LIMIT keep a plan made for their values', () => {
    expect(preparable('insert into invoices (id) values ($1)')).to.equal(true);
    expect(preparable('with input as (select * from unnest($1::uuid[])) insert into invoices select * from input on conflict (id) do update set total = excluded.total')).to.equal(true);
    expect(preparable('update "projection_checkpoints" set "position" = $1 where "name" = $2')).to.equal(true);
    expect(preparable('UPDATE invoices AS i SET status = $1 WHERE id = $2')).to.equal(true);
    expect(preparable('delete from invoice_lines where invoice_id = $1')).to.equal(true);
    expect(preparable('select * from invoices where organization_id = $1 and status = $2 order by created_at desc limit $3')).to.equal(false);
    expect(preparable('select updated_at from invoices where id = $1')).to.equal(false);
    expect(preparable('with due as (select id from webhook_deliveries where status = $1 order by next_attempt_at limit $2) update webhook_deliveries d set status = $3 from due where d.id = due.id')).to.equal(false);
  });

  it('prepares a parameterized write the second time this process sends it, once per connection', async () => {
    await client.query('create table if not exists counters (id int primary key, n int not null default 0)');
    const text = `insert into counters (id, n) values ($1, 1) on conflict (id) do update set n = counters.n + 1 returning n /* ${Math.random()} */`;
    expect((await client.query(text, [1])).rows).to.deep.equal([{ n: 1 }]);
    expect(await preparedTexts(client)).to.deep.equal([]);
    expect((await client.query(text, [1])).rows).to.deep.equal([{ n: 2 }]);
    expect((await client.query(text, [1])).rows).to.deep.equal([{ n: 3 }]);
    expect(await preparedTexts(client)).to.deep.equal([text]);
    // A read sent as often is not.
    for (let i = 0; i < 3; i++) await client.query('select n from counters where id = $1', [1]);
    expect(await preparedTexts(client)).to.deep.equal([text]);

    // Another connection of the same process prepares it on its first use.
    const other = prepareRepeated(new pg.Client({ connectionString: database.url }));
    await other.connect();
    try {
      expect((await other.query(text, [1])).rows).to.deep.equal([{ n: 4 }]);
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
      await client.query('create temp table if not exists scratch (n int); insert into scratch values (1)');
    }
    expect(await preparedTexts(client)).to.deep.equal(['select $1::int as c']);
  });

  it('prepares at most 200 statements per connection; the others still run', async () => {
    await client.query('create temp table bound (n int)');
    const texts = Array.from({ length: 210 }, (_, i) => `insert into bound values ($1::int * ${i}) returning n /* bound ${Math.random()} */`);
    for (const t of texts) await client.query(t, [1]);
    for (const [i, t] of texts.entries()) expect((await client.query(t, [2])).rows[0].n).to.equal(2 * i);
    expect((await preparedTexts(client)).length).to.equal(200);
  });

  it('a prepared statement writes to the table that replaced its own under the same name', async () => {
    await client.query('create table swap_me (id int primary key, label text)');
    await client.query(`insert into swap_me values (1, 'old')`);
    const text = 'update swap_me set label = label where id = $1 returning label';
    for (let i = 0; i < 3; i++) expect((await client.query(text, [1])).rows).to.deep.equal([{ label: 'old' }]);
    await client.query(`create table swap_me_new (like swap_me including all); insert into swap_me_new values (1, 'new');
      begin; alter table swap_me rename to swap_me_old; alter table swap_me_new rename to swap_me; commit; drop table swap_me_old`);
    expect((await client.query(text, [1])).rows).to.deep.equal([{ label: 'new' }]);
    expect(await preparedTexts(client)).to.include(text);
  });
});
