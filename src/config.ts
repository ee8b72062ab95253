/**
 * Environment variables (docs/api-decisions.md "Operator interface"), read and checked once.
 * A bad value fails start-up with one line naming the variable (ConfigError),
 * never with a stack trace.
 */

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
  /** INLINE_PROJECTIONS (default true): read models written in the append's transaction on PostgreSQL (false: all async, as with EventStoreDB). */
  inlineProjections: boolean;
}

type Env = Record<string, string | undefined>;

function parsePort(env: Env): number {
  const raw = env.PORT ?? '3000';
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port < 0 || port > 65535) throw new ConfigError('PORT', `"${raw}" is not a TCP port (0-65535)`);
  return port;
}

function parseCount(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `"${raw}" is not a whole number`);
  return Number(raw);
}

function parseEmbeddedPort(env: Env): number | null {
  const raw = env.EMBEDDED_PG_PORT;
  if (raw === undefined || raw === '') return null;
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port < 1 || port > 65535) throw new ConfigError('EMBEDDED_PG_PORT', `"${raw}" is not a TCP port (1-65535)`);
  return port;
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
    schedulerCron: env.SCHEDULER_CRON || '* * * * *',
    chromiumPath: env.CHROMIUM_PATH || null,
    logLevel: env.LOG_LEVEL || 'info',
    dataDir: env.DATA_DIR || '.data',
    embeddedPgPort: parseEmbeddedPort(env),
    unauthenticatedPerMinute: parseCount(env, 'UNAUTHENTICATED_REQUESTS_PER_MINUTE', 60),
    inlineProjections: parseBool(env, 'INLINE_PROJECTIONS') ?? true,
  };
}
