/** `account create`, `account update`, `account list` (docs/operations.md "Admin CLI"). */
import type { Command } from 'commander';
import { createAccount, effectiveSubscriptionStatus, updateAccount, type Account } from '../accounts/accounts.ts';
import { PLANS } from '../accounts/plans.ts';
import { fields, print, table, UsageError, withJson, type Open, type OutputOptions } from './shared.ts';
import { isoOrNull as iso } from '../shared/time.ts';

function view(a: Account) {
  return {
    id: a.id,
    name: a.name,
    plan: a.plan,
    subscription_status: effectiveSubscriptionStatus(a),
    current_period_end: a.current_period_end,
    requests_per_minute: a.requests_per_minute,
    created_at: iso(a.created_at),
    updated_at: iso(a.updated_at),
  };
}

function human(a: Account): string {
  const v = view(a);
  return fields([
    ['id', v.id],
    ['name', v.name],
    ['plan', v.plan],
    ['subscription', v.subscription_status],
    ['period end', v.current_period_end],
    ['requests/min', v.requests_per_minute ?? `plan default`],
  ]);
}

function positiveInt(value: string): number | null {
  if (value === 'default') return null;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`"${value}" is not a positive integer (or "default")`);
  return Number(value);
}

export function register(program: Command, open: Open): void {
  const account = program.command('account').description('accounts: plan and subscription');

  withJson(account.command('create'))
    .description('create an account')
    .requiredOption('--name <name>', 'account name')
    .requiredOption('--plan <plan>', PLANS.join('|'))
    .option('--expires <date>', 'last day of the paid period (YYYY-MM-DD)')
    .option('--requests-per-minute <n>', "override the plan's rate limit per key")
    .action(async (opts: OutputOptions & { name: string; plan: string; expires?: string; requestsPerMinute?: string }) => {
      const rt = await open();
      const a = await createAccount(rt.database.db, {
        name: opts.name,
        plan: opts.plan,
        currentPeriodEnd: opts.expires ?? null,
        requestsPerMinute: opts.requestsPerMinute ? positiveInt(opts.requestsPerMinute) : null,
      });
      print(opts, view(a), () => `Account created.\n${human(a)}`);
    });

  withJson(account.command('update').argument('<id>', 'account id'))
    .description("change an account's plan or subscription")
    .option('--plan <plan>', PLANS.join('|'))
    .option('--subscription <status>', 'active|expired')
    .option('--expires <date>', 'last day of the paid period (YYYY-MM-DD), or "none"')
    .option('--requests-per-minute <n>', 'rate limit per key, or "default" for the plan\'s')
    .action(async (id: string, opts: OutputOptions & { plan?: string; subscription?: string; expires?: string; requestsPerMinute?: string }) => {
      if (!opts.plan && !opts.subscription && !opts.expires && !opts.requestsPerMinute) {
        throw new UsageError('nothing to change: give --plan, --subscription, --expires or --requests-per-minute');
      }
      const rt = await open();
      const a = await updateAccount(rt.database.db, id, {
        plan: opts.plan,
        subscriptionStatus: opts.subscription,
        currentPeriodEnd: opts.expires === undefined ? undefined : opts.expires === 'none' ? null : opts.expires,
        requestsPerMinute: opts.requestsPerMinute === undefined ? undefined : positiveInt(opts.requestsPerMinute),
      });
      print(opts, view(a), () => `Account updated.\n${human(a)}`);
    });

  withJson(account.command('list'))
    .description('list accounts, oldest first')
    .option('--plan <plan>', `only this plan: ${PLANS.join('|')}`)
    .action(async (opts: OutputOptions & { plan?: string }) => {
      if (opts.plan !== undefined && !(PLANS as readonly string[]).includes(opts.plan)) throw new UsageError(`--plan "${opts.plan}" is not one of ${PLANS.join(', ')}`);
      const rt = await open();
      let q = rt.database.db.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id');
      if (opts.plan !== undefined) q = q.where('plan', '=', opts.plan as Account['plan']);
      const views = (await q.execute()).map((row) => view(row as Account));
      print(opts, views, () =>
        views.length === 0
          ? 'No accounts.'
          : table(['ID', 'NAME', 'PLAN', 'SUBSCRIPTION', 'PERIOD END', 'CREATED'], views.map((v) => [v.id, v.name, v.plan, v.subscription_status, v.current_period_end, v.created_at])),
      );
    });
}
