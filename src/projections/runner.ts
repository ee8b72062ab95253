/**
 * Runs one projector: follows the global log from its checkpoint and commits
 * the projector's rows and the checkpoint in one transaction. One active
 * instance per projector across processes (session advisory lock on a
 * dedicated connection: if the process dies, the lock goes with it).
 * A failing event stops the projector, is logged with the event id and shown
 * by /readyz; it is retried with backoff, never skipped.
 *
 * A batch with nothing for this projector (no event of its types, or none
 * its `relevant` keeps) needs no transaction: the runner
 * moves on in memory, tells waiters at once, and stores the checkpoint within
 * FLUSH_MS (or with its next real batch). Nothing is lost by a crash in
 * between: those events are read again and again need nothing. Six consumers
 * follow one log, and most events concern one or two of them.
 *
 * Batches are written on the connection that holds the advisory lock, in as
 * few round trips as a transaction allows: BEGIN, the checkpoint's
 * compare-and-set, the asynchronous-commit setting and the projector's
 * opening statement (the invoices' locks) go as one message, then the
 * projector's statements, then COMMIT (was: BEGIN, lock, statements,
 * update, COMMIT, on a pooled connection). On this 2-core machine every round
 * trip is a wake-up of two processes, which is most of a write's cost.
 */
import { sqlLiteral } from '../eventstore/sql-literal.ts';
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { isConnectionError } from '../db/connection.ts';
import { prepareRepeated } from '../db/prepared.ts';
import { comparePositions, type EventStore, type RecordedEvent } from '../eventstore/types.ts';
import { encodePosition } from '../eventstore/position.ts';
import type { Logger } from '../shared/logger.ts';
import { ensureCheckpoint, recordFailure } from './checkpoints.ts';
import type { ProjectionProgress } from './progress.ts';
import type { Projector } from './projector.ts';
import { Alarm } from '../shared/alarm.ts';
import { announcerFor, type ProgressAnnouncer } from './announcer.ts';
import type { Database } from '../db/schema.ts';
import { INLINE_BITS, type InlineApplied } from './inline.ts';

const FLUSH_MS = 500;

export interface RunnerDeps {
  db: Kysely<Database>;
  store: EventStore;
  url: string;
  logger: Logger;
  progress?: ProjectionProgress;
  batchSize?: number;
  /**
   * The appends this process wrote inline (inline.ts), which its writes answer
   * from at once: forgotten when a rebuild moved the checkpoint, since its
   * swap may have replaced their rows.
   */
  applied?: InlineApplied;
}

export type RunnerState = 'standby' | 'running' | 'failed' | 'stopped';

/** Someone else (a rebuild) moved the checkpoint: start again from the stored one. */
class CheckpointMoved extends Error {}

/** The lock's connection (which batches are written on) died: not the event's fault. */
class ConnectionLost extends Error {}

class EventFailed extends Error {
  constructor(readonly eventId: string, readonly cause: unknown) {
    super(`event ${eventId}: ${(cause as Error)?.message ?? String(cause)}`);
  }
}

export class ProjectionRunner {
  state: RunnerState = 'standby';
  lastError: { eventId: string | null; message: string } | null = null;
  private stopped = false;
  private readonly alarm = new Alarm();
  private loop: Promise<void> | null = null;
  /** How far this runner has read and applied (in memory). */
  private checkpoint: string | null = null;
  /** The checkpoint as stored; a transaction that finds another one lost the projector to a rebuild. */
  private persisted: string | null = null;
  /**
   * The row's updated_at as this runner last wrote or read it (text, exact to
   * the microsecond): a rebuild's swap always rewrites it, so the next
   * compare-and-set notices a swap even when the position did not move.
   */
  private persistedAt: string | null = null;
  /** Checkpoint writes, one at a time (batches and the lazy flush). */
  private writes: Promise<unknown> = Promise.resolve();
  private flushTimer: NodeJS.Timeout | null = null;
  private moved: (() => void) | null = null;
  private readonly handles: Set<string>;
  private readonly announce: ProgressAnnouncer;
  /** The lock's connection, on which batches are written (and Kysely over it, for projectors). */
  private conn: pg.Client | null = null;
  private connDb: Kysely<Database> | null = null;
  /** Set synchronously by the connection's error/end events, before its queries fail. */
  private connLost = false;
  /** This projector's bit in an event's inline mark (inline.ts): an append that wrote its rows set it. */
  private readonly bit: number;
  /**
   * Up to here (the log's head when this runner last started following), events marked with its bit are
   * applied anyway: a rebuild's swap may have replaced the rows their appends wrote (see follow()).
   */
  private reapplyThrough: string | null = null;

