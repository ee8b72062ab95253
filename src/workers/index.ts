/**
 * Every background worker, by role. Projectors are started by the projector
 * role (src/projections); the webhook subscriber and senders by 'webhooks';
 * the recurring scheduler by 'scheduler'.
 */
import type { Worker } from './worker.ts';

export const workers: Worker[] = [];
