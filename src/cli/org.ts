/**
 * `org create`, `org update`, `org show` (docs/api-decisions.md "Operator interface"). The same
 * command handlers as the API (same rules, ICE reservations, entity cap), run
 * as the operator ('system'). A command returns once the read model shows
 * its change, so `key create --org ID` can follow at once, server running or not.
 */
import type { Command } from 'commander';
import { v7 as uuidv7 } from 'uuid';
import { getAccount } from '../accounts/accounts.ts';
import { PLAN_LIMITS } from '../accounts/plans.ts';
import { systemMetadata } from '../commands/command.ts';
import type { OrganizationPatch } from '../commands/organization/commands.ts';
import {
  changeOrganizationApiAccess,
  provisionOrganization,
  updateOrganizationProfile,
  type OrganizationResult,
  type OrganizationWrite,
} from '../commands/organization/handler.ts';
import { catchUpProjections } from '../projections/catch-up.ts';
import { findOrganization } from '../queries/organizations.ts';
import type { Organization } from '../commands/organization/events.ts';
import type { Runtime } from '../runtime.ts';
import { fields, print, UsageError, withJson, type Open, type OutputOptions } from './shared.ts';

interface ProfileOptions {
  legalName?: string;
  ice?: string;
  rc?: string;
  if?: string;
  vat?: string;
  phone?: string;
  email?: string;
  website?: string;
  street?: string;
  city?: string;
  postalCode?: string;
  country?: string;
}

function withProfile(cmd: Command): Command {
  return cmd
    .option('--legal-name <name>', 'registered name')
    .option('--ice <ice>', 'ICE, 15 digits (unique on the platform)')
    .option('--rc <rc>', 'registre de commerce')
    .option('--if <number>', 'identifiant fiscal')
    .option('--vat <number>', 'VAT number')
    .option('--phone <phone>', 'phone')
    .option('--email <email>', 'email')
    .option('--website <url>', 'http(s) URL')
    .option('--street <street>', 'billing address: street')
    .option('--city <city>', 'billing address: city')
    .option('--postal-code <code>', 'billing address: postal code')
    .option('--country <code>', 'billing address: ISO country code (default MA)');
}

/** The flags given, as a profile patch ('' clears an optional field). */
function profileOf(o: ProfileOptions): OrganizationPatch {
  const patch: OrganizationPatch = {
    legal_name: o.legalName, ice: o.ice, rc: o.rc, if_number: o.if, vat_number: o.vat, phone: o.phone, email: o.email, website: o.website,
  };
  if ([o.street, o.city, o.postalCode, o.country].some((v) => v !== undefined)) {
    patch.billing_address = { street: o.street, city: o.city, postal_code: o.postalCode, country: o.country };
  }
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
}

function operator(rt: Runtime): OrganizationWrite {
  const metadata = systemMetadata();
  return { store: rt.store, metadata };
}

async function settled(rt: Runtime, result: OrganizationResult): Promise<Organization> {
  if (!(await catchUpProjections(rt, result.position))) process.stderr.write('warning: the read model has not caught up yet\n');
  return result.state.organization!;
}

function show(opts: OutputOptions, o: Organization): void {
  const view = { id: o.id, account_id: o.account_id, legal_name: o.legal_name, ice: o.ice, api_enabled: o.api_enabled, archived: o.archived, version: o.version };
  print(opts, view, () =>
    fields([['id', o.id], ['account', o.account_id], ['legal name', o.legal_name], ['ice', o.ice], ['api', o.api_enabled ? 'enabled' : 'disabled'], ['archived', o.archived]]),
  );
}

export function register(program: Command, open: Open): void {
  const org = program.command('org').description('organizations (legal entities)');

  withJson(withProfile(org.command('create')))
    .description('provision an organization under an account (the plan entity cap applies)')
    .requiredOption('--account <id>', 'owning account')
    .action(async (opts: ProfileOptions & OutputOptions & { account: string }) => {
      if (!opts.legalName) throw new UsageError('--legal-name is required');
      const rt = await open();
      const account = await getAccount(rt.database.db, opts.account);
      if (!account) throw new UsageError(`account ${opts.account} not found`);
      const profile = { ...profileOf(opts), legal_name: opts.legalName };
      const result = await provisionOrganization(operator(rt), {
        organization_id: uuidv7(), account_id: account.id, entity_cap: PLAN_LIMITS[account.plan].entityCap, profile,
      });
      show(opts, await settled(rt, result));
    });

  withJson(withProfile(org.command('update').argument('<id>', 'organization id')))
    .description('switch API access, or change profile fields')
    .option('--api <state>', 'enabled|disabled')
    .action(async (id: string, opts: ProfileOptions & OutputOptions & { api?: string }) => {
      if (opts.api !== undefined && opts.api !== 'enabled' && opts.api !== 'disabled') throw new UsageError(`--api "${opts.api}" is not enabled or disabled`);
      const patch = profileOf(opts);
      if (opts.api === undefined && Object.keys(patch).length === 0) throw new UsageError('nothing to change: give --api or a profile flag');
      const rt = await open();
      const found = await findOrganization(rt.database.db, id.toLowerCase()).catch(() => null);
      if (!found) throw new UsageError(`organization ${id} not found`);
      let result: OrganizationResult | null = null;
      if (Object.keys(patch).length > 0) result = await updateOrganizationProfile(operator(rt), found.id, patch);
      if (opts.api !== undefined) result = await changeOrganizationApiAccess(operator(rt), found.id, opts.api === 'enabled');
      show(opts, await settled(rt, result!));
    });

  withJson(org.command('show').argument('<id>', 'organization id'))
    .description('show an organization as the read model has it')
    .action(async (id: string, opts: OutputOptions) => {
      const rt = await open();
      const found = await findOrganization(rt.database.db, id.toLowerCase()).catch(() => null);
      if (!found) throw new UsageError(`organization ${id} not found`);
      show(opts, found);
    });
}
