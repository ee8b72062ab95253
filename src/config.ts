/**
 * Every environment variable of the service is read here and nowhere else
 * (docs/operations.md "Environment variables"), and checked once: a bad value
 * fails start-up (server and admin CLI) with one line naming the variable
 * (ConfigError), never with a stack trace and never silently ignored.
 */
import cron from 'node-cron';

export class ConfigError extends Error {
  constructor(readonly variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

export type Role = 'api' | 'projector' | 'webhooks' | 'scheduler';
export const ALL_ROLES: Role[] = ['api', 'projector', 'webhooks', 'scheduler'];

export interface Config {
  port: number;
  databaseUrl: string | null;
  eventstoreUrl: string | null;
  serviceMode: 'test' | 'live';
  tlsCertFile: string | null;
  tlsKeyFile: string | null;
  webhookAllowInsecure: boolean | null; // null: default decided once the database is known
  webhookRetryDelaysMs: number[];
  schedulerCron: string;
  chromiumPath: string | null;
  logLevel: string;
  dataDir: string;
  /** EMBEDDED_PG_PORT: pins the embedded PostgreSQL's port (default: a free one, kept in DATA_DIR). */
  embeddedPgPort: number | null;
  /** UNAUTHENTICATED_REQUESTS_PER_MINUTE: requests without a valid key allowed per client address (0: no limit). */
  unauthenticatedPerMinute: number;
  /**
   * INLINE_PROJECTIONS: on PostgreSQL, whether the read models that writes answer from are written in
   * the append's transaction: `true` always, `false` never (every projector async, as with
   * EventStoreDB), `auto` (the default) for every write, creations made while other requests are in
   * progress in groups (one transaction per group; src/eventstore/append-groups.ts).
   * docs/architecture.md "Inline projections".
   */
  inlineProjections: InlineMode;
  /** WEBHOOK_TIMEOUT_MS: a webhook attempt fails after this long without an answer. */
  webhookTimeoutMs: number;
  /** WEBHOOK_SECRET_KEY: seals webhook signing secrets at rest (null: stored as is). */
  webhookSecretKey: Buffer | null;
  /** PDF_RENDER_TIMEOUT_MS: one PDF render is stopped after this long. */
  pdfRenderTimeoutMs: number;
  /** PDF_PAGES: warm Chromium pages printing at once (each a renderer process of some 35 MiB). */
  pdfPages: number;
  /** PDF_CACHE_MB: rendered PDFs kept in memory, in MiB (0: only concurrent requests share a render). */
  pdfCacheMb: number;
  /** DEMO_BOOTSTRAP: demo data on the first start of an empty test-mode database. */
  demoBootstrap: boolean;
  /** METRICS_PORT: serve /metrics on this port only (null: on PORT, beside the API). */
  metricsPort: number | null;
  /** Set by npm (npm_lifecycle_event) when `npm start` runs the server: it then watches its parent. */
  startedByNpm: boolean;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

type Env = Record<string, string | undefined>;

function parsePort(env: Env): number {
  const raw = env.PORT ?? '3000';
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port < 0 || port > 65535) throw new ConfigError('PORT', `"${raw}" is not a TCP port (0-65535)`);
  return port;
}

/** A whole number, within `range` when one is given. */
function parseCount(env: Env, name: string, fallback: number, range?: { min: number; max: number }): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || (range && (n < range.min || n > range.max))) {
    throw new ConfigError(name, `"${raw}" is not a whole number${range ? ` from ${range.min} to ${range.max}` : ''}`);
  }
  return n;
}

function parseOptionalPort(env: Env, name: string): number | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port < 1 || port > 65535) throw new ConfigError(name, `"${raw}" is not a TCP port (1-65535)`);
  return port;
}

/** Milliseconds, a whole number of at least `min`. */
function parseMs(env: Env, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min) throw new ConfigError(name, `"${raw}" is not a number of milliseconds >= ${min}`);
  return Number(raw);
}

function parseLogLevel(env: Env): string {
  const raw = env.LOG_LEVEL;
  if (raw === undefined || raw === '') return 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(raw)) throw new ConfigError('LOG_LEVEL', `"${raw}" is not one of ${LOG_LEVELS.join(', ')}`);
  return raw;
}

function parseCron(env: Env): string {
  const raw = env.SCHEDULER_CRON;
  if (raw === undefined || raw === '') return '* * * * *';
  if (!cron.validate(raw)) throw new ConfigError('SCHEDULER_CRON', `"${raw}" is not a cron expression (e.g. "* * * * *")`);
  return raw;
}

/**
 * WEBHOOK_SECRET_KEY: 32 bytes written as 64 hex digits or as base64 (44
 * characters). Also called by src/workers/webhooks/secrets.ts for code that has
 * no runtime at hand (the same parse, the same message).
 */
