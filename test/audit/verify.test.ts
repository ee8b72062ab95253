/**
 * `audit verify` and `audit digest` as an operator runs them (child process,
 * real PostgreSQL), on logs tampered with directly in es_events: an edited,
 * a deleted and a reordered event, a deleted stream tail; and a clean log of
 * 100,000 events written by concurrent writers.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { recordDigests } from '../../src/audit/digest.ts';
import { verifyLog } from '../../src/audit/verify.ts';
import { recordDueDigests } from '../../src/workers/audit-digest.ts';
import { canonicalJson } from '../../src/eventstore/jcs.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import { WrongExpectedVersionError, type EventStore, type NewEvent } from '../../src/eventstore/types.ts';
import { runAdmin, type CliResult } from '../support/admin-cli.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { createAccount, insertOrganizationRow } from '../support/fixtures.ts';

function event(org: string, i: number): NewEvent {
  return {
    id: uuidv7(),
    type: i === 0 ? 'InvoiceCreated' : 'InvoiceUpdated',
    data: { i, total: `${100 + i}.00`, note: `ligne ${i} é` },
    metadata: { organization_id: org, actor: 'system', request_id: null, correlation_id: null, causation_id: null, occurred_at: new Date().toISOString() },
  };
}

interface Setup {
  database: TestDatabase;
  store: EventStore;
  org: string;
  other: string;
  streams: string[];
}

/** Two organizations, each with 4 streams of 5 events, appended interleaved. */
async function setup(): Promise<Setup> {
  const database = await freshDatabase();
  const store = await createPostgresEventStore(database.pool);
  const account = await createAccount(database.db);
  const org = await insertOrganizationRow(database.db, account);
  const other = await insertOrganizationRow(database.db, account);
  const streams: string[] = [];
  for (let s = 0; s < 8; s++) streams.push(`invoice-${uuidv7()}`);
  for (let i = 0; i < 5; i++) {
    for (const [k, s] of streams.entries()) await store.appendToStream(s, [event(k < 4 ? org : other, i)], i === 0 ? 'no_stream' : i - 1);
  }
  return { database, store, org, other, streams };
}

async function teardown(s: Setup | undefined) {
  await s?.store.close();
  await s?.database.drop();
}

function verify(s: Setup, ...args: string[]): Promise<CliResult> {
  return runAdmin(s.database.url, ['audit', 'verify', ...args]);
}

async function hashOf(s: Setup, stream: string, revision: number): Promise<string> {
  const { rows } = await sql<{ hash: string }>`select hash from es_events where stream_id = ${stream} and revision = ${revision}`.execute(s.database.db);
  return rows[0].hash;
}