  constructor(private readonly deps: RunnerDeps, readonly projector: Projector) {
    this.handles = new Set(projector.handles);
    this.bit = INLINE_BITS[projector.name] ?? 0;
    this.announce = announcerFor(deps.db, deps.progress ? { name: projector.name, listener: deps.progress.listener } : null);
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.alarm.wake();
    await this.loop;
    this.state = 'stopped';
  }

  private async run(): Promise<void> {
    const { db, logger } = this.deps;
    const name = this.projector.name;
    let backoff = 1000;
    let checkpointRow = false;
    while (!this.stopped) {
      // Also the connection batches are written on: the service's name prefix (so
      // operators and the benchmarks' CPU accounting find it), and the pool's guard
      // against a transaction left open (it would hold every log consumer back).
      // Its repeated statements prepared once (src/db/prepared.ts), as on the pool's connections.
      const lock = prepareRepeated(new pg.Client({
        connectionString: this.deps.url,
        application_name: `invoicing:projector:${name}`,
        idle_in_transaction_session_timeout: 10_000,
      }));
      let lockLost: () => void = () => {};
      const lost = new Promise<void>((resolve) => (lockLost = resolve));
      this.connLost = false;
      const gone = () => {
        this.connLost = true;
        lockLost();
      };
      lock.on('error', gone);
      lock.on('end', gone);
      try {
        // In the loop: a database that is down at start-up is waited for like a lost one.
        if (!checkpointRow) checkpointRow = (await ensureCheckpoint(db, name), true);
        await lock.connect();
        const { rows } = await lock.query('select pg_try_advisory_lock(hashtext($1)) as ok', [`projector:${name}`]);
        if (!rows[0].ok) {
          this.state = 'standby';
          await lock.end();
          await this.alarm.sleep(2000);
          continue;
        }
        const outcome = await this.follow(lost, lock);
        if (outcome === 'failed') {
          await this.alarm.sleep(backoff);
          backoff = Math.min(backoff * 2, 300_000);
        } else {
          backoff = 1000;
        }
      } catch (err) {
        // The database is down or restarting: try again soon (a refused connection is
        // cheap), so the projector is back within a second of the database.
        if (isConnectionError(err)) logger.warn({ projector: name, err: String((err as Error).message) }, 'projector waiting for the database');
        else logger.error({ projector: name, err }, 'projector lock connection failed');
        await this.alarm.sleep(isConnectionError(err) ? 500 : 2000);
      } finally {
        await lock.end().catch(() => {});
      }
    }
  }

