/**
 * One warm Chromium per process, printing HTML to PDF.
 *
 * - Launched on the first print and kept, with one shared browser context
 *   that aborts every request (and is offline): a document is
 *   self-contained, so anything that tries to load is a bug or an
 *   injection, never a fetch.
 * - Invoices (`printDocument`) go to warm pages: a few pages (`pages`, 2 by
 *   default) that loaded the fonts once, when they were opened, and keep
 *   them; each render replaces everything else in the page (the <html>
 *   attributes, the title, the styles, the body), so nothing of one invoice
 *   is left for the next. A page in trouble (an error, a timeout) is closed
 *   instead of going back. Renders beyond `pages` wait for a free page,
 *   which also bounds Chromium's memory. Arbitrary HTML (`print`) gets a new
 *   page, closed afterwards.
 * - A print that takes longer than `timeoutMs` is abandoned: its page is
 *   closed (the browser too if the page will not close) and the caller gets
 *   PdfUnavailable, so a request is never held for ever.
 * - A browser that crashes or disconnects is forgotten; the next print
 *   launches a new one. `status()` says which state it is in (/readyz).
 */
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { chromiumArgs, findChromium } from './chromium.ts';
import { shellHtml, type PrintableDocument } from './pdf-view.ts';

export class PdfUnavailable extends Error {
  constructor(message: string, readonly reason: 'not_found' | 'launch_failed' | 'crashed' | 'timeout') {
    super(message);
    this.name = 'PdfUnavailable';
  }
}

export interface PrinterStatus {
  state: 'not_started' | 'starting' | 'ready' | 'unavailable';
  executable: string | null;
  version: string | null;
  error: string | null;
  /** Requests the pages tried to make, all refused. */
  blocked_requests: number;
  launches: number;
  /** Warm pages opened since start (each loads the fonts once; a steady state opens none). */
  pages_opened: number;
}

interface Warm {
  browser: Browser;
  context: BrowserContext;
  pages: PagePool;
}

/**
 * Up to `max` warm pages of one context. `acquire` hands out an idle page,
 * opens one while fewer than `max` exist, else waits for a release.
 */
class PagePool {
  private readonly idle: Page[] = [];
  private readonly waiting: (() => void)[] = [];
  private open = 0;

  constructor(private readonly max: number, private readonly openPage: () => Promise<Page>) {}

  async acquire(): Promise<Page> {
    for (;;) {
      const page = this.idle.pop();
      if (page) {
        if (!page.isClosed()) return page;
        this.open--;
        continue;
      }
      if (this.open < this.max) {
        this.open++;
        try {
          return await this.openPage();
        } catch (err) {
          this.freed();
          throw err;
        }
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
  }

  /** A page back after a clean render, ready for the next one. */
  release(page: Page): void {
    if (page.isClosed()) return this.discard(page);
    this.idle.push(page);
    this.waiting.shift()?.();
  }

  /** A page that must not be used again (error, timeout, crash): closed, its slot freed. */
  discard(page: Page, close = true): void {
    if (close && !page.isClosed()) void page.close().catch(() => {});
    this.freed();
  }

  private freed(): void {
    this.open--;
    this.waiting.shift()?.();
  }

  get size(): number {
    return this.open;
  }
}

export class PdfPrinter {
  private warm: Promise<Warm> | null = null;
  private state: PrinterStatus = { state: 'not_started', executable: null, version: null, error: null, blocked_requests: 0, launches: 0, pages_opened: 0 };
  private closed = false;

  constructor(private readonly options: { chromiumPath: string | null; timeoutMs: number; newContextPerPrint?: boolean; pages?: number }) {}

  /** The benchmark's naive baseline: a new context per print, every document whole (fonts inlined). */
  get naive(): boolean {
    return this.options.newContextPerPrint === true;
  }

  status(): PrinterStatus {
    return { ...this.state };
  }

  private launch(): Promise<Warm> {
    this.state.state = 'starting';
    const attempt = (async () => {
      const executablePath = await findChromium(this.options.chromiumPath).catch((err: Error) => {
        throw new PdfUnavailable(err.message, 'not_found');
      });
      this.state.executable = executablePath;
      const browser = await chromium.launch({ executablePath, headless: true, args: chromiumArgs(), timeout: 30_000 }).catch((err: Error) => {
        throw new PdfUnavailable(`Chromium (${executablePath}) did not start: ${err.message.split('\n')[0]}`, 'launch_failed');
      });
      browser.on('disconnected', () => {
        if (this.warm === attempt) this.warm = null;
        if (!this.closed) Object.assign(this.state, { state: 'unavailable', error: 'Chromium exited; it is relaunched on the next render' });
      });
      const context = await this.newContext(browser);
      const pages = new PagePool(this.options.pages ?? 2, () => this.openWarmPage(context));
      this.state.launches++;
      Object.assign(this.state, { state: 'ready', version: browser.version(), error: null });
      return { browser, context, pages };
    })();
    attempt.catch((err: Error) => {
      if (this.warm === attempt) this.warm = null;
      Object.assign(this.state, { state: 'unavailable', error: err.message });
    });
    return attempt;
  }

  private async newContext(browser: Browser): Promise<BrowserContext> {
    const context = await browser.newContext({ offline: true, javaScriptEnabled: false, serviceWorkers: 'block' });
    await context.route('**/*', (route) => {
      this.state.blocked_requests++;
      return route.abort('blockedbyclient');
    });
    return context;
  }

  /**
   * A page holding the empty document with every font (pdf-view.ts
   * `shellHtml`), each face loaded and decoded now, once for the page's
   * life, instead of with every invoice.
   */
  private async openWarmPage(context: BrowserContext): Promise<Page> {
    const page = await context.newPage().catch((err: Error) => {
      throw new PdfUnavailable(`Chromium could not open a page: ${err.message.split('\n')[0]}`, 'crashed');
    });
    try {
      await page.setContent(shellHtml(), { waitUntil: 'load', timeout: this.options.timeoutMs });
      await page.evaluate(() => Promise.all([...document.fonts].map((face) => face.load())).then(() => undefined));
      this.state.pages_opened++;
      return page;
    } catch (err) {
      void page.close().catch(() => {});
      throw err;
    }
  }

  /** The warm browser (launched if needed). Exposed for tests that crash it on purpose. */
  async browser(): Promise<Browser> {
    return (await this.ready()).browser;
  }

  private ready(): Promise<Warm> {
    if (this.closed) return Promise.reject(new PdfUnavailable('the PDF printer is shut down', 'crashed'));
    this.warm ??= this.launch();
    return this.warm;
  }

  /** HTML (self-contained, with its @page rules) -> PDF bytes. */
  async print(html: string): Promise<Buffer> {
    const warm = await this.ready();
    const context = this.options.newContextPerPrint ? await this.newContext(warm.browser) : warm.context;
    const page = await context.newPage().catch((err: Error) => {
      throw new PdfUnavailable(`Chromium could not open a page: ${err.message.split('\n')[0]}`, 'crashed');
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new PdfUnavailable(`the render took longer than ${this.options.timeoutMs} ms and was stopped`, 'timeout')), this.options.timeoutMs);
    });
    const work = (async () => {
      await page.setContent(html, { waitUntil: 'load', timeout: this.options.timeoutMs });
      // Size, margins and the footer come from the page's own @page rules.
      return page.pdf({ printBackground: true, preferCSSPageSize: true });
    })();
    try {
      return await Promise.race([work, timeout]);
    } catch (err) {
      if (err instanceof PdfUnavailable) {
        if (err.reason === 'timeout') this.abandon(warm, page);
        throw err;
      }
      if (!warm.browser.isConnected()) throw new PdfUnavailable('Chromium exited during the render; it is relaunched on the next request', 'crashed');
      throw err;
    } finally {
      clearTimeout(timer);
      work.catch(() => {}); // a late failure of an abandoned render is not an unhandled rejection
      if (!page.isClosed()) void page.close().catch(() => {});
      if (this.options.newContextPerPrint && context !== warm.context) void context.close().catch(() => {});
    }
  }