describe('audit verify', function () {
  this.timeout(300_000);
  let s: Setup | undefined;
  afterEach(() => teardown(s));

  it('passes on an untouched log, for the whole log and for one organization', async function () {
    s = await setup();
    const all = await verify(s, '--json');
    expect(all.code, all.stderr).to.equal(0);
    expect(JSON.parse(all.stdout)).to.include({ ok: true, events: 40, streams: 8, breaks_count: 0, first_break: null });
    const one = await verify(s, '--org', s.org, '--json');
    expect(one.code, one.stderr).to.equal(0);
    expect(JSON.parse(one.stdout)).to.include({ ok: true, organization_id: s.org, events: 20, streams: 4 });
    const humanOut = await verify(s);
    expect(humanOut.stdout).to.match(/^OK: the whole log: 40 events in 8 streams, 0 digests verified/);
  });

  it('names exactly the event whose data was edited in PostgreSQL', async function () {
    s = await setup();
    const target = s.streams[2];
    const stored = await hashOf(s, target, 3);
    await sql`update es_events set data = jsonb_set(data::jsonb, '{total}', '"999.00"') where stream_id = ${target} and revision = 3`.execute(s.database.db);
    const r = await verify(s, '--json');
    expect(r.code).to.equal(1);
    const report = JSON.parse(r.stdout);
    expect(report.ok).to.equal(false);
    expect(report.breaks_count).to.equal(1);
    expect(report.first_break).to.include({ kind: 'event', stream: target, revision: 3, found_hash: stored });
    expect(report.first_break.expected_hash).to.match(/^[0-9a-f]{64}$/).and.not.equal(stored);
    // With --json the error is JSON too, on stderr (docs/operations.md "Admin CLI").
    const broken = `broken: ${target} revision 3: expected ${report.first_break.expected_hash}, found ${stored}`;
    expect(JSON.parse(r.stderr)).to.deep.equal({ error: { code: 'VERIFICATION_FAILED', message: broken } });
    // Human output names it too; the other organization is unaffected.
    const humanOut = await verify(s);
    expect(humanOut.code).to.equal(1);
    expect(humanOut.stderr.trim()).to.equal(`error: ${broken}`);
    expect(humanOut.stdout).to.contain(`event ${target} revision 3`).and.contain(`found    ${stored}`);
    expect((await verify(s, '--org', s.other)).code).to.equal(0);
  });

  it('hashes the stored text as it is: the stored text is the canonical one; an edit in that form, a rewrite of its form and text PostgreSQL cannot read are all caught', async function () {
    s = await setup();
    const { database, store, org, other } = s;
    // What es_append stores is the RFC 8785 text the hash covers (migration 0103), byte for byte.
    const known: NewEvent = { id: uuidv7(), type: 'InvoiceCreated', data: { z: 1, a: { y: [2.5, 'é « »'], b: null }, m: 'x"y' }, metadata: event(org, 0).metadata };
    const knownStream = `invoice-${uuidv7()}`;
    await store.appendToStream(knownStream, [known], 'no_stream');
    const { rows } = await sql<{ data: string; metadata: string }>`select data::text as data, metadata::text as metadata from es_events where stream_id = ${knownStream}`.execute(database.db);
    expect(rows).to.deep.equal([{ data: canonicalJson(known.data), metadata: canonicalJson(known.metadata) }]);

    const generic: EventStore = { ...store, readAllText: undefined }; // the path of a store that keeps no text (EventStoreDB)
    const organizations = [org, other];
    const both = async () => [await verifyLog(store, { organizations }), await verifyLog(generic, { organizations })];
    for (const r of await both()) expect(r).to.include({ ok: true, events: 41 });

    // Still canonical text, another value: the stored text no longer hashes to the stored hash.
    const edited = s.streams[2];
    await sql`update es_events set data = replace(data::text, '"total":"103.00"', '"total":"103.01"')::json where stream_id = ${edited} and revision = 3`.execute(database.db);
    expect((await sql<{ data: string }>`select data::text as data from es_events where stream_id = ${edited} and revision = 3`.execute(database.db)).rows[0].data).to.contain('"total":"103.01"');
    for (const r of await both()) {
      expect(r.breaks_count).to.equal(1);
      expect(r.first_break).to.include({ kind: 'event', stream: edited, revision: 3, found_hash: await hashOf(s, edited, 3) });
    }

    // The same JSON values printed another way (jsonb's form: members by length, spaces, here a line break too): the service
    // never stores that, so on the stored text it is a break of its own, named as such; the parsed values alone cannot show it.
    await sql`update es_events set data = replace((data::jsonb)::text, ', ', E',\n')::json, metadata = (metadata::jsonb)::json where stream_id = ${knownStream}`.execute(database.db);
    const [textAfter, valuesAfter] = await both();
    expect(textAfter.breaks_count).to.equal(2);
    expect(textAfter.breaks.map((b) => [b.stream, b.revision])).to.deep.equal([[edited, 3], [knownStream, 0]]);
    expect(textAfter.breaks[1].reason).to.match(/^the stored JSON text is not the hashed text, though it parses to the same values/);
    expect(textAfter.breaks[0].reason).to.match(/^the stored hash does not match the event/);
    expect(valuesAfter).to.include({ breaks_count: 1 });
    // The export of that event is still one JSON line per event (the line break inside the stored text is only whitespace).
    const exported = await runAdmin(database.url, ['audit', 'export', '--org', org, '--from', '2020-01-01', '--to', '2099-12-31']);
    expect(exported.code, exported.stderr).to.equal(0);
    const lines = exported.stdout.trimEnd().split('\n');
    expect(lines).to.have.length(21);
    expect(lines.map((l) => JSON.parse(l)).find((l) => l.stream === knownStream).data).to.deep.equal(known.data);

    // Text that PostgreSQL's JSON operators refuse (an escaped NUL: the column takes it, no operator reads it; the service
    // never writes one), in another organization's event: verify still reads the whole log, and reports that event.
    const nul = s.streams[6];
    await sql`update es_events set metadata = (left(metadata::text, -1) || ',"zz":"\\u0000"}')::json where stream_id = ${nul} and revision = 1`.execute(database.db);
    const [textNul, valuesNul] = await both();
    expect(textNul.breaks.map((b) => [b.stream, b.revision])).to.deep.equal([[nul, 1], [edited, 3], [knownStream, 0]]); // in log order
    expect(valuesNul.breaks.map((b) => [b.stream, b.revision])).to.deep.equal([[nul, 1], [edited, 3]]);
    const one = await verifyLog(store, { organizationId: org, organizations: [org] });
    expect(one.breaks.map((b) => [b.stream, b.revision])).to.deep.equal([[edited, 3], [knownStream, 0]]);
    // The export reads the same page as plain text: every event of the organization is still there, with its occurred_at
    // and actor read from the metadata in Node (an event without occurred_at would fall out of the date range).
    const afterNul = await runAdmin(database.url, ['audit', 'export', '--org', org, '--from', '2020-01-01', '--to', '2099-12-31']);
    expect(afterNul.code, afterNul.stderr).to.equal(0);
    const rowsAfterNul = afterNul.stdout.trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(rowsAfterNul).to.have.length(21);
    expect(rowsAfterNul.every((r) => typeof r.occurred_at === 'string' && r.actor === 'system')).to.equal(true);

    // A hash column edited to hold a line break and a comma: the CSV export quotes it, so it cannot forge a row.
    await sql`update es_events set hash = hash || E'\r\nFORGED,row' where stream_id = ${edited} and revision = 3`.execute(database.db);
    const csv = await runAdmin(database.url, ['audit', 'export', '--org', org, '--from', '2020-01-01', '--to', '2099-12-31', '--format', 'csv']);
    expect(csv.code, csv.stderr).to.equal(0);
    const forged = await hashOf(s, edited, 3);
    expect(forged).to.match(/\r\nFORGED,row$/);
    expect(csv.stdout).to.contain(`,"${forged}",`); // one quoted field (RFC 4180: a line break inside quotes is data)
  });

  it('catches an event deleted in the middle of a stream', async function () {
    s = await setup();
    const target = s.streams[1];
    await sql`delete from es_events where stream_id = ${target} and revision = 2`.execute(s.database.db);
    const r = await verify(s, '--json');
    expect(r.code).to.equal(1);
    const report = JSON.parse(r.stdout);
    expect(report.breaks_count).to.equal(1);
    expect(report.first_break).to.include({ stream: target, revision: 3, found_hash: await hashOf(s, target, 3) });
    expect(report.first_break.reason).to.match(/revision 2 missing/);
  });

  it('catches two events of a stream swapped', async function () {
    s = await setup();
    const target = s.streams[5];
    await sql`update es_events set revision = -1 where stream_id = ${target} and revision = 1`.execute(s.database.db);
    await sql`update es_events set revision = 1 where stream_id = ${target} and revision = 2`.execute(s.database.db);
    await sql`update es_events set revision = 2 where stream_id = ${target} and revision = -1`.execute(s.database.db);
    const r = await verify(s, '--json');
    expect(r.code).to.equal(1);
    const report = JSON.parse(r.stdout);
    expect(report.first_break).to.include({ stream: target });
    expect(report.breaks.map((b: any) => [b.stream, b.revision])).to.deep.equal([
      [target, 2],
      [target, 1],
    ]);
  });

  it('a digest catches what chains alone cannot: a deleted stream tail', async function () {
    s = await setup();
    const d = await runAdmin(s.database.url, ['audit', 'digest', '--org', s.org, '--json']);
    expect(d.code, d.stderr).to.equal(0);
    const [digest] = JSON.parse(d.stdout);
    expect(digest).to.include({ organization_id: s.org, stream: `audit-${s.org}`, revision: 0, streams: 4, events: 20 });
    const ok = await verify(s, '--json');
    expect(ok.code, ok.stdout).to.equal(0);
    expect(JSON.parse(ok.stdout).digests).to.equal(1);

    // Events appended after the digest do not disturb it.
    await s.store.appendToStream(s.streams[0], [event(s.org, 5)], 4);
    expect((await verify(s)).code).to.equal(0);

    await sql`delete from es_events where stream_id = ${s.streams[3]} and revision = 4`.execute(s.database.db);
    const r = await verify(s, '--org', s.org, '--json');
    expect(r.code).to.equal(1);
    const report = JSON.parse(r.stdout);
    expect(report.breaks_count).to.equal(1);
    expect(report.first_break).to.include({ kind: 'digest', stream: `audit-${s.org}`, revision: 0, found_hash: digest.root });
  });

  it('bad input: one line and exit code 2', async function () {
    s = await setup();
    for (const [args, message] of [
      [['--org', 'nope'], /^error: --org "nope" is not a UUID$/],
      [['--org', '01900000-0000-7000-8000-000000000000'], /^error: no organization 01900000-0000-7000-8000-000000000000$/],
      [['--frobnicate'], /unknown option '--frobnicate'/],
    ] as const) {
      const r = await verify(s, ...args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).to.equal(2);
      expect(r.stdout).to.equal('');
      expect(r.stderr.trim().split('\n')[0]).to.match(message);
      expect(r.stderr).not.to.match(/\n\s+at /);
    }
  });
});

