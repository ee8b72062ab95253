/**
 * `audit verify`, `audit digest`, `audit export`, `audit invoice`: the
 * auditor's tools (docs/audit.md). They read the event log through the event
 * store port, so they work the same on both adapters. Exit codes: 0 fine,
 * 1 a break was found (verify) or the command failed, 2 bad input.
 */
import type { Command } from 'commander';
import { sql, type Kysely } from 'kysely';
import { recordDigests } from '../audit/digest.ts';
import { exportEvents, OutputClosed, type ExportFormat } from '../audit/export.ts';
import { invoiceHistory } from '../audit/invoice-history.ts';
import { verifyLog, type Break, type VerifyReport } from '../audit/verify.ts';
import { Progress } from './progress.ts';
import { BadInputError, badInputExitsWith2, CommandFailed, print, table, withJson, type Open, type OutputOptions } from './shared.ts';
import type { Database } from '../db/schema.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A verification that found breaks: the report is already printed; exit code 1. */
export class VerificationFailed extends CommandFailed {
  constructor(message: string) {
    super(message, 'VERIFICATION_FAILED');
  }
}

export function parseUuid(value: string | undefined, what: string): string {
  if (value === undefined) throw new BadInputError(`${what} is required`);
  if (!UUID.test(value)) throw new BadInputError(`${what} "${value}" is not a UUID`);
  return value.toLowerCase();
}

/** The organization, which must exist (in the organizations read model). */
export async function existingOrganization(db: Kysely<Database>, value: string | undefined): Promise<string> {
  const id = parseUuid(value, '--org');
  const row = await db.selectFrom('organizations').select('id').where('id', '=', id).executeTakeFirst();
  if (!row) throw new BadInputError(`no organization ${id}`);
  return id;
}

