/**
 * The server as operators run it: `node --import tsx src/main.ts` in a child
 * process on a test database (SERVICE_MODE=test, every role), for tests that
 * need real processes (SIGKILL, several processes on one database). Its
 * stdout and stderr are kept in `output`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { until } from './wait.ts';

export class ServerProcess {
  child: ChildProcess | null = null;
  output = '';
  constructor(private readonly databaseUrl: string, readonly port: number, private readonly env: Record<string, string> = {}) {}

  get root(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { ...process.env, DATABASE_URL: this.databaseUrl, PORT: String(this.port), LOG_LEVEL: 'warn', SERVICE_MODE: 'test', ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (d) => (this.output += d));
    this.child.stderr!.on('data', (d) => (this.output += d));
    await until(async () => (await fetch(`${this.root}/healthz`).catch(() => null))?.status === 200, 60_000, `server on ${this.port}`, 100);
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }
}
