/**
 * Bookkeeping of every log consumer (migration 0002): one checkpoint row per
 * projector or worker consumer (src/projections/runner.ts, status.ts).
 */
import type { Selectable } from 'kysely';
import type { Timestamp } from './columns.ts';

export interface ProjectionCheckpointsTable {
  name: string;
  position: string | null;
  updated_at: Timestamp;
  failed_event_id: string | null;
  error: string | null;
}

export interface ProjectionsTables {
  projection_checkpoints: ProjectionCheckpointsTable;
}

export type ProjectionCheckpointRow = Selectable<ProjectionCheckpointsTable>;