export function webhookSecretKeyFrom(env: Env = process.env): Buffer | null {
  const raw = env.WEBHOOK_SECRET_KEY;
  if (!raw) return null;
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : /^[A-Za-z0-9+/]{43}=?$/.test(raw) ? Buffer.from(raw, 'base64') : null;
  if (key?.length !== 32) throw new ConfigError('WEBHOOK_SECRET_KEY', 'must be 32 bytes, as 64 hex digits or base64 (e.g. `openssl rand -base64 32`)');
  return key;
}

export function checkDatabaseUrl(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('DATABASE_URL', 'is not a URL (expected postgres://user:password@host:port/database)');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError('DATABASE_URL', `scheme "${url.protocol}" is not postgres:// or postgresql://`);
  }
  if (!url.hostname) throw new ConfigError('DATABASE_URL', 'has no host');
  return raw;
}

export function checkEventstoreUrl(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null;
  if (!/^esdb(\+discover)?:\/\/[^/\s]+/.test(raw)) {
    throw new ConfigError('EVENTSTORE_URL', 'is not an EventStoreDB connection string (expected esdb://host:2113?tls=false)');
  }
  return raw;
}

/** INLINE_PROJECTIONS (Config.inlineProjections). */
export type InlineMode = 'always' | 'never' | 'auto';

function parseInlineMode(env: Env, name: string, fallback: InlineMode): InlineMode {
  const raw = env[name];
  if (raw === 'auto') return 'auto';
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return 'always';
  if (raw === 'false' || raw === '0') return 'never';
  throw new ConfigError(name, `"${raw}" is not true, false or auto`);
}

function parseBool(env: Env, name: string): boolean | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(name, `"${raw}" is not true or false`);
}

const DEFAULT_RETRY_DELAYS_MS = [60_000, 300_000, 900_000, 3_600_000, 14_400_000];

function parseDelays(env: Env): number[] {
  const raw = env.WEBHOOK_RETRY_DELAYS_MS;
  if (raw === undefined || raw === '') return DEFAULT_RETRY_DELAYS_MS;
  const parts = raw.split(',').map((s) => s.trim());
  if (parts.some((p) => !/^\d+$/.test(p))) {
    throw new ConfigError('WEBHOOK_RETRY_DELAYS_MS', 'must be a comma-separated list of milliseconds, e.g. 60000,300000');
  }
  return parts.map(Number);
}

export function loadConfig(env: Env = process.env): Config {
  const mode = env.SERVICE_MODE ?? 'test';
  if (mode !== 'test' && mode !== 'live') throw new ConfigError('SERVICE_MODE', `"${mode}" is not test or live`);
  const cert = env.TLS_CERT_FILE || null;
  const key = env.TLS_KEY_FILE || null;
  if ((cert === null) !== (key === null)) {
    throw new ConfigError(cert ? 'TLS_KEY_FILE' : 'TLS_CERT_FILE', 'TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  }
  return {
    port: parsePort(env),
    databaseUrl: checkDatabaseUrl(env.DATABASE_URL),
    eventstoreUrl: checkEventstoreUrl(env.EVENTSTORE_URL),
    serviceMode: mode,
    tlsCertFile: cert,
    tlsKeyFile: key,
    webhookAllowInsecure: parseBool(env, 'WEBHOOK_ALLOW_INSECURE'),
    webhookRetryDelaysMs: parseDelays(env),
    schedulerCron: parseCron(env),
    chromiumPath: env.CHROMIUM_PATH || null,
    logLevel: parseLogLevel(env),
    dataDir: env.DATA_DIR || '.data',
    embeddedPgPort: parseOptionalPort(env, 'EMBEDDED_PG_PORT'),
    unauthenticatedPerMinute: parseCount(env, 'UNAUTHENTICATED_REQUESTS_PER_MINUTE', 60),
    inlineProjections: parseInlineMode(env, 'INLINE_PROJECTIONS', 'auto'),
    webhookTimeoutMs: parseMs(env, 'WEBHOOK_TIMEOUT_MS', 30_000, 1),
    webhookSecretKey: webhookSecretKeyFrom(env),
    pdfRenderTimeoutMs: parseMs(env, 'PDF_RENDER_TIMEOUT_MS', 20_000, 100),
    pdfCacheMb: parseCount(env, 'PDF_CACHE_MB', 16),
    pdfPages: parseCount(env, 'PDF_PAGES', 1, { min: 1, max: 16 }),
    demoBootstrap: parseBool(env, 'DEMO_BOOTSTRAP') ?? true,
    metricsPort: parseOptionalPort(env, 'METRICS_PORT'),
    startedByNpm: Boolean(env.npm_lifecycle_event),
  };
}
