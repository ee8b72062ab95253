/**
 * A fresh database with the webhook pipeline running on it, in-process:
 * the event store, the subscriber (ProjectionRunner) and N senders with a
 * shortened retry ladder and timeout, insecure mode (loopback receivers).
 */
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import type { EventStore } from '../../src/eventstore/types.ts';
import { ProjectionRunner } from '../../src/projections/runner.ts';
import { createLogger, silentLogger } from '../../src/shared/logger.ts';
import { WebhookSender, type SenderOptions } from '../../src/workers/webhooks/sender.ts';
import { createWebhookSubscriber } from '../../src/workers/webhooks/subscriber.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';

export interface Harness {
  t: TestDatabase;
  store: EventStore;
  runner: ProjectionRunner;
  senders: WebhookSender[];
  addSender(overrides?: Partial<SenderOptions>): WebhookSender;
  stop(): Promise<void>;
}

export interface HarnessOptions extends Partial<SenderOptions> {
  senders?: number;
}

export const logger = process.env.TEST_LOG ? createLogger(process.env.TEST_LOG) : silentLogger;

export async function startHarness(o: HarnessOptions = {}): Promise<Harness> {
  const t = await freshDatabase();
  const store = await createPostgresEventStore(t.pool, t.url);
  const runner = new ProjectionRunner({ db: t.db, store, url: t.url, logger }, createWebhookSubscriber());
  runner.start();
  const senders: WebhookSender[] = [];
  const { senders: count = 1, ...overrides } = o;
  const addSender = (more: Partial<SenderOptions> = {}) => {
    const sender = new WebhookSender({
      db: t.db,
      url: t.url,
      logger,
      retryDelaysMs: [100, 200, 300, 400, 500],
      allowInsecure: true,
      timeoutMs: 2000,
      pollMs: 200,
      stopGraceMs: 200,
      ...overrides,
      ...more,
    });
    sender.start();
    senders.push(sender);
    return sender;
  };
  for (let i = 0; i < count; i++) addSender();
  return {
    t,
    store,
    runner,
    senders,
    addSender,
    async stop() {
      await Promise.all(senders.map((s) => s.stop()));
      await runner.stop();
      await store.close();
      await t.drop();
    },
  };
}
