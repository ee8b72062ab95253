/**
 * What every admin command shares: opening the data like the server does
 * (DATABASE_URL, else the embedded PostgreSQL of ./.data, adopted when the
 * server already runs it), machine (--json) or human output, and one-line
 * errors. A command group exports `register(program, open)`.
 */
import type { Command } from 'commander';
import type { Account } from '../accounts/accounts.ts';
import type { Organization } from '../commands/organization/events.ts';
import type { Runtime } from '../runtime.ts';
// The service's modules are imported when a command needs them, not with this file: `--help`, and a
// command refused for its flags, load none (docs/performance.md "The admin CLI's memory").

/** Opens the runtime on first call (and runs pending migrations); later calls share it. */
export type Open = () => Promise<Runtime>;

export interface Session {
  open: Open;
  close(): Promise<void>;
}

export function createSession(): Session {
  let opening: Promise<Runtime> | null = null;
  return {
    open: () => (opening ??= openAsAdmin()),
    async close() {
      if (!opening) return;
      const rt = await opening.catch(() => null);
      if (!rt) return;
      await rt.close();
      // Stop the embedded PostgreSQL only if this command started it and no server uses it.
      if (rt.database.embedded?.startedHere) await rt.database.embedded.release();
    },
  };
}

async function openAsAdmin(): Promise<Runtime> {
  const [{ loadConfig }, { readModelProjectors }, { openRuntime }, { silentLogger }] = await Promise.all([
    import('../config.ts'),
    import('../read-models.ts'),
    import('../runtime.ts'),
    import('../shared/logger.ts'),
  ]);
  return openRuntime(loadConfig(), silentLogger, { projectors: readModelProjectors, poolSize: 4, applicationName: 'invoicing:admin' });
}

export type CommandGroup = (program: Command, open: Open) => void;

export interface OutputOptions {
  json?: boolean;
}

/** Adds --json to a command. */
export function withJson(cmd: Command): Command {
  return cmd.option('--json', 'machine output: one JSON document on stdout');
}

/** Prints `value` as one JSON document with --json, else the human lines. */
export function print(opts: OutputOptions, value: unknown, human: () => string): void {
  if (opts.json) process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  else process.stdout.write(`${human()}\n`);
}

/** "key: value" lines, aligned. */
export function fields(rows: [string, unknown][]): string {
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${`${k}:`.padEnd(width + 2)}${v === null || v === undefined ? '-' : String(v)}`).join('\n');
}

/** A plain aligned table. */
export function table(headers: string[], rows: unknown[][]): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => (c === null || c === undefined ? '-' : String(c))))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  return cells.map((r) => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd()).join('\n');
}

/**
 * The command cannot run as given (a missing or malformed flag, a value the
 * rules refuse): one line, no stack, exit code 2 (docs/operations.md "Admin
 * CLI"). `code` and `details` are what --json prints on stderr.
 */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly code: string = 'USAGE_ERROR',
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** Bad input (a malformed id, date, format or flag): one line, exit code 2. */
export class BadInputError extends UsageError {}

/** An id that names nothing (organization, account, key, endpoint...): exit code 2, code NOT_FOUND. */
export class NotFoundError extends UsageError {
  constructor(message: string) {
    super(message, 'NOT_FOUND');
  }
}

/** The command ran and did not succeed (e.g. a receiver refused the test event): exit code 1. */
export class CommandFailed extends Error {
  constructor(
    message: string,
    readonly code = 'COMMAND_FAILED',
  ) {
    super(message);
  }
}

/** The organization, or NotFoundError: an unknown id is an error, never an empty list. */
export async function requireOrganization(rt: Runtime, id: string): Promise<Organization> {
  const { findOrganization } = await import('../queries/organizations.ts');
  const found = UUID.test(id) ? await findOrganization(rt.database.db, id.toLowerCase()) : null;
  if (!found) throw new NotFoundError(`organization ${id} not found`);
  return found;
}

/** The account, or NotFoundError. */
export async function requireAccount(rt: Runtime, id: string): Promise<Account> {
  const { getAccount } = await import('../accounts/accounts.ts');
  const found = UUID.test(id) ? await getAccount(rt.database.db, id.toLowerCase()) : null;
  if (!found) throw new NotFoundError(`account ${id} not found`);
  return found;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * For a command group whose bad input exits with 2 (the audit and analyst
 * commands): commander's own parse errors (unknown flag, missing argument)
 * become exit code 2 too; help and version keep theirs.
 */
export function badInputExitsWith2(group: Command): Command {
  return group.exitOverride((err) => {
    if (err.exitCode === 0) throw err;
    throw Object.assign(err, { exitCode: 2 });
  });
}
