/**
 * What every role of a process shares: configuration, logger, the database
 * (read models, configuration tables, and by default the event store), the
 * event store, the read-model projectors of the process (src/main.ts names
 * them) and their progress (for read-your-writes).
 */
import { ConfigError, type Config } from './config.ts';
import { openDatabase, type DatabaseConnection } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { createPostgresEventStore } from './eventstore/postgres.ts';
import type { EventStore } from './eventstore/types.ts';
import { inlineProjections, type InlineSetup } from './projections/inline.ts';
import { ProjectionProgress } from './projections/progress.ts';
import type { Projector } from './projections/projector.ts';
import type { Logger } from './shared/logger.ts';
import { timeAppend } from './shared/metrics.ts';

export interface Runtime {
  config: Config;
  logger: Logger;
  database: DatabaseConnection;
  store: EventStore;
  /**
   * The event store for writers no client waits on (the scheduler's ticks):
   * `store` without its inline projections, so their rows are written by the
   * runners, many events per transaction, rather than one append at a time.
   * `store` itself where nothing is inline (EventStoreDB, INLINE_PROJECTIONS=never).
   */
  backgroundStore: EventStore;
  /** Every read-model projector: writes wait for them, /readyz and the CLI report them, the projector role runs them. */
  projectors: readonly Projector[];
  progress: ProjectionProgress;
  /** The projectors applied in the append's transaction (PostgreSQL event store only; null with EventStoreDB). */
  inline: InlineSetup | null;
  /** HTTP requests being served now (the access log counts them; INLINE_PROJECTIONS=auto reads them). */
  requests: { inProgress: number };
  close(): Promise<void>;
}

/**
 * Every append is timed for /metrics (eventstore_append_duration_seconds),
 * whichever adapter runs, without a line in the adapters.
 */
function timedAppends(store: EventStore): EventStore {
  const timed = async <T>(append: () => Promise<T>): Promise<T> => {
    const done = timeAppend(store.kind);
    try {
      const result = await append();
      done('ok');
      return result;
    } catch (err) {
      done('error');
      throw err;
    }
  };
  const append = store.appendToStream.bind(store);
  store.appendToStream = (stream, events, expected) => timed(() => append(stream, events, expected));
  const appendMany = store.appendToStreams?.bind(store);
  if (appendMany) store.appendToStreams = (appends) => timed(() => appendMany(appends));
  // A view under a condition (a write on a remembered key) appends with its own functions: timed too.
  const withCondition = store.withCondition?.bind(store);
  if (withCondition) store.withCondition = (condition) => timedAppends(withCondition(condition));
  return store;
}

/** The event store, and the same for writers no client waits on (Runtime.backgroundStore). */
async function openEventStore(
  config: Config,
  database: DatabaseConnection,
  inline: InlineSetup | null,
  requests: Runtime['requests'],
): Promise<{ store: EventStore; background: EventStore }> {
  if (!config.eventstoreUrl) {
    // auto: a creation while other requests are in progress goes in a group of creations (docs/architecture.md
    // "Creations under load"); true: each write in its own transaction.
    const groupCreations = config.inlineProjections === 'auto' ? () => requests.inProgress > 1 : undefined;
    const store = await createPostgresEventStore(database.pool, database.url, { inline: inline?.projections, groupCreations });
    const view = store.withoutInlineProjections?.();
    const timed = timedAppends(store);
    return { store: timed, background: view ? timedAppends(view) : timed };
  }
  const { createEventStoreDBEventStore } = await import('./eventstore/esdb.ts');
  try {
    const store = await createEventStoreDBEventStore(config.eventstoreUrl);
    await store.headPosition(); // fail now, not on the first request
    const timed = timedAppends(store);
    return { store: timed, background: timed }; // nothing is inline on EventStoreDB
  } catch (err: any) {
    throw new ConfigError('EVENTSTORE_URL', `cannot reach EventStoreDB: ${err?.message ?? err}`);
  }
}

export interface RuntimeOptions {
  /** The read-model projectors of the process (src/main.ts). */
  projectors: readonly Projector[];
  poolSize?: number;
  applicationName?: string;
}

export async function openRuntime(config: Config, logger: Logger, options: RuntimeOptions): Promise<Runtime> {
  const { projectors } = options;
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    embeddedPort: config.embeddedPgPort,
    poolSize: options.poolSize,
    applicationName: options.applicationName,
    onEmbeddedLog: (line) => logger.debug({ postgres: line.trim() }, 'embedded postgres'),
  });
  try {
    await migrateToLatest(database.db);
    // EventStoreDB shares no transaction with the read models: there every projector runs async.
    const inlined = projectors.filter((p) => p.inline);
    const inline = config.eventstoreUrl || config.inlineProjections === 'never' || inlined.length === 0 ? null : inlineProjections(inlined, logger);
    const requests = { inProgress: 0 };
    const { store, background } = await openEventStore(config, database, inline, requests);
    const progress = new ProjectionProgress(database.db, database.url, projectors.map((p) => p.name));
    await progress.start();
    return {
      config,
      logger,
      database,
      store,
      backgroundStore: background,
      projectors,
      progress,
      inline,
      requests,
      async close() {
        await progress.close();
        await store.close();
        await database.close();
      },
    };
  } catch (err) {
    await database.close().catch(() => {});
    await database.embedded?.release().catch(() => {});
    throw err;
  }
}