  /** Follows the log while we hold the lock; returns why it stopped. */
  private async follow(lockLost: Promise<void>, conn: pg.Client): Promise<'stopped' | 'moved' | 'failed' | 'lost'> {
    const { db, store, logger } = this.deps;
    this.conn = conn;
    this.connDb = onConnection(conn);
    const name = this.projector.name;
    const { rows } = await sql<{ position: string | null; at: string | null }>`
      select position, updated_at::text as at from projection_checkpoints where name = ${name}`.execute(db);
    this.checkpoint = this.persisted = rows[0]?.position ?? null;
    this.persistedAt = rows[0]?.at ?? null;
    // Events an append wrote inline are skipped, but not those a rebuild's swap may have undone: the swap
    // replaces every row written for events past the checkpoint it sets, and their runner learns of it only
    // later (at its next compare-and-set, or, if it stopped meanwhile, never: this one starts where the rebuild
    // left the checkpoint). Every event committed before the swap lies at or before the head read now, after
    // it; those are applied again (the rows' guards make that harmless), and marked ones after it skipped
    // (their appends waited for the swap's locks and wrote into the new rows).
    this.reapplyThrough = this.bit === 0 || store.kind !== 'postgres' ? null : await committedHead(db);
    this.deps.progress?.report(name, this.checkpoint);
    if (this.state !== 'failed') this.state = 'running';
    let finish: (why: 'stopped' | 'moved' | 'failed' | 'lost') => void = () => {};
    const ended = new Promise<'stopped' | 'moved' | 'failed' | 'lost'>((resolve) => (finish = resolve));
    const sub = store.subscribeToAll(this.checkpoint, (events) => this.handle(events), {
      batchSize: this.deps.batchSize ?? 500,
      types: this.projector.handles,
      onError: (err) => {
        if (err instanceof CheckpointMoved) return finish('moved');
        // A batch that failed because a connection died (the lock's, or the pool's that read
        // the log) is retried on the next connection, not blamed on its event.
        if (err instanceof ConnectionLost || this.connLost || isConnectionError(err)) return finish('lost');
        if (err instanceof EventFailed && isConnectionError(err.cause)) return finish('lost');
        const eventId = err instanceof EventFailed ? err.eventId : null;
        const message = err instanceof EventFailed ? String((err.cause as Error)?.message ?? err.cause) : String((err as Error)?.message ?? err);
        this.state = 'failed';
        this.lastError = { eventId, message };
        logger.error({ projector: name, event_id: eventId, err: message }, 'projector stopped on a failing event');
        void recordFailure(db, name, eventId, message).catch(() => {});
        finish('failed');
      },
    });
    void lockLost.then(() => finish('lost'));
    this.moved = () => finish('moved');
    const stopWatch = setInterval(() => this.stopped && finish('stopped'), 50);
    const why = await ended;
    clearInterval(stopWatch);
    // The swap of a rebuild may have replaced rows that this process's appends wrote inline: its writes
    // stop answering from them and wait for this runner, which follows again from the stored checkpoint
    // and applies every event up to the head it reads then (follow(), reapplyThrough).
    if (why === 'moved') this.deps.applied?.reset();
    await sub.stop();
    this.moved = null;
    // A pending lazy flush (a batch still running during stop() may have set one) belongs to
    // this connection: never let it fire during the next follow().
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    // Store what was read past the last real batch (unless someone else moved it).
    if (why !== 'lost' && why !== 'moved') await this.flush().catch(() => {});
    return why;
  }

  private async handle(events: RecordedEvent[]): Promise<void> {
    try {
      await this.applyBatch(events);
    } catch (err) {
      if (this.connLost || isConnectionError(err)) throw new ConnectionLost();
      if (err instanceof CheckpointMoved || events.length === 1) {
        throw err instanceof CheckpointMoved ? err : new EventFailed(events[0].id, err);
      }
      // Find the failing event: everything before it still gets applied.
      for (const event of events) {
        try {
          await this.applyBatch([event]);
        } catch (e) {
          if (this.connLost || isConnectionError(e)) throw new ConnectionLost();
          throw e instanceof CheckpointMoved ? e : new EventFailed(event.id, e);
        }
      }
    }
    if (this.state === 'failed') {
      this.state = 'running';
      this.lastError = null;
    }
  }

  private async applyBatch(events: RecordedEvent[]): Promise<void> {
    const last = events[events.length - 1].position;
    let mine = events.filter((e) => this.handles.has(e.type) && !this.writtenInline(e));
    if (mine.length > 0 && this.projector.relevant) mine = await this.projector.relevant(mine, this.deps.db);
    if (mine.length === 0) {
      this.advanced(last);
      this.flushTimer ??= setTimeout(() => void this.flush().catch(() => {}), FLUSH_MS);
      return;
    }
    await this.write(last, mine);
    this.advanced(last);
  }

