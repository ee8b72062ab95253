/**
 * `audit verify`, `audit digest`, `audit export`, `audit invoice`: the
 * auditor's tools (docs/audit.md). They read the event log through the event
 * store port, so they work the same on both adapters. Exit codes: 0 fine,
 * 1 a break was found (verify) or the command failed, 2 bad input.
 */
import type { Command } from 'commander';
import type { Kysely } from 'kysely';
import { recordDigests } from '../audit/digest.ts';
import { verifyLog, type Break, type VerifyReport } from '../audit/verify.ts';
import { Progress } from './progress.ts';
import { BadInputError, badInputExitsWith2, print, table, withJson, type Open, type OutputOptions } from './shared.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A verification that found breaks: the report is already printed; exit code 1. */
export class VerificationFailed extends Error {}

export function parseUuid(value: string | undefined, what: string): string {
  if (value === undefined) throw new BadInputError(`${what} is required`);
  if (!UUID.test(value)) throw new BadInputError(`${what} "${value}" is not a UUID`);
  return value.toLowerCase();
}

/** The organization, which must exist (in the organizations read model). */
export async function existingOrganization(db: Kysely<any>, value: string | undefined): Promise<string> {
  const id = parseUuid(value, '--org');
  const row = await db.selectFrom('organizations').select('id').where('id', '=', id).executeTakeFirst();
  if (!row) throw new BadInputError(`no organization ${id}`);
  return id;
}

export async function allOrganizations(db: Kysely<any>): Promise<string[]> {
  const rows = await db.selectFrom('organizations').select('id').orderBy('id').execute();
  return rows.map((r) => r.id as string);
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
}