describe('audit verify: concurrent writers', function () {
  this.timeout(900_000);
  let database: TestDatabase;
  let store: EventStore;
  // A database per test: each verifies exactly the log it wrote.
  beforeEach(async () => {
    database = await freshDatabase();
    store = await createPostgresEventStore(database.pool);
  });
  afterEach(async () => {
    await store?.close();
    await database?.drop();
  });

  it('100,000 events: passes, every chain intact, with a digest per organization', async function () {
    const account = await createAccount(database.db);
    const orgs = [await insertOrganizationRow(database.db, account), await insertOrganizationRow(database.db, account)];
    const streams = Array.from({ length: 400 }, () => `invoice-${uuidv7()}`);
    const writers = 16;
    const perWriter = 100_000 / writers;
    // Each writer appends batches of 1..9 events with 'any' to random shared streams: concurrent appends to one stream chain one after another.
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        let written = 0;
        let k = w;
        while (written < perWriter) {
          const n = Math.min(1 + (k % 9), perWriter - written);
          const stream = streams[(k * 7919 + w) % streams.length];
          const org = orgs[streams.indexOf(stream) % 2];
          await store.appendToStream(stream, Array.from({ length: n }, (_, i) => event(org, written + i)), 'any');
          written += n;
          k++;
        }
      }),
    );
    await recordDigests(store, orgs);
    const report = await verifyLog(store, { organizations: orgs });
    expect(report, JSON.stringify({ ...report, breaks: report.breaks.slice(0, 5) })).to.include({ ok: true, events: 100_002, streams: 402, digests: 2, breaks_count: 0 });
  });

  it('exact and any appenders racing on the same streams: every chain intact: each stream\'s revisions in log order, whichever mode appended them', async function () {
    const account = await createAccount(database.db);
    const org = await insertOrganizationRow(database.db, account);
    const streams = Array.from({ length: 10 }, () => `invoice-${uuidv7()}`);
    let conflicts = 0;
    // 8 writers on 10 streams: even ones append with an exact expected revision (read the head, retry on a
    // conflict), odd ones with 'any'; both kinds race for the same rows.
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let k = 0; k < 250; k++) {
          const stream = streams[(k * 7 + w) % streams.length];
          const events = Array.from({ length: 1 + (k % 3) }, (_, i) => event(org, k * 10 + i));
          if (w % 2 === 1) {
            await store.appendToStream(stream, events, 'any');
            continue;
          }
          for (;;) {
            const [head] = await store.readStream(stream, { direction: 'backwards', maxCount: 1 });
            try {
              await store.appendToStream(stream, events, head ? head.revision : 'no_stream');
              break;
            } catch (err) {
              if (!(err instanceof WrongExpectedVersionError)) throw err;
              conflicts++;
            }
          }
        }
      }),
    );
    const report = await verifyLog(store, { organizations: [org] });
    expect(report, JSON.stringify(report.breaks.slice(0, 3))).to.include({ ok: true, streams: 10, breaks_count: 0 });
    expect(conflicts, 'the exact appenders did race').to.be.greaterThan(0);
  });
});