  /** The event's append wrote this projector's rows, and no rebuild's swap can have replaced them since. */
  private writtenInline(event: RecordedEvent): boolean {
    return ((event.inlineProjectors ?? 0) & this.bit) !== 0 && comparePositions(event.position, this.reapplyThrough) > 0;
  }

  private advanced(position: string): void {
    this.checkpoint = position;
    this.deps.progress?.report(this.projector.name, position);
    this.announce.signal(position, this.projector.name);
  }

  /** Stores the in-memory checkpoint when it is ahead of the stored one. */
  private async flush(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    if (this.checkpoint === null || this.checkpoint === this.persisted) return;
    try {
      await this.write(null, []);
    } catch (err) {
      if (err instanceof CheckpointMoved) this.moved?.();
      else throw err;
    }
  }

  /**
   * One transaction: the checkpoint row locked and checked, the rows, the new
   * checkpoint. `position` null: a flush, of wherever the runner is when its
   * turn comes (never behind what a batch queued before it stored).
   */
  private write(target: string | null, events: RecordedEvent[]): Promise<void> {
    const name = this.projector.name;
    const run = async () => {
      const position = target ?? this.checkpoint;
      if (position === null || comparePositions(position, this.persisted) <= 0) return;
      const conn = this.conn!;
      const literal = (v: string | null) => (v === null ? 'null' : sqlLiteral(v));
      // One message (simple protocol, so no parameters: the values are escaped literals).
      // The compare-and-set takes the row lock a rebuild holds while it swaps the tables;
      // the commit does not wait for the WAL flush: a batch lost in a crash takes its
      // checkpoint with it and is applied again.
      try {
        // Inside the try: should the update fail after BEGIN (a cancelled lock wait), the
        // rollback below must still end the transaction (a ROLLBACK without one only warns).
        // The projector's opening statement (the invoices' locks) rides along, after the checkpoint's.
        const opening = events.length > 0 ? (this.projector.opening?.(events, sqlLiteral) ?? null) : null;
        const opened = (await conn.query(`begin; set local synchronous_commit to off;
          update projection_checkpoints set position = ${literal(position)}, updated_at = clock_timestamp(), failed_event_id = null, error = null
           where name = ${literal(name)} and position is not distinct from ${literal(this.persisted)}
             and updated_at is not distinct from ${literal(this.persistedAt)}::timestamptz
          returning updated_at::text as at${opening === null ? '' : `;\n${opening}`}`)) as unknown as pg.QueryResult[];
        if (opened[2].rowCount !== 1) throw new CheckpointMoved();
        if (events.length > 0) await this.projector.apply(events, this.connDb as unknown as Transaction<Database>, { opened: opening !== null });
        await conn.query('commit');
        this.persistedAt = opened[2].rows[0].at;
      } catch (err) {
        await conn.query('rollback').catch(() => {});
        throw err;
      }
      this.persisted = position;
    };
    const done = this.writes.then(run, run);
    this.writes = done.catch(() => {});
    return done;
  }
}

/**
 * The position of the newest event committed, whatever older transaction is
 * still open (unlike EventStore.headPosition, which stops below the oldest
 * one: an event committed past it would be missed).
 */
async function committedHead(db: Kysely<Database>): Promise<string | null> {
  const { rows } = await sql<{ tx: string; pos: string }>`
    select transaction_id::text as tx, global_position::text as pos from es_events order by transaction_id desc, global_position desc limit 1`.execute(db);
  return rows[0] ? encodePosition(rows[0].tx, rows[0].pos) : null;
}

/**
 * Kysely over one client: a projector's statements run on the connection
 * whose transaction the runner opened (PostgresDialect only needs a pool
 * that hands out that client and a release that keeps it).
 */
function onConnection(client: pg.Client): Kysely<Database> {
  const target = client as unknown as { query(...args: unknown[]): unknown };
  const lease = { query: (...args: unknown[]) => target.query(...args), release() {} };
  return new Kysely<Database>({
    dialect: new PostgresDialect({ pool: { connect: async () => lease, end: async () => {} } as any }),
  });
}
