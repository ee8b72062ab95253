/**
 * The document exports of one process: the PDF (cached, printed by the warm
 * browser) and the UBL XML of an issued invoice, in the organization's
 * scope. Routes call `pdf()` and `xml()`; /readyz reads `status()`.
 */
import type { Kysely } from 'kysely';
import type pg from 'pg';
import type { EventStore } from '../eventstore/types.ts';
import { DomainError, notFound } from '../shared/errors.ts';
import { DocumentCache } from './cache.ts';
import type { DocumentLocale } from './locale.ts';
import { invoiceDocument, invoiceHtml, invoiceView } from './pdf-view.ts';
import { PdfPrinter, PdfUnavailable, type PrinterStatus } from './printer.ts';
import { loadDocumentSource, type DocumentSource } from './source.ts';
import { renderUbl } from './ubl.ts';
import type { Database } from '../db/schema.ts';

export interface DocumentFile {
  filename: string;
  body: Buffer | string;
}

export interface DocumentServiceOptions {
  chromiumPath: string | null;
  /** A render that takes longer is stopped and answered 503 (default 20 s). */
  renderTimeoutMs?: number;
  /**
   * Cache budget in bytes (default 16 MiB: some 400 one-page invoices of 26 to 48 KB: a small part of the
   * server's memory with its warm browser, some 360 MiB, docs/performance.md "PDF memory, again").
   */
  cacheBytes?: number;
  /** Warm pages printing at once (the printer's default, 1, when not given). */
  pages?: number;
  /** The naive baseline of the benchmark: a new browser context per render and no cache. */
  naive?: boolean;
}

/**
 * The PDF of an issued invoice, with its marks; no I/O besides the browser.
 * A warm page of the printer receives the invoice's parts; the naive
 * baseline prints the whole self-contained document on a new page.
 */
export function renderPdf(printer: PdfPrinter, source: DocumentSource, locale: DocumentLocale): Promise<Buffer> {
  const view = invoiceView(source, locale);
  return printer.naive ? printer.print(invoiceHtml(view, source)) : printer.printDocument(invoiceDocument(view));
}

export class DocumentService {
  readonly printer: PdfPrinter;
  readonly cache: DocumentCache;

  constructor(private readonly deps: { pool: pg.Pool; db: Kysely<Database>; store: EventStore }, private readonly options: DocumentServiceOptions) {
    this.printer = new PdfPrinter({ chromiumPath: options.chromiumPath, timeoutMs: options.renderTimeoutMs ?? 20_000, newContextPerPrint: options.naive, pages: options.pages });
    this.cache = new DocumentCache(options.cacheBytes ?? 16 * 1024 * 1024);
  }

  private async issued(organizationId: string, invoiceId: string, unavailable: 'PDF_NOT_AVAILABLE' | 'XML_NOT_AVAILABLE'): Promise<DocumentSource> {
    const source = await loadDocumentSource(this.deps, organizationId, invoiceId);
    if (!source) throw notFound('Invoice');
    if (source.invoice.status === 'draft' || !source.invoice.invoice_number) {
      const what = unavailable === 'PDF_NOT_AVAILABLE' ? 'PDF' : 'XML';
      throw new DomainError(unavailable, `The ${what} exists once the invoice is finalized; this invoice is a draft.`);
    }
    return source;
  }

  async pdf(organizationId: string, invoiceId: string, locale: DocumentLocale): Promise<DocumentFile> {
    const source = await this.issued(organizationId, invoiceId, 'PDF_NOT_AVAILABLE');
    const { invoice } = source;
    const render = () => renderPdf(this.printer, source, locale);
    try {
      const body = this.options.naive ? await render() : await this.cache.get(DocumentCache.key(invoice.id, invoice.version, locale), render);
      return { filename: `${invoice.invoice_number}.pdf`, body };
    } catch (err) {
      if (err instanceof PdfUnavailable) {
        throw new DomainError('PDF_RENDERER_UNAVAILABLE', `The PDF could not be rendered: ${err.message}. The rest of the API is unaffected; retry shortly.`, { reason: err.reason });
      }
      throw err;
    }
  }

  async xml(organizationId: string, invoiceId: string): Promise<DocumentFile> {
    const source = await this.issued(organizationId, invoiceId, 'XML_NOT_AVAILABLE');
    return { filename: `${source.invoice.invoice_number}.xml`, body: renderUbl(source) };
  }

  status(): PrinterStatus & { cached_documents: number } {
    return { ...this.printer.status(), cached_documents: this.cache.size };
  }

  close(): Promise<void> {
    return this.printer.close();
  }
}
