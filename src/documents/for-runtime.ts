/**
 * One DocumentService per runtime (so one warm browser per process),
 * created on the first document request and closed with the runtime.
 * PDF_RENDER_TIMEOUT_MS (default 20000) bounds one render.
 */
import type { Runtime } from '../runtime.ts';
import { DocumentService } from './service.ts';

const services = new WeakMap<Runtime, DocumentService>();

function renderTimeout(): number {
  const raw = process.env.PDF_RENDER_TIMEOUT_MS;
  if (raw === undefined || raw === '') return 20_000;
  if (!/^\d+$/.test(raw) || Number(raw) < 100) throw new Error(`PDF_RENDER_TIMEOUT_MS: "${raw}" is not a number of milliseconds >= 100`);
  return Number(raw);
}

export function documentsFor(rt: Runtime): DocumentService {
  let service = services.get(rt);
  if (!service) {
    const created = new DocumentService({ pool: rt.database.pool, db: rt.database.db, store: rt.store }, { chromiumPath: rt.config.chromiumPath, renderTimeoutMs: renderTimeout() });
    service = created;
    services.set(rt, created);
    const close = rt.close.bind(rt);
    rt.close = async () => {
      await created.close().catch(() => {});
      await close();
    };
  }
  return service;
}

/** The PDF printer's state for /readyz, without starting anything. */
export function documentsStatus(rt: Runtime): object {
  const service = services.get(rt);
  return service ? service.status() : { state: 'not_started' };
}
