/**
 * `npm run admin -- <group> <command> [options]`: the operator interface
 * (docs/api-decisions.md "Operator interface"), usable while the server runs, on the same data.
 * Each command group lives in its own file and exports `register(program, open)`;
 * add a group by adding it to GROUPS.
 */
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config.ts';
import { DomainError } from '../shared/errors.ts';
import { CommandFailed, createSession, UsageError, type CommandGroup } from './shared.ts';

/**
 * The groups, in help's order, each loaded only when it runs: a command
 * loads its own group's modules, not every group's (an `audit export` of a
 * million events must stay under 200 MiB; docs/performance.md "The admin
 * CLI's memory"). Help, and a group name that is none of these, load all.
 */
const GROUPS: Record<string, () => Promise<{ register: CommandGroup }>> = {
  account: () => import('./account.ts'),
  org: () => import('./org.ts'),
  key: () => import('./key.ts'),
  projections: () => import('./projections.ts'),
  webhook: () => import('./webhook.ts'),
  audit: () => import('./audit.ts'),
  user: () => import('./user.ts'),
  analyst: () => import('./analyst.ts'),
};

/** The groups a command line needs: the one it names (its first word), else all of them. */
function groupsFor(argv: string[]): (() => Promise<{ register: CommandGroup }>)[] {
  const named = argv.slice(2).find((a) => !a.startsWith('-'));
  return named !== undefined && Object.hasOwn(GROUPS, named) ? [GROUPS[named]] : Object.values(GROUPS);
}

/** What went wrong, as --json prints it on stderr, and the exit code (docs/operations.md "Admin CLI"). */
interface Failure {
  code: string;
  message: string;
  details?: Record<string, unknown>;
  exit: 1 | 2;
}

function firstLine(err: unknown): string {
  return String((err as Error)?.message ?? err).split('\n')[0];
}

function failureOf(err: unknown): Failure {
  if (err instanceof CommanderError) {
    // A group without its command prints its help (suppressed with --json) and throws '(outputHelp)'.
    const message = err.code === 'commander.help' ? 'a command is missing (see --help)' : err.message.replace(/^error: /, '');
    return { code: 'USAGE_ERROR', message, exit: 2 };
  }
  if (err instanceof UsageError) return { code: err.code, message: err.message, details: err.details, exit: 2 };
  if (err instanceof CommandFailed) return { code: err.code, message: err.message, exit: 1 };
  if (err instanceof ConfigError) return { code: 'CONFIGURATION_ERROR', message: err.message, details: { variable: err.variable }, exit: 1 };
  if (err instanceof DomainError) {
    // The same rules as the API, with the same codes: a refused value or an unknown id means the command was not run as given.
    const given = err.code === 'VALIDATION_ERROR' || err.code === 'NOT_FOUND' || err.code === 'INVALID_JSON';
    return { code: err.code, message: err.message, details: err.details, exit: given ? 2 : 1 };
  }
  return { code: 'ERROR', message: firstLine(err), exit: 1 };
}

/** One line: the message, then each field's problem unless the message already says it. */
function humanLine(f: Failure): string {
  const fields = Array.isArray(f.details?.fields) ? (f.details.fields as { field: string; message: string }[]) : [];
  const said = fields.filter((x) => !f.message.includes(`${x.field}: ${x.message}`) && !f.message.includes(`${x.field} ${x.message}`));
  return said.length === 0 ? f.message : `${f.message.replace(/\.$/, '')}: ${said.map((x) => `${x.field}: ${x.message}`).join('; ')}`;
}

function report(err: unknown, json: boolean): number {
  const f = failureOf(err);
  if (json) process.stderr.write(`${JSON.stringify({ error: { code: f.code, message: f.message, ...(f.details ? { details: f.details } : {}) } })}\n`);
  else process.stderr.write(`error: ${humanLine(f)}\n`);
  return f.exit;
}

async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  const program = new Command('admin')
    .description('Invoicing service administration (exit codes: 0 done, 1 failed, 2 not run as given: usage, validation, unknown id)')
    .exitOverride();
  // With --json every error is one JSON document on stderr: commander's own messages are replaced by report().
  if (json) program.configureOutput({ writeErr: () => {} });
  else program.showHelpAfterError('(add --help for usage)');
  const session = createSession();
  for (const group of await Promise.all(groupsFor(argv).map((load) => load()))) group.register(program, session.open);
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError && (err.exitCode === 0 || !json)) {
      // Help and version exit 0; commander already printed its own usage errors.
      return err.exitCode === 0 ? 0 : 2;
    }
    return report(err, json);
  } finally {
    await session.close().catch((err) => process.stderr.write(`warning: could not close the database: ${firstLine(err)}\n`));
  }
}

main(process.argv).then(
  (code) => process.exit(code),
  (err) => process.exit(report(err, process.argv.includes('--json'))),
);
