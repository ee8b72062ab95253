/**
 * `npm run admin -- <group> <command> [options]`: the operator interface
 * (docs/api-decisions.md "Operator interface"), usable while the server runs, on the same data.
 * Each command group lives in its own file and exports `register(program, open)`;
 * add a group by adding it to GROUPS.
 */
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config.ts';
import { DomainError } from '../shared/errors.ts';
import { register as account } from './account.ts';
import { register as analyst } from './analyst.ts';
import { register as audit } from './audit.ts';
import { register as key } from './key.ts';
import { register as org } from './org.ts';
import { register as projections } from './projections.ts';
import { BadInputError, createSession, UsageError, type CommandGroup } from './shared.ts';
import { register as user } from './user.ts';
import { register as webhook } from './webhook.ts';

const GROUPS: CommandGroup[] = [account, org, key, projections, webhook, audit, user, analyst];

function oneLine(err: unknown): string {
  if (err instanceof UsageError || err instanceof ConfigError || err instanceof DomainError) return err.message;
  const message = (err as Error)?.message ?? String(err);
  return message.split('\n')[0];
}

async function main(argv: string[]): Promise<number> {
  const program = new Command('admin')
    .description('Invoicing service administration')
    .showHelpAfterError('(add --help for usage)')
    .exitOverride();
  const session = createSession();
  for (const register of GROUPS) register(program, session.open);
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode; // commander already printed it (or the help)
    process.stderr.write(`error: ${oneLine(err)}\n`);
    return err instanceof BadInputError ? 2 : 1;
  } finally {
    await session.close().catch((err) => process.stderr.write(`warning: could not close the database: ${oneLine(err)}\n`));
  }
}

main(process.argv).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`error: ${oneLine(err)}\n`);
    process.exit(1);
  },
);
