/** `key create`, `key list`, `key revoke` (docs/api-decisions.md "Operator interface"). Secrets are printed once, at creation. */
import type { Command } from 'commander';
import { createApiKey, listKeys, revokeKey, type ApiKeyRecord } from '../accounts/keys.ts';
import { BUNDLES, bundleScopes, isBundle, parseScopes } from '../accounts/scopes.ts';
import { fields, print, requireAccount, requireOrganization, table, UsageError, withJson, type Open, type OutputOptions } from './shared.ts';
import { isoOrNull as iso } from '../shared/time.ts';

function view(k: ApiKeyRecord) {
  return {
    id: k.id,
    kind: k.kind,
    mode: k.mode,
    account_id: k.account_id,
    organization_id: k.organization_id,
    name: k.name,
    display: `${k.prefix}...${k.last4}`,
    scopes: k.scopes,
    status: k.revoked_at ? 'revoked' : 'active',
    created_at: iso(k.created_at),
    revoked_at: iso(k.revoked_at),
  };
}

interface CreateOptions extends OutputOptions {
  org?: string;
  account?: string;
  mode?: string;
  bundle?: string;
  scopes?: string;
  name?: string;
}

export function register(program: Command, open: Open): void {
  const key = program.command('key').description('API keys');

  withJson(key.command('create'))
    .description('create an API key (the secret is shown once)')
    .option('--org <id>', 'organization key for this organization')
    .option('--account <id>', 'account-level key (svc_acct_) for this account')
    .option('--mode <mode>', 'test|live (organization keys; default: SERVICE_MODE)')
    .option('--bundle <bundle>', BUNDLES.join('|'))
    .option('--scopes <list>', 'comma-separated scopes, e.g. invoices:read,customers:read')
    .option('--name <name>', 'a label for the key')
    .action(async (opts: CreateOptions) => {
      if (Boolean(opts.org) === Boolean(opts.account)) throw new UsageError('give exactly one of --org ID or --account ID');
      if (Boolean(opts.bundle) === Boolean(opts.scopes)) throw new UsageError('give exactly one of --bundle or --scopes');
      if (opts.mode && opts.mode !== 'test' && opts.mode !== 'live') throw new UsageError(`--mode "${opts.mode}" is not test or live`);
      const kind = opts.org ? 'organization' : 'account';
      let scopes;
      if (opts.bundle) {
        if (!isBundle(opts.bundle)) throw new UsageError(`--bundle "${opts.bundle}" is not one of ${BUNDLES.join(', ')}`);
        scopes = bundleScopes(opts.bundle, kind);
      } else {
        try {
          scopes = parseScopes(opts.scopes!.split(','), kind);
        } catch (err) {
          throw new UsageError((err as Error).message);
        }
      }
      const rt = await open();
      const owner = opts.org ? { organizationId: opts.org } : { accountId: opts.account! };
      const mode = (opts.mode as 'test' | 'live' | undefined) ?? rt.config.serviceMode;
      const { key: k, secret } = await createApiKey(rt.database.db, owner, { mode, scopes, name: opts.name ?? null });
      print(opts, { ...view(k), secret }, () =>
        [
          'API key created. Copy the secret now: it is not shown again.',
          '',
          `  ${secret}`,
          '',
          fields([['id', k.id], ['kind', k.kind], ['mode', k.mode], ['organization', k.organization_id], ['scopes', k.scopes.join(' ')]]),
        ].join('\n'),
      );
    });

  withJson(key.command('list'))
    .description('list the keys of an organization (or the account keys of an account); never shows secrets')
    .option('--org <id>', 'organization id')
    .option('--account <id>', 'account id (its account-level keys)')
    .action(async (opts: OutputOptions & { org?: string; account?: string }) => {
      if (Boolean(opts.org) === Boolean(opts.account)) throw new UsageError('give exactly one of --org ID or --account ID');
      const rt = await open();
      // An unknown owner is an error, not an empty list.
      const owner = opts.org ? { organizationId: (await requireOrganization(rt, opts.org)).id } : { accountId: (await requireAccount(rt, opts.account!)).id };
      const keys = await listKeys(rt.database.db, owner);
      const views = keys.map(view);
      print(opts, views, () =>
        views.length === 0
          ? 'No keys.'
          : table(
              ['ID', 'KEY', 'MODE', 'STATUS', 'NAME', 'CREATED', 'SCOPES'],
              views.map((v) => [v.id, v.display, v.mode, v.status, v.name, v.created_at, v.scopes.join(',')]),
            ),
      );
    });

  withJson(key.command('revoke').argument('<id>', 'key id'))
    .description('revoke a key; it stops working on the next request')
    .action(async (id: string, opts: OutputOptions) => {
      const rt = await open();
      const k = await revokeKey(rt.database.db, id);
      print(opts, view(k), () => `Key ${k.id} revoked at ${iso(k.revoked_at)}.`);
    });
}