  /**
   * An invoice's parts (pdf-view.ts `invoiceDocument`) -> PDF bytes, on a
   * warm page: its fonts are already loaded, everything else is replaced.
   */
  async printDocument(doc: PrintableDocument): Promise<Buffer> {
    const warm = await this.ready();
    const page = await warm.pages.acquire();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new PdfUnavailable(`the render took longer than ${this.options.timeoutMs} ms and was stopped`, 'timeout')), this.options.timeoutMs);
    });
    const work = (async () => {
      await page.evaluate(async ({ lang, dir, title, style, body }) => {
        const root = document.documentElement;
        root.lang = lang;
        root.dir = dir;
        document.title = title;
        document.getElementById('document-style')!.textContent = style;
        document.body.innerHTML = body;
        // Every face is loaded already (openWarmPage); wait anyway should a layout ask for one.
        void document.body.offsetHeight;
        await document.fonts.ready;
      }, doc);
      return page.pdf({ printBackground: true, preferCSSPageSize: true });
    })();
    let outcome: 'printed' | 'abandoned' | 'failed' = 'failed';
    try {
      const pdf = await Promise.race([work, timeout]);
      outcome = 'printed';
      return pdf;
    } catch (err) {
      if (err instanceof PdfUnavailable) {
        if (err.reason === 'timeout') {
          outcome = 'abandoned';
          this.abandon(warm, page);
        }
        throw err;
      }
      if (!warm.browser.isConnected()) throw new PdfUnavailable('Chromium exited during the render; it is relaunched on the next request', 'crashed');
      throw err;
    } finally {
      clearTimeout(timer);
      work.catch(() => {}); // a late failure of an abandoned render is not an unhandled rejection
      if (outcome === 'printed') warm.pages.release(page);
      else warm.pages.discard(page, outcome === 'failed'); // abandon() closes a hung page itself
    }
  }

  /** A hung page: close it; if even that does not finish, drop the whole browser. */
  private abandon(warm: Warm, page: { close(): Promise<void> }): void {
    const closed = page.close().then(() => true, () => false);
    const grace = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 2000).unref());
    void Promise.race([closed, grace]).then((ok) => {
      if (ok) return;
      if (this.warm) this.warm = null;
      void warm.browser.close().catch(() => {});
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const warm = this.warm;
    this.warm = null;
    if (warm) await warm.then((w) => w.browser.close(), () => {});
  }
}
