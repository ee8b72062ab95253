/**
 * Server-side prepared statements for the SQL a process sends again and
 * again (docs/performance.md "Prepared statements"). Kysely and plain
 * `query(text, values)` calls go through pg's unnamed statement: PostgreSQL
 * parses, analyses and plans the text on every execution. For the read
 * models' larger statements (the invoice upsert with its status counts is a
 * five-part CTE over 33 arrays) that costs more than running them: measured
 * at concurrency 32, an inline create's PostgreSQL CPU fell from 4.8 to
 * 2.4 ms once its statements were named.
 *
 * `prepareRepeated(client)` names, on that connection, every parameterized
 * write (see `preparable`) whose exact text this process has already sent
 * before (so text that embeds one-off values is never prepared), up to a
 * bounded number per connection. The name is a digest of the text, so a name always means one
 * text (pg refuses a name reused for another). Calls that name their own
 * statement, carry no parameters (the simple protocol, which allows several
 * statements in one message) or pass a config object are left as they are.
 *
 * PostgreSQL keeps the plans valid: a changed search_path (the shadow
 * schema `projections rebuild` and `verify` write into) or a changed table
 * makes it analyse the statement again. Behind a connection pooler, session
 * mode (docs/operations.md).
 *
 * The writes prepared are those of Kysely and of pg's Pool.query; the
 * service's own hottest statements name themselves (es_append, the
 * invoice reads, the key lookup).
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';

/** Prepared statements per connection at most (each holds a parse tree and plans in its backend). */
const PER_CONNECTION = 200;
/** Texts remembered; forgotten all at once when full (the ones that repeat come back at once, with the same name). */
const REMEMBERED = 5_000;

/**
 * What this process knows of a text: null, never prepared (not a write);
 * '', a write seen once; otherwise its statement name. One lookup per query,
 * so a read pays no pattern match after its first time.
 */
const known = new Map<string, string | null>();

/**
 * Writes only: INSERT, UPDATE or DELETE (alone or in a CTE) with no LIMIT.
 * After five executions PostgreSQL may switch a prepared statement to a
 * generic plan, one plan for every parameter value; for a read that filters
 * on skewed columns and stops at a LIMIT (deliveries by status, invoices by
 * status and date) such a plan can be far slower than the one its values
 * would get, and a read's planning is cheap anyway. The service's writes
 * address rows by key (upserts, updates by id), so one plan suits every
 * value, and they are where planning costs the most. A write that filters
 * on skewed columns with a LIMIT (the webhook claims) is left out by the
 * LIMIT rule.
 */
const WRITE = /\b(insert\s+into|update\s+\S+\s+((as\s+)?\w+\s+)?set|delete\s+from)\b/i;
const LIMIT = /\blimit\b/i;

export function preparable(text: string): boolean {
  return WRITE.test(text) && !LIMIT.test(text);
}

function nameFor(text: string): string | null {
  const verdict = known.get(text);
  if (verdict) return verdict;
  if (verdict === null) return null;
  if (known.size >= REMEMBERED) known.clear();
  if (verdict === undefined) {
    known.set(text, preparable(text) ? '' : null);
    return null;
  }
  // A write seen before: named by its digest, so a name always means one text.
  const name = `q_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
  known.set(text, name);
  return name;
}

const patched = new WeakSet<object>();

export function prepareRepeated<C extends pg.ClientBase>(client: C): C {
  if (patched.has(client)) return client;
  patched.add(client);
  const prepared = new Set<string>();
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (...args: unknown[]) => {
    // (text, values), as Kysely calls it, or (text, values, callback), as pg's Pool.query calls it.
    const [text, values, callback] = args;
    const plain = args.length === 2 || (args.length === 3 && typeof callback === 'function');
    if (plain && typeof text === 'string' && Array.isArray(values) && values.length > 0) {
      const name = nameFor(text);
      if (name && (prepared.has(name) || prepared.size < PER_CONNECTION)) {
        prepared.add(name);
        return args.length === 3 ? query({ name, text, values }, callback) : query({ name, text, values });
      }
    }
    return query(...args);
  };
  return client;
}
