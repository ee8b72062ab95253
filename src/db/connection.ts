/**
 * Losing the database is an outage of the requests that were using it, never
 * of the process (docs/reliability.md). PostgreSQL ends sessions for many
 * ordinary reasons: a failover, a restart, `pg_terminate_backend`, an idle
 * timeout, a PgBouncer restart. node-postgres then emits `'error'` on the
 * client; a client without an `'error'` listener turns that into an uncaught
 * exception, and a pooled client has none while it is checked out (pg-pool
 * only guards idle ones). So every client of the service gets a listener here,
 * and the API maps the errors of a dead or unreachable database to
 * 503 SERVICE_UNAVAILABLE with Retry-After.
 */
import type pg from 'pg';

/** SQLSTATEs that mean "the session or the server went away", not "your statement is wrong". */
const CONNECTION_SQLSTATES = new Set([
  '57P01', // admin_shutdown (pg_terminate_backend, smart/fast shutdown)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, shutting down, in recovery)
  '57P05', // idle_session_timeout
  '53300', // too_many_connections
  '25P03', // idle_in_transaction_session_timeout (the session is gone)
]);

const CONNECTION_MESSAGES =
  /Connection terminated|connection error and is not queryable|Client was closed and is not queryable|timeout exceeded when trying to connect|Cannot use a pool after calling end|the database system is (starting up|shutting down|in recovery mode)|terminating connection|server closed the connection unexpectedly|Connection ended unexpectedly/i;

const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);

/** True when `err` says the database connection (or the server) is gone or unreachable. */
export function isConnectionError(err: unknown): boolean {
  for (let e: any = err, depth = 0; e && depth < 4; e = e.cause, depth++) {
    if (typeof e !== 'object') return false;
    const code = typeof e.code === 'string' ? e.code : '';
    if (CONNECTION_SQLSTATES.has(code) || code.startsWith('08') || SOCKET_CODES.has(code)) return true;
    if (typeof e.message === 'string' && CONNECTION_MESSAGES.test(e.message)) return true;
    // AggregateError of a connect() that tried several addresses.
    if (Array.isArray(e.errors) && e.errors.some((x: unknown) => isConnectionError(x))) return true;
  }
  return false;
}

type ErrorSink = (err: Error) => void;
const ignore: ErrorSink = () => {};

/**
 * A dedicated client's connection errors are reported to `onError` (default:
 * ignored: the next query on the client fails, and its owner reconnects).
 */
export function guardClient<C extends pg.Client | pg.PoolClient>(client: C, onError: ErrorSink = ignore): C {
  client.on('error', onError);
  return client;
}

/**
 * Every client the pool creates keeps an `'error'` listener for its whole
 * life, also while checked out (by Kysely's driver, a transaction, an
 * advisory lock): the error then only marks the client broken, its pending
 * query fails, and the pool discards it on release.
 */
export function guardPool(pool: pg.Pool, onError: ErrorSink = ignore): pg.Pool {
  pool.on('error', onError); // idle clients
  pool.on('connect', (client) => void client.on('error', onError));
  return pool;
}

/** Seconds a client is told to wait (Retry-After) when the database is unavailable. */
export const RETRY_AFTER_SECONDS = 2;
