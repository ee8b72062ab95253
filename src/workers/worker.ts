import type { Role } from '../config.ts';
import type { Runtime } from '../runtime.ts';

/** A background worker started by the process shell for its role. */
export interface Worker {
  name: string;
  role: Exclude<Role, 'api'>;
  /** Starts it; the returned stop() finishes the current batch and returns. */
  start(rt: Runtime): Promise<{ stop(): Promise<void> }>;
}
