/**
 * Inline projections (docs/architecture.md "Inline projections"): on the
 * PostgreSQL event store, the projectors of the read models that writes
 * answer from run inside the append's own transaction, as Emmett's and
 * Marten's inline projections do. The event and its rows commit together,
 * so a write is readable the moment it is answered: no wait for a runner,
 * no notification round trip (but for a table built from several events of
 * a stream, whose earlier events a background writer left to the runners:
 * newestNotInline).
 *
 * The runners (runner.ts) still follow the log for these projectors: they
 * own the checkpoints, rebuilds and `projections verify`, and apply what no
 * inline transaction wrote (events appended by other means, rows a rebuild's
 * swap replaced). An event whose append wrote a projector's rows carries that
 * projector's bit (INLINE_BITS), and its runner, in any process, skips it
 * (but for what a rebuild's swap may have replaced); any other is applied
 * under the rows' guards (a row is only replaced by a newer snapshot of its
 * stream), which make a second application change nothing.
 *
 * A projector that throws refuses the append: the transaction rolls back,
 * the error is logged as an alert, and the client gets a 500 with its
 * request id. No event without its rows, no rows without their event.
 */
import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import type pg from 'pg';
import type { InlineProjections, InlineStatement } from '../eventstore/postgres.ts';
import type { RecordedEvent } from '../eventstore/types.ts';
import type { Logger } from '../shared/logger.ts';
import type { Database } from '../db/schema.ts';
import type { Projector } from './projector.ts';

/**
 * Each inline projector's bit in es_events.inline_projectors (migration 0106):
 * an inline append marks its events with the bits of the projectors that
 * wrote their rows, and those projectors' runners, in every process, skip
 * them. The log keeps these marks: never renumber or reuse a bit. A projector
 * made inline gets a new one (inlineProjections refuses one without), and
 * still applies every event marked before, which does not name it.
 */
export const INLINE_BITS: Readonly<Record<string, number>> = {
  customers: 1,
  invoices: 2,
  'invoice-numbers': 4,
  organizations: 8,
  schedules: 16,
};

/**
 * The newest of a stream's events whose rows the projector `name` did not
 * write inline (no bit of its own: a background writer's, a process's with
 * INLINE_PROJECTIONS=false, or from before migration 0106), or null. Its
 * runner applies them in log order, so a table built from several events of
 * a stream (a schedule's runs) holds all of them once that runner has
 * passed this one's position.
 */
export function newestNotInline(events: readonly RecordedEvent[], name: string): RecordedEvent | null {
  const bit = INLINE_BITS[name] ?? 0;
  return [...events].reverse().find((e) => ((e.inlineProjectors ?? 0) & bit) === 0) ?? null;
}

/**
 * Positions of the appends whose rows this process wrote inline, recently
 * (bounded): a write answers from the rows at once when its own append is
 * one of them (InlineSetup.answered). Forgotten when a rebuild's swap may
 * have replaced those rows (the runner resets it).
 */
export class InlineApplied {
  private readonly positions = new Set<string>();
  constructor(private readonly capacity = 50_000) {}

  add(position: string): void {
    this.positions.add(position);
    // Sets iterate in insertion order: drop the oldest (a write that finds its position gone waits for the
    // runner, which has passed it long ago).
    if (this.positions.size > this.capacity) this.positions.delete(this.positions.values().next().value!);
  }

  /** Whether this process wrote the rows of the event at `position` in its append's transaction. */
  wrote(position: string): boolean {
    return this.positions.has(position);
  }

  reset(): void {
    this.positions.clear();
  }
}

/** Kysely over a pooled client whose transaction the store opened (one instance per client, reused). */
const onClient = new WeakMap<pg.PoolClient, Kysely<Database>>();
function kyselyOn(client: pg.PoolClient): Kysely<Database> {
  let db = onClient.get(client);
  if (!db) {
    const lease = { query: (...args: unknown[]) => (client.query as (...a: unknown[]) => unknown)(...args), release() {} };
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: { connect: async () => lease, end: async () => {} } as any }) });
    onClient.set(client, db);
  }
  return db;
}

export interface InlineSetup {
  projections: InlineProjections;
  applied: InlineApplied;
  /**
   * Whether the write that produced `position` is readable from these
   * projectors' rows already: every one of them is applied inline and this
   * process applied that append inline (with INLINE_PROJECTIONS=false, or
   * EventStoreDB, no write is; the answer then waits for the runners).
   */
  answered(position: string, names: readonly string[]): boolean;
}

