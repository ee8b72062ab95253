/**
 * Repeated writes prepared once per connection (src/db/prepared.ts), on a
 * real PostgreSQL: what is prepared (a parameterized write sent a second
 * time), what is not (a text seen once, reads, writes with a LIMIT, a
 * statement without parameters, a call that names its own statement), the
 * per-connection bound, pg's Pool.query path, and that a prepared write
 * follows search_path into a shadow schema (as `projections rebuild` and
 * `verify` write) and a table replaced under its name.
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
    expect(preparable('update invoices i set status = $1 where i.id = $2')).to.equal(true);
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

  it('also through pg\'s Pool.query (text, values, callback), on the pool\'s connection', async () => {
    const pool = new pg.Pool({ connectionString: database.url, max: 1 });
    pool.on('connect', (c) => prepareRepeated(c));
    try {
      await pool.query('create table if not exists pooled (id int primary key, n int not null default 0)');
      const text = `insert into pooled (id, n) values ($1, 1) on conflict (id) do update set n = pooled.n + 1 returning n /* ${Math.random()} */`;
      for (let i = 1; i <= 3; i++) expect((await pool.query(text, [1])).rows).to.deep.equal([{ n: i }]);
      const { rows } = await pool.query('select statement from pg_prepared_statements');
      expect(rows.map((r) => r.statement)).to.deep.equal([text]);
    } finally {
      await pool.end();
    }
  });

  it('a prepared write follows search_path into a shadow schema and back (as rebuild and verify write)', async () => {
    await client.query(`create table if not exists tally (id int primary key, n int not null); create schema if not exists shadow;
      create table if not exists shadow.tally (like public.tally including all)`);
    const text = 'insert into tally (id, n) values ($1, $2) on conflict (id) do update set n = excluded.n';
    for (let i = 0; i < 6; i++) await client.query(text, [1, i]); // past the generic-plan threshold
    expect(await preparedTexts(client)).to.include(text);
    await client.query(`begin; select set_config('search_path', 'shadow, public', true)`);
    await client.query(text, [1, 100]);
    await client.query('commit');
    await client.query(text, [1, 7]);
    const live = await client.query('select n from public.tally where id = 1');
    const shadow = await client.query('select n from shadow.tally where id = 1');
    expect({ live: live.rows[0].n, shadow: shadow.rows[0].n }).to.deep.equal({ live: 7, shadow: 100 });
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