describe('audit digest: the daily worker', function () {
  this.timeout(120_000);
  let s: Setup | undefined;
  afterEach(() => teardown(s));

  it('writes one digest per organization per Casablanca day, and verify checks them', async function () {
    s = await setup();
    // January 2026: Casablanca is at UTC+1 in every time zone database a supported Node carries (tzdata
    // 2026c moves it to UTC+0 from 2026-09-20; Node 20 carries 2025c, which does not know it yet).
    const day1 = new Date('2026-01-13T10:00:00.000Z');
    const first = await recordDueDigests(s.database.db, s.store, day1);
    expect(first.map((d) => d.organization_id).sort()).to.deep.equal([s.org, s.other].sort());
    expect(await recordDueDigests(s.database.db, s.store, new Date('2026-01-13T22:30:00.000Z'))).to.deep.equal([]);
    // 23:30 UTC on the 13th is already the 14th in Casablanca (UTC+1).
    const next = await recordDueDigests(s.database.db, s.store, new Date('2026-01-13T23:30:00.000Z'));
    expect(next).to.have.length(2);
    expect(next.every((d) => d.revision === 1)).to.equal(true);
    const report = await verifyLog(s.store, { organizations: [s.org, s.other] });
    expect(report).to.include({ ok: true, digests: 4 });
  });
});
