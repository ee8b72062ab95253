/**
 * The webhook workers of role 'webhooks': the subscriber (log -> deliveries,
 * one active instance across processes) and a sender (deliveries -> HTTP,
 * any number of processes).
 */
import type { Config } from '../../config.ts';
import { ProjectionRunner } from '../../projections/runner.ts';
import type { Runtime } from '../../runtime.ts';
import type { Worker } from '../worker.ts';
import { WebhookSender } from './sender.ts';
import { createWebhookSubscriber } from './subscriber.ts';

/**
 * WEBHOOK_ALLOW_INSECURE, or its default (docs/api-decisions.md "Webhooks"): true only in
 * test mode on the embedded database, i.e. a developer's machine.
 */
export function webhookAllowInsecure(config: Config, embeddedDatabase: boolean): boolean {
  return config.webhookAllowInsecure ?? (config.serviceMode === 'test' && embeddedDatabase);
}

export const webhookSubscriberWorker: Worker = {
  name: 'webhook-subscriber',
  role: 'webhooks',
  async start(rt: Runtime) {
    const { db, url } = rt.database;
    const runner = new ProjectionRunner({ db, store: rt.store, url, logger: rt.logger, progress: rt.progress, batchSize: 500 }, createWebhookSubscriber());
    runner.start();
    return { stop: () => runner.stop() };
  },
};

export const webhookSenderWorker: Worker = {
  name: 'webhook-sender',
  role: 'webhooks',
  async start(rt: Runtime) {
    const sender = new WebhookSender({
      db: rt.database.db,
      url: rt.database.url,
      logger: rt.logger,
      retryDelaysMs: rt.config.webhookRetryDelaysMs,
      timeoutMs: rt.config.webhookTimeoutMs,
      allowInsecure: webhookAllowInsecure(rt.config, rt.database.embedded !== null),
    });
    sender.start();
    return { stop: () => sender.stop() };
  },
};
