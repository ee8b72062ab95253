/** `analyst create --org ID [--json]`: a read-only PostgreSQL login for one organization (docs/read-models.md). */
import type { Command } from 'commander';
import { createAnalystLogin } from '../analysts/create.ts';
import { existingOrganization, parseUuid } from './audit.ts';
import { badInputExitsWith2, fields, print, withJson, type Open, type OutputOptions } from './shared.ts';

export function register(program: Command, open: Open): void {
  const group = badInputExitsWith2(program.command('analyst').description('read-only SQL logins for analysts'));

  withJson(group.command('create'))
    .description("create a PostgreSQL login that can only SELECT the reporting views and tables, and only this organization's rows")
    .option('--org <id>', 'organization (required)')
    .action(async (opts: OutputOptions & { org?: string }) => {
      parseUuid(opts.org, '--org');
      const rt = await open();
      const organizationId = await existingOrganization(rt.database.db, opts.org);
      const login = await createAnalystLogin(rt.database.db, rt.database.url, organizationId);
      print(opts, login, () =>
        [
          fields([
            ['organization', login.organization_id],
            ['role', login.role],
            ['connection', login.connection_string],
          ]),
          '',
          'The password is shown only now. Use it with psql or a BI tool: psql "<connection>".',
        ].join('\n'),
      );
    });
}
