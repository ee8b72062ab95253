/**
 * One DocumentService per runtime (so one warm browser per process),
 * created on the first document request and closed with the runtime.
 * PDF_RENDER_TIMEOUT_MS (rt.config.pdfRenderTimeoutMs, default 20000) bounds one render;
 * PDF_CACHE_MB (rt.config.pdfCacheMb, default 16) is the cache's budget; PDF_PAGES
 * (rt.config.pdfPages, default 1) the warm pages printing at once.
 */
import type { Runtime } from '../runtime.ts';
import { DocumentService } from './service.ts';

const services = new WeakMap<Runtime, DocumentService>();

export function documentsFor(rt: Runtime): DocumentService {
  let service = services.get(rt);
  if (!service) {
    const created = new DocumentService({ pool: rt.database.pool, db: rt.database.db, store: rt.store }, {
      chromiumPath: rt.config.chromiumPath,
      renderTimeoutMs: rt.config.pdfRenderTimeoutMs,
      cacheBytes: rt.config.pdfCacheMb * 1024 * 1024,
      pages: rt.config.pdfPages,
    });
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
