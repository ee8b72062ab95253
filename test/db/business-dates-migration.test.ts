/**
 * Migration 0108 (the analysts' views' calendar from business_utc_offsets):
 * down gives the views back PostgreSQL's own time zone data, up again the
 * service's; the offsets are rewritten only by a newer release of the time
 * zone data, never by the same or an older one.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import * as m0108 from '../../src/db/migrations/0108_business_dates.ts';
import { TZDATA, writeBusinessOffsets } from '../../src/db/business-offsets.ts';
import { businessUtcOffsets } from '../../src/shared/business-time.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';

describe('migration 0108: the views\' calendar from the service\'s time zone data', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  before(async () => {
    database = await freshDatabase();
  });
  after(() => database?.drop());

  const definition = async (view: string) => (await sql<{ d: string }>`select pg_get_viewdef(${view}::regclass) as d`.execute(database.db)).rows[0].d;
  const offsets = async () => (await sql<{ n: number; xmin: string }>`select count(*)::int as n, max(xmin::text) as xmin from business_utc_offsets`.execute(database.db)).rows[0];

  it('down and up again; the offsets as Node has them, written once', async () => {
    expect(await definition('receivables_aging')).to.contain('business_today()');
    expect(await definition('vat_by_period')).to.contain('business_date(');
    const written = await offsets();
    expect(written.n).to.equal(businessUtcOffsets().length);
    // Written again only by newer data: the same release leaves the rows as they are, and so does older data
    // (a process of an older Node beside the others); newer data replaces them.
    await writeBusinessOffsets(database.db);
    expect(await offsets()).to.deep.equal(written);
    await writeBusinessOffsets(database.db, '2000a');
    expect(await offsets()).to.deep.equal(written);
    await writeBusinessOffsets(database.db, '9999z');
    expect((await offsets()).xmin).to.not.equal(written.xmin);
    expect((await sql<{ tzdata: string }>`select distinct tzdata from business_utc_offsets`.execute(database.db)).rows).to.deep.equal([{ tzdata: '9999z' }]);

    await m0108.down(database.db);
    expect(await definition('receivables_aging')).to.not.contain('business_today');
    expect(await definition('vat_by_period')).to.contain('Africa/Casablanca');
    expect((await sql<{ n: number }>`select count(*)::int as n from pg_class where relname = 'business_utc_offsets'`.execute(database.db)).rows[0].n).to.equal(0);

    await m0108.up(database.db);
    expect((await offsets()).n).to.equal(0); // until the next start writes them
    await writeBusinessOffsets(database.db);
    expect((await sql<{ tzdata: string }>`select distinct tzdata from business_utc_offsets`.execute(database.db)).rows).to.deep.equal([{ tzdata: TZDATA }]);
    expect((await offsets()).n).to.equal(businessUtcOffsets().length);
    expect(await definition('receivables_aging')).to.contain('business_today()');
  });
});