export async function allOrganizations(db: Kysely<Database>): Promise<string[]> {
  const rows = await db.selectFrom('organizations').select('id').orderBy('id').execute();
  return rows.map((r) => r.id as string);
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A real calendar date, YYYY-MM-DD. */
export function parseDate(value: string | undefined, what: string): string {
  if (value === undefined) throw new BadInputError(`${what} is required (YYYY-MM-DD)`);
  const m = DATE.exec(value);
  const date = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : null;
  if (!m || !date || date.toISOString().slice(0, 10) !== value) throw new BadInputError(`${what} "${value}" is not a date (YYYY-MM-DD)`);
  return value;
}

function describeBreak(b: Break): string {
  return [
    `${b.kind === 'digest' ? 'digest' : 'event'} ${b.stream} revision ${b.revision} (event ${b.event_id}, position ${b.position})`,
    `  ${b.reason}`,
    `  expected ${b.expected_hash}`,
    `  found    ${b.found_hash}`,
  ].join('\n');
}

function human(r: VerifyReport): string {
  const scope = r.organization_id ? `organization ${r.organization_id}` : 'the whole log';
  const counts = `${r.events} events in ${r.streams} streams, ${r.digests} digests`;
  if (r.ok) return `OK: ${scope}: ${counts} verified, no break.`;
  const listed = r.breaks.length < r.breaks_count ? ` (first ${r.breaks.length} listed)` : '';
  return [`BROKEN: ${scope}: ${r.breaks_count} break(s) in ${counts}${listed}. First broken:`, describeBreak(r.first_break!), '', 'All breaks:', ...r.breaks.map(describeBreak)].join('\n');
}

export function register(program: Command, open: Open): void {
  const group = badInputExitsWith2(program.command('audit').description('verify, digest and export the event log'));

  withJson(group.command('verify'))
    .description("recompute every stream's hash chain and every digest; exit code 1 on any break")
    .option('--org <id>', "only this organization's streams and digests")
    .action(async (opts: OutputOptions & { org?: string }) => {
      if (opts.org !== undefined) parseUuid(opts.org, '--org');
      const rt = await open();
      const db = rt.database.db;
      const organizationId = opts.org === undefined ? undefined : await existingOrganization(db, opts.org);
      const progress = new Progress('verified', 'events');
      const report = await verifyLog(rt.store, {
        organizationId,
        organizations: organizationId ? [organizationId] : await allOrganizations(db),
        onProgress: (n) => progress.update(n),
      });
      progress.done();
      print(opts, report, () => human(report));
      if (!report.ok) {
        const b = report.first_break!;
        throw new VerificationFailed(`broken: ${b.stream} revision ${b.revision}: expected ${b.expected_hash}, found ${b.found_hash}`);
      }
    });

  withJson(group.command('digest'))
    .description("append each organization's Merkle digest of its stream heads to audit-<organization> now")
    .option('--org <id>', 'only this organization')
    .action(async (opts: OutputOptions & { org?: string }) => {
      if (opts.org !== undefined) parseUuid(opts.org, '--org');
      const rt = await open();
      const db = rt.database.db;
      const organizations = opts.org === undefined ? await allOrganizations(db) : [await existingOrganization(db, opts.org)];
      const digests = await recordDigests(rt.store, organizations);
      print(opts, digests, () =>
        digests.length === 0
          ? 'No organization.'
          : table(['STREAM', 'REVISION', 'STREAMS', 'EVENTS', 'POSITION', 'ROOT'], digests.map((d) => [d.stream, d.revision, d.streams, d.events, d.position, d.root])),
      );
    });

  group
    .command('export')
    .description("stream an organization's events of a date range (Casablanca days, inclusive) in log order, with their hashes")
    .option('--org <id>', 'organization (required)')
    .option('--from <date>', 'first day, YYYY-MM-DD (required)')
    .option('--to <date>', 'last day, YYYY-MM-DD (required)')
    .option('--format <format>', 'jsonl or csv', 'jsonl')
    .action(async (opts: { org?: string; from?: string; to?: string; format: string }) => {
      parseUuid(opts.org, '--org');
      const from = parseDate(opts.from, '--from');
      const to = parseDate(opts.to, '--to');
      if (from > to) throw new BadInputError(`--from ${from} is after --to ${to}`);
      if (opts.format !== 'jsonl' && opts.format !== 'csv') throw new BadInputError(`--format "${opts.format}" is not jsonl or csv`);
      const rt = await open();
      const organizationId = await existingOrganization(rt.database.db, opts.org);
      const total = rt.store.kind === 'postgres' ? await estimatedEvents(rt.database.db) : null;
      const progress = new Progress('read', 'events', total);
      try {
        await exportEvents(rt.store, process.stdout, {
          organizationId,
          from,
          to,
          format: opts.format as ExportFormat,
          onProgress: (read) => progress.update(read),
        });
      } catch (err) {
        // `audit export ... | head`: the reader took what it wanted and left; done, quietly, as Unix tools are.
        if (!(err instanceof OutputClosed)) throw err;
      }
      progress.done();
    });

  withJson(group.command('invoice').argument('[id]', 'invoice id'))
    .description("an invoice's state after each event of its stream, with each hash checked")
    .action(async (id: string | undefined, opts: OutputOptions) => {
      const invoiceId = parseUuid(id, 'invoice id');
      const rt = await open();
      const steps = await invoiceHistory(rt.store, invoiceId);
      if (steps.length === 0) throw new BadInputError(`no invoice ${invoiceId}`);
      print(opts, steps, () =>
        table(
          ['REV', 'EVENT', 'OCCURRED_AT', 'ACTOR', 'STATUS', 'NUMBER', 'SUBTOTAL', 'TAX', 'TOTAL', 'DUE', 'HASH'],
          steps.map((s) => [
            s.revision,
            s.type,
            s.occurred_at,
            s.actor,
            s.state?.status,
            s.state?.invoice_number,
            s.state?.subtotal,
            s.state?.total_tax,
            s.state?.total,
            s.state?.amount_due,
            `${s.hash.slice(0, 16)}${s.hash_ok ? '' : ' BROKEN'}`,
          ]),
        ),
      );
      if (steps.some((s) => !s.hash_ok)) throw new VerificationFailed(`broken: the hash chain of invoice ${invoiceId} does not check (run audit verify)`);
    });
}

/** PostgreSQL's estimate of the log's size (for the progress bar only). */
async function estimatedEvents(db: Kysely<Database>): Promise<number | null> {
  const { rows } = await sql<{ n: number }>`select reltuples::bigint::int8 as n from pg_class where relname = 'es_events'`.execute(db);
  const n = Number(rows[0]?.n ?? 0);
  return n > 0 ? n : null;
}
