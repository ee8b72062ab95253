/**
 * What the invoice benchmark drives: server processes started the way
 * operators start them (`node --import tsx <entry>`), and a lean keep-alive
 * HTTP client (node:http, not fetch: the load generator shares the machine's
 * two cores with the servers and PostgreSQL, so it must cost little).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';

export interface Reply {
  status: number;
  body: any;
  /** The body's length on the wire. */
  bytes: number;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 128 });

export function request(url: string, method: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method, agent, headers: { ...headers, ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          const text = raw.toString('utf8');
          try {
            resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null, bytes: raw.length });
          } catch {
            resolve({ status: res.statusCode ?? 0, body: text, bytes: raw.length });
          }
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Asserts a status, so a benchmark never measures error answers. */
export async function expectStatus(p: Promise<Reply>, status: number): Promise<Reply> {
  const r = await p;
  if (r.status !== status) throw new Error(`expected HTTP ${status}, got ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
  return r;
}

export interface ServerProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts `node --import tsx <entry>` (plain `node <entry>` for compiled JavaScript) and waits for GET /healthz.
 * BENCH_CPU_PROF=<dir> writes a V8 CPU profile of each server to <dir> when it stops.
 */
export async function startProcess(entry: string, port: number, env: Record<string, string>, args: string[] = [], nodeFlags: string[] = []): Promise<ServerProcess> {
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : [];
  const child: ChildProcess = spawn(process.execPath, [...profile, ...nodeFlags, ...(entry.endsWith('.ts') ? ['--import', 'tsx'] : []), entry, ...args], {
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-4000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const root = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  // A process without the api role serves no /healthz: it is ready once it logged "started" (LOG_LEVEL info).
  const headless = args.length > 0 && !args.join(',').includes('api');
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${entry} exited with ${child.exitCode}: ${output}`);
    const ok = headless ? output.includes('"msg":"started"') : await request(`${root}/healthz`, 'GET').then((r) => r.status === 200, () => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`${entry} did not start: ${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url: root,
    pid: child.pid!,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
