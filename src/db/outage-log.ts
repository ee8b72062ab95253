/**
 * One error line per database outage, and one line when it ends
 * (docs/operations.md "Logs"). When PostgreSQL goes away every part of the
 * process notices on its own: each request on a dead connection, each
 * projector, the webhook sender, the scheduler, the recovery sweeps. Logged
 * as they come, that is dozens of lines (with stacks) per second of outage,
 * which hide the one fact that matters.
 *
 * This is a pino `logMethod` hook on the process's logger: the first warning
 * or error whose `err` is a connection error (src/db/connection.ts) becomes
 * one `error` line, "database unreachable", with the first cause's message
 * and no stack; the ones after it are counted, not written. Meanwhile a probe
 * (`select 1` on the pool, once a second) watches for the database; when it
 * answers, one `warn` line says how long the outage lasted and how many lines
 * were held back, by message. Everything else is logged as usual.
 */
import type { Logger, LoggerOptions } from 'pino';
import { isConnectionError } from './connection.ts';

type LogMethodHook = NonNullable<NonNullable<LoggerOptions['hooks']>['logMethod']>;

const OUTAGE = Symbol('outage line');
const PROBE_EVERY_MS = 1000;
const WARN = 40;

/** Socket failures that arrive as text (some callers log `String(err.message)`). */
const SOCKET_TEXT = /\b(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN)\b/;

function isOutageError(err: unknown): boolean {
  if (typeof err === 'string') return SOCKET_TEXT.test(err) || isConnectionError({ message: err });
  return isConnectionError(err);
}

function messageOf(err: unknown): string {
  return typeof err === 'string' ? err : String((err as Error)?.message ?? err);
}

export class OutageLog {
  private logger: Logger | null = null;
  private probe: (() => Promise<unknown>) | null = null;
  private outage: { since: number; held: Map<string, number> } | null = null;
  private timer: NodeJS.Timeout | null = null;

  /** For pino's `hooks.logMethod` (src/shared/logger.ts); `this` is the (child) logger that logs. */
  readonly hook: LogMethodHook = ((outages: OutageLog) =>
    function (this: Logger, args, method, level) {
      const fields = args[0] as unknown;
      const pass = level < WARN || typeof fields !== 'object' || fields === null || OUTAGE in fields || !('err' in fields);
      if (pass || !isOutageError((fields as { err: unknown }).err)) return method.apply(this, args);
      outages.held(this, messageOf((fields as { err: unknown }).err), typeof args[1] === 'string' ? args[1] : 'log');
    } as LogMethodHook)(this);

  private held(logger: Logger, error: string, source: string): void {
    if (this.outage) {
      this.outage.held.set(source, (this.outage.held.get(source) ?? 0) + 1);
      return;
    }
    this.outage = { since: Date.now(), held: new Map() };
    logger.error({ [OUTAGE]: true, outage: 'database', first_error: error, source }, 'database unreachable');
    this.startProbe();
  }

  /** The logger the hook belongs to (it writes the outage lines). */
  attach(logger: Logger): void {
    this.logger = logger;
  }

  /** How to tell the database is back: a query that succeeds only then (e.g. `select 1` on the pool). */
  watch(probe: () => Promise<unknown>): void {
    this.probe = probe;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private startProbe(): void {
    if (this.timer || !this.probe) return;
    let probing = false;
    this.timer = setInterval(() => {
      if (probing || !this.probe) return;
      probing = true;
      this.probe().then(
        () => this.ended(),
        () => {},
      ).finally(() => (probing = false));
    }, PROBE_EVERY_MS);
    this.timer.unref();
  }

  private ended(): void {
    const outage = this.outage;
    this.stop();
    this.outage = null;
    if (!outage) return;
    const held = [...outage.held.values()].reduce((a, b) => a + b, 0);
    const seconds = Math.round((Date.now() - outage.since) / 100) / 10;
    this.logger?.warn(
      { [OUTAGE]: true, outage: 'database', duration_ms: Date.now() - outage.since, lines_held_back: held, held_back_by_message: Object.fromEntries(outage.held) },
      `database reachable again after ${seconds} s (${held} connection errors during the outage not logged one by one)`,
    );
  }
}
