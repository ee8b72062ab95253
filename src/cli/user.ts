/**
 * `user create`, `user list`, `user disable` (docs/api-decisions.md "Operator interface"): the
 * dashboard's users. The password is read from standard input
 * (--password-stdin), never from an argument, so it stays out of shell
 * history and process listings. The same module (src/dashboard/users.ts)
 * serves the dashboard's Users page.
 */
import type { Command } from 'commander';
import { createUser, disableUser, listUsers, ROLES, type DashboardUser } from '../dashboard/users.ts';
import { fields, print, requireAccount, table, UsageError, withJson, type Open, type OutputOptions } from './shared.ts';
import { isoOrNull as iso } from '../shared/time.ts';

function view(u: DashboardUser) {
  return {
    id: u.id,
    account_id: u.account_id,
    email: u.email,
    role: u.role,
    status: u.disabled_at ? 'disabled' : 'active',
    created_at: iso(u.created_at),
    last_sign_in_at: iso(u.last_sign_in_at),
    disabled_at: iso(u.disabled_at),
  };
}

/** All of standard input, without the final line break (`echo` and here-strings add one). */
async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('Password (then Enter and Ctrl-D): ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

export function register(program: Command, open: Open): void {
  const user = program.command('user').description('dashboard users');

  withJson(user.command('create'))
    .description('create a dashboard user (password read from standard input)')
    .requiredOption('--account <id>', 'account id')
    .requiredOption('--email <email>', 'sign-in email (unique on the platform)')
    .requiredOption('--role <role>', ROLES.join('|'))
    .option('--password-stdin', 'read the password from standard input (required)')
    .action(async (opts: OutputOptions & { account: string; email: string; role: string; passwordStdin?: boolean }) => {
      if (!opts.passwordStdin) throw new UsageError('give --password-stdin and the password on standard input (never as an argument)');
      const password = await readStdin();
      const rt = await open();
      const u = await createUser(rt.database.db, { accountId: opts.account, email: opts.email, role: opts.role, password });
      print(opts, { id: u.id }, () => `User created.\n${fields([['id', u.id], ['email', u.email], ['role', u.role], ['account', u.account_id]])}`);
    });

  withJson(user.command('list'))
    .description("an account's dashboard users")
    .requiredOption('--account <id>', 'account id')
    .action(async (opts: OutputOptions & { account: string }) => {
      const rt = await open();
      const views = (await listUsers(rt.database.db, (await requireAccount(rt, opts.account)).id)).map(view);
      print(opts, views, () =>
        views.length === 0
          ? 'No users.'
          : table(['ID', 'EMAIL', 'ROLE', 'STATUS', 'CREATED', 'LAST SIGN-IN'], views.map((v) => [v.id, v.email, v.role, v.status, v.created_at, v.last_sign_in_at])),
      );
    });

  withJson(user.command('disable').argument('<id>', 'user id'))
    .description('disable a user: signed out at once, cannot sign in again')
    .action(async (id: string, opts: OutputOptions) => {
      const rt = await open();
      const u = await disableUser(rt.database.db, id);
      print(opts, view(u), () => `User ${u.id} (${u.email}) disabled at ${iso(u.disabled_at)}.`);
    });
}
