/**
 * Every background worker, by role. Projectors are started by the projector
 * role (src/projections); the webhook subscriber and senders by 'webhooks';
 * the recurring scheduler by 'scheduler'.
 */
import { auditDigestWorker } from './audit-digest.ts';
import { finalizationRecoveryWorker } from './finalization-recovery.ts';
import { reservationRecoveryWorker } from './reservation-recovery.ts';
import type { Worker } from './worker.ts';
import { webhookWorkers } from './webhooks/index.ts';

export const workers: Worker[] = [reservationRecoveryWorker, finalizationRecoveryWorker, ...webhookWorkers, auditDigestWorker];
