/**
 * Watching, or answering in place of PostgreSQL, the queries a server's pool
 * sends: each client is wrapped the first time it is acquired. For tests that
 * count round trips, wait for a statement, or inject a fault at one.
 */
import type pg from 'pg';

/** A query's first argument as pg's client.query gets it. */
export type QueryArgument = string | { name?: string; text?: string };

/** A query's SQL text ('' when it has none). */
export const queryText = (q: QueryArgument): string => (typeof q === 'string' ? q : (q?.text ?? ''));

/** A query's statement name, else its text. */
export const queryLabel = (q: QueryArgument): string => (typeof q === 'string' ? q : (q?.name ?? q?.text ?? ''));

/**
 * Calls `onQuery` with each query of `pool`'s clients before it is sent, and `run`, which sends it. It returns
 * the query's outcome in its place (a promise: a fault injected, say), or null to let it run as sent.
 * Queries with a callback (pool.query's) get the same. Returns the function that stops watching new clients.
 */
export function interceptQueries(pool: pg.Pool, onQuery: (query: QueryArgument, run: () => Promise<unknown>) => Promise<unknown> | null): () => void {
  const wrapped = new WeakSet<object>();
  const wrap = (client: pg.PoolClient) => {
    if (wrapped.has(client)) return;
    wrapped.add(client);
    const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown> | undefined;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      const cb = typeof args[args.length - 1] === 'function' ? (args[args.length - 1] as (err: unknown, res?: unknown) => void) : null;
      const run = () => query(...(cb ? args.slice(0, -1) : args)) as Promise<unknown>;
      const answer = onQuery(args[0] as QueryArgument, run);
      if (answer === null) return query(...args);
      if (!cb) return answer;
      answer.then((r) => cb(null, r), (e) => cb(e));
      return undefined;
    };
  };
  pool.on('acquire', wrap);
  return () => pool.off('acquire', wrap);
}