export function inlineProjections(projectors: readonly Projector[], logger: Logger): InlineSetup {
  const applied = new InlineApplied();
  const handled = projectors.map((p) => ({ projector: p, types: new Set(p.handles) }));
  const unmarked = projectors.filter((p) => INLINE_BITS[p.name] === undefined).map((p) => p.name);
  if (unmarked.length > 0) throw new Error(`inline projectors without a bit in INLINE_BITS (src/projections/inline.ts): ${unmarked.join(', ')}`);
  const mark = projectors.reduce((bits, p) => bits | INLINE_BITS[p.name], 0);
  const types = new Set(projectors.flatMap((p) => p.handles));
  /**
   * A projector threw on these events (in opening, statements or apply, or its statements failed): the append
   * is refused, and the log says so as an alert. In a group of creations (`grouped`) the events are not yet
   * refused: the group is rolled back and each of its appends goes again alone, so only a warning here; the
   * append that fails alone raises the alert, naming its own events only.
   */
  const alert = (projector: Pick<Projector, 'name'>, own: readonly { id: string; type: string; stream: string }[], err: unknown, grouped = false) => {
    const what = { projector: projector.name, streams: [...new Set(own.map((e) => e.stream))], event_ids: own.map((e) => e.id), event_types: own.map((e) => e.type), err };
    if (grouped) logger.warn({ ...what, group: true }, 'inline projection failed in a group of creations: the group was rolled back, each of its appends goes again alone');
    else logger.error({ alert: 'inline_projection_failed', ...what }, 'inline projection failed: the append was refused and rolled back (a projector bug: fix it, nothing was written)');
  };
  /** A projector's hook that says what to send before the append is made (opening, statements): a throw is the alert. */
  const said = <T>(projector: Projector, own: readonly { id: string; type: string; stream: string }[], grouped: boolean, hook: () => T): T => {
    try {
      return hook();
    } catch (err) {
      alert(projector, own, err, grouped);
      throw err;
    }
  };
  const projections: InlineProjections = {
    mark,
    handles: (type) => types.has(type),
    opening(events, literal, grouped = false) {
      const texts = handled.flatMap(({ projector, types: mine }) => {
        const own = events.filter((e) => mine.has(e.type));
        if (own.length === 0 || !projector.opening) return [];
        const text = said(projector, own, grouped, () => projector.opening!(own, literal));
        return text === null ? [] : [text];
      });
      return texts.length > 0 ? texts.join(';\n') : null;
    },
    statements(events, literal, grouped = false) {
      const parts: { projector: Projector; own: typeof events; statements: InlineStatement[] }[] = [];
      for (const { projector, types: mine } of handled) {
        const own = events.filter((e) => mine.has(e.type));
        if (own.length === 0) continue;
        if (!projector.statements) return null;
        const statements = said(projector, own, grouped, () => projector.statements!(own, literal));
        if (statements === null) return null;
        parts.push({ projector, own, statements });
      }
      if (parts.length === 0) return null;
      return {
        statements: parts.flatMap((p) => p.statements),
        committed: (recorded) => recorded.forEach((e) => types.has(e.type) && applied.add(e.position)),
        refused(err, inProjection) {
          // Which statement failed is not known (one message): the alert names every projector that had one.
          if (inProjection) alert({ name: parts.map((p) => p.projector.name).join(', ') }, parts.flatMap((p) => p.own), err, grouped);
        },
      };
    },
    async apply(events: RecordedEvent[], client: pg.PoolClient, opened: boolean, grouped = false) {
      const trx = kyselyOn(client) as unknown as Transaction<Database>;
      for (const { projector, types: mine } of handled) {
        const own = events.filter((e) => mine.has(e.type));
        if (own.length === 0) continue;
        try {
          // Its opening ran in the append's message when there was one (opening() above, for the same events).
          await projector.apply(own, trx, { opened: opened && projector.opening !== undefined });
        } catch (err) {
          alert(projector, own, err, grouped);
          throw err;
        }
      }
      for (const e of events) if (types.has(e.type)) applied.add(e.position);
    },
  };
  const names = new Set(projectors.map((p) => p.name));
  return { projections, applied, answered: (position, wanted) => wanted.every((n) => names.has(n)) && applied.wrote(position) };
}
