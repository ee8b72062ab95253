/**
 * `org create`, `org update`, `org show`, `org list`, `org release-ice` (docs/operations.md "Admin CLI"). The same
 * command handlers as the API (same rules, ICE reservations, entity cap), run
 * as the operator ('system'). A command returns once the read model shows
 * its change, so `key create --org ID` can follow at once, server running or not.
 */
import type { Command } from 'commander';
import { v7 as uuidv7 } from 'uuid';
import { PLAN_LIMITS } from '../accounts/plans.ts';
import { systemMetadata } from '../commands/command.ts';
import type { OrganizationPatch } from '../commands/organization/commands.ts';
import {
  changeOrganizationApiAccess,
  provisionOrganization,
  releaseFormerIce,
  updateOrganizationProfile,
  type OrganizationResult,
  type OrganizationWrite,
} from '../commands/organization/handler.ts';
import { catchUpProjections } from '../projections/catch-up.ts';
import { getOrganization, rowToOrganization } from '../queries/organizations.ts';
import type { Organization } from '../commands/organization/events.ts';
import type { Runtime } from '../runtime.ts';
import { wellFormedIce } from '../commands/field-rules.ts';
import { BadInputError, CommandFailed, fields, print, requireAccount, requireOrganization, table, UsageError, withJson, type Open, type OutputOptions } from './shared.ts';

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

/**
 * The whole organization: the API's representation (profile, billing address,
 * subscription, quotas) plus what only an operator sees (account, API switch,
 * version).
 */
async function show(rt: Runtime, opts: OutputOptions, o: Organization): Promise<void> {
  const found = await getOrganization(rt.database.db, o.id);
  const v = found?.view;
  const whole = { ...(v ?? {}), id: o.id, account_id: o.account_id, legal_name: o.legal_name, ice: o.ice, api_enabled: o.api_enabled, archived: o.archived, version: o.version };
  const address = [o.billing_address.street, o.billing_address.city, o.billing_address.postal_code, o.billing_address.country].filter(Boolean).join(', ');
  print(opts, whole, () =>
    fields([
      ['id', o.id],
      ['account', o.account_id],
      ['legal name', o.legal_name],
      ['ice', o.ice],
      ['rc', o.rc],
      ['if', o.if_number],
      ['vat', o.vat_number],
      ['phone', o.phone],
      ['email', o.email],
      ['website', o.website],
      ['billing address', address || null],
      ['plan', v && `${v.subscription.plan} (${v.subscription.status}${v.subscription.current_period_end ? `, until ${v.subscription.current_period_end}` : ''})`],
      ['requests/min', v?.api_quotas.requests_per_minute],
      ['api keys', v && `${v.api_quotas.api_keys_used} of ${v.api_quotas.api_keys_limit ?? 'unlimited'}`],
      ['schedules', v && `${v.api_quotas.recurring_schedules_used} of ${v.api_quotas.recurring_schedules_limit}`],
      ['api', o.api_enabled ? 'enabled' : 'disabled'],
      ['archived', o.archived ? `yes, since ${o.archived_at}` : 'no'],
      ['created', o.created_at],
      ['updated', o.updated_at],
      ['version', o.version],
    ]),
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
      const account = await requireAccount(rt, opts.account);
      const profile = { ...profileOf(opts), legal_name: opts.legalName };
      const result = await provisionOrganization(operator(rt), {
        organization_id: uuidv7(), account_id: account.id, entity_cap: PLAN_LIMITS[account.plan].entityCap, profile,
      });
      await show(rt, opts, await settled(rt, result));
    });

  withJson(withProfile(org.command('update').argument('<id>', 'organization id')))
    .description('switch API access, or change profile fields')
    .option('--api <state>', 'enabled|disabled')
    .action(async (id: string, opts: ProfileOptions & OutputOptions & { api?: string }) => {
      if (opts.api !== undefined && opts.api !== 'enabled' && opts.api !== 'disabled') throw new UsageError(`--api "${opts.api}" is not enabled or disabled`);
      const patch = profileOf(opts);
      if (opts.api === undefined && Object.keys(patch).length === 0) throw new UsageError('nothing to change: give --api or a profile flag');
      const rt = await open();
      const found = await requireOrganization(rt, id);
      let result: OrganizationResult | null = null;
      if (Object.keys(patch).length > 0) result = await updateOrganizationProfile(operator(rt), found.id, patch);
      if (opts.api !== undefined) result = await changeOrganizationApiAccess(operator(rt), found.id, opts.api === 'enabled');
      await show(rt, opts, await settled(rt, result!));
    });

  withJson(org.command('show').argument('<id>', 'organization id'))
    .description('show the whole organization: profile, billing address, subscription, quotas, API switch')
    .action(async (id: string, opts: OutputOptions) => {
      const rt = await open();
      await show(rt, opts, await requireOrganization(rt, id));
    });

  withJson(org.command('list'))
    .description('list organizations, oldest first (all, or one account\'s)')
    .option('--account <id>', 'only this account\'s organizations')
    .option('--archived', 'include archived organizations')
    .action(async (opts: OutputOptions & { account?: string; archived?: boolean }) => {
      const rt = await open();
      let q = rt.database.db.selectFrom('organizations').selectAll().orderBy('created_at').orderBy('id');
      if (opts.account !== undefined) q = q.where('account_id', '=', (await requireAccount(rt, opts.account)).id);
      if (!opts.archived) q = q.where('archived', '=', false);
      const rows = (await q.execute()).map(rowToOrganization);
      const views = rows.map((o) => ({ id: o.id, account_id: o.account_id, legal_name: o.legal_name, ice: o.ice, api_enabled: o.api_enabled, archived: o.archived, created_at: o.created_at }));
      print(opts, views, () =>
        views.length === 0
          ? 'No organizations.'
          : table(['ID', 'ACCOUNT', 'LEGAL NAME', 'ICE', 'API', 'ARCHIVED', 'CREATED'], views.map((v) => [v.id, v.account_id, v.legal_name, v.ice, v.api_enabled ? 'enabled' : 'disabled', v.archived, v.created_at])),
      );
    });

  withJson(org.command('release-ice').argument('<ice>', 'the ICE, 15 digits'))
    .description('free an ICE its organization named once and names no more (one entered by mistake), so the entity it identifies can use it')
    .action(async (ice: string, opts: OutputOptions) => {
      const value = wellFormedIce(ice);
      if (value === null) throw new BadInputError(`"${ice}" is not an ICE (15 digits)`);
      const rt = await open();
      const result = await releaseFormerIce(rt.store, value, systemMetadata());
      if (result.outcome === 'not_reserved') throw new CommandFailed(`ICE ${value} is not reserved: any organization can take it`, 'NOT_RESERVED');
      if (result.outcome === 'in_use') {
        const first = result.archived ? 'restore it and change it there first' : 'change it there first';
        throw new CommandFailed(`ICE ${value} is the ICE of organization ${result.owner} now: ${first}`, 'ICE_IN_USE');
      }
      if (result.outcome === 'taken_meanwhile') {
        throw new CommandFailed(`ICE ${value}: organization ${result.owner} took it back while it was freed, and organization ${result.holder} holds it now: both name it, fix one of them`, 'ICE_CONFLICT');
      }
      print(opts, { ice: value, released_from: result.owner }, () => `ICE ${value} released from organization ${result.owner}`);
    });
}
