/**
 * What every admin command shares: opening the data like the server does
 * (DATABASE_URL, else the embedded PostgreSQL of ./.data, adopted when the
 * server already runs it), machine (--json) or human output, and one-line
 * errors. A command group exports `register(program, open)`.
 */
import type { Command } from 'commander';
import { loadConfig } from '../config.ts';
import { processParts } from '../main.ts';
import { openRuntime, type Runtime } from '../runtime.ts';
import { silentLogger } from '../shared/logger.ts';

/** Opens the runtime on first call (and runs pending migrations); later calls share it. */
export type Open = () => Promise<Runtime>;

export interface Session {
  open: Open;
  close(): Promise<void>;
}

export function createSession(): Session {
  let opening: Promise<Runtime> | null = null;
  return {
    open: () => (opening ??= openRuntime(loadConfig(), silentLogger, { projectors: processParts.projectors, poolSize: 4, applicationName: 'invoicing:admin' })),
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

/** An error meant for the operator: printed as one line, no stack. */
export class UsageError extends Error {}

/** Bad input (a malformed id, date, format or flag): one line, exit code 2. */
export class BadInputError extends UsageError {}

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
