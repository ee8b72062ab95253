/**
 * One warm Chromium per process, printing HTML to PDF.
 *
 * - Launched on the first print and kept. Every page it opens is offline,
 *   runs no script of its own and has every request aborted: a document is
 *   self-contained, so anything that tries to load is a bug or an
 *   injection, never a fetch.
 * - Invoices (`printDocument`) go to warm pages (`pages`: PDF_PAGES, 1 by
 *   default: one renderer process prints some 30 PDFs/s, and each more page
 *   is a renderer of its own, docs/documents.md "Warm pages") that loaded
 *   the fonts once, when they were opened, and keep them; each render
 *   replaces everything else in the page (the <html> attributes, the title,
 *   the styles, the body), so nothing of one invoice is left for the next. A
 *   page in trouble (an error, a timeout) is closed instead of going back.
 *   Renders beyond `pages` wait for a free page (at most `pageWaitMs`, the
 *   render timeout by default, then PdfUnavailable 'timeout'), which also
 *   bounds Chromium's memory. Arbitrary HTML (`print`) gets a new page,
 *   closed afterwards.
 * - A print that takes longer than `timeoutMs` is abandoned: its page is
 *   closed (the browser killed if the page will not close) and the caller gets
 *   PdfUnavailable, so a request is never held for ever.
 * - A browser that crashes or disconnects is forgotten; the next print
 *   launches a new one. `status()` says which state it is in (/readyz).
 * - Every `GC_EVERY` renders a warm page's renderer collects its garbage
 *   before the page goes back: a renderer that only prints allocates too
 *   little to trigger its own collections, and grew from 80 to 190 MiB
 *   over 80 renders without them (docs/performance.md, "PDF memory").
 * - PDFs are untagged, as Playwright printed them: Puppeteer tags them by
 *   default, which doubles a one-page invoice (26 -> 50 KB) and costs a
 *   third more time, for a structure tree no invoice reader uses.
 *
 * Driven by puppeteer-core over a pipe (not playwright-core, which the
 * browser tests use): its client costs the server some 25 MiB, Playwright's
 * some 90, with everything else equal (docs/documents.md "The browser").
 */
import puppeteer, { type Browser, type BrowserContext, type CDPSession, type Page } from 'puppeteer-core';
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
  /** Garbage collections asked of warm pages' renderers (one per GC_EVERY renders of a page). */
  collections: number;
}

interface Warm {
  browser: Browser;
  context: BrowserContext;
  pages: PagePool;
}

/** A warm page's renderer collects its garbage after this many renders (see the header). */
export const GC_EVERY = 4;

/** What the printer keeps beside a warm page: its DevTools session (for the collections) and its renders. */
const warmPages = new WeakMap<Page, { session: CDPSession; renders: number }>();

/**
 * Up to `max` warm pages of one context. `acquire` hands out an idle page,
 * opens one while fewer than `max` exist, else waits for a release, at
 * most `waitMs`: a render stuck on the only page (until its own timeout)
 * must not hold every request queued behind it for as long again each.
 */
class PagePool {
  private readonly idle: Page[] = [];
  private readonly waiting: (() => void)[] = [];
  private open = 0;

  constructor(private readonly max: number, private readonly openPage: () => Promise<Page>) {}

  async acquire(waitMs: number): Promise<Page> {
    const deadline = Date.now() + waitMs;
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
      await this.released(deadline, waitMs);
    }
  }

  /** Resolves at the next release, or rejects with PdfUnavailable 'timeout' at `deadline`. */
  private released(deadline: number, waitMs: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const i = this.waiting.indexOf(wake);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(new PdfUnavailable(`no page was free to print on within ${waitMs} ms (PDF_PAGES: ${this.max})`, 'timeout'));
      }, Math.max(0, deadline - Date.now()));
      this.waiting.push(wake);
    });
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
}

/** Whether `target` closed within two seconds (a hung page or browser may never answer). */
function closedWithin(target: { close(): Promise<void> }): Promise<boolean> {
  const closed = target.close().then(() => true, () => false);
  const grace = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 2000).unref());
  return Promise.race([closed, grace]);
}

/** Ends a browser at once (SIGKILL; Chromium's other processes follow their parent's pipe). */
function kill(browser: Browser): void {
  const child = browser.process();
  if (child && child.exitCode === null) child.kill('SIGKILL');
  else void browser.close().catch(() => {});
}

/**
 * Size, margins and the footer come from the page's own @page rules.
 * Untagged (see the header). `fontsLoaded`: the caller waited for the
 * page's fonts already (warm pages), so Puppeteer need not again.
 */
async function pdfOf(page: Page, fontsLoaded = false): Promise<Buffer> {
  const bytes = await page.pdf({ printBackground: true, preferCSSPageSize: true, tagged: false, outline: false, waitForFonts: !fontsLoaded });
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export class PdfPrinter {
  private warm: Promise<Warm> | null = null;
  private state: PrinterStatus = { state: 'not_started', executable: null, version: null, error: null, blocked_requests: 0, launches: 0, pages_opened: 0, collections: 0 };
  private closed = false;

  constructor(
    private readonly options: {
      chromiumPath: string | null;
      timeoutMs: number;
      newContextPerPrint?: boolean;
      pages?: number;
      /** How long a render waits for a free page (default: timeoutMs). */
      pageWaitMs?: number;
    },
  ) {}

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
      const browser = await puppeteer
        .launch({
          executablePath,
          // The headless shell is headless by construction ('shell': the plain --headless switch); a full Chromium
          // runs its new headless mode.
          headless: /headless[-_]shell/.test(executablePath) ? 'shell' : true,
          pipe: true, // no DevTools port open on the machine
          args: chromiumArgs(),
          timeout: 30_000,
          // Every DevTools call ends some time after our own render timeout (not at Puppeteer's 180 s), so a
          // hung call outside a render (opening a warm page) cannot hold a request longer either.
          protocolTimeout: this.options.timeoutMs + 10_000,
          // The process's own shutdown closes the printer; puppeteer's handlers would race it.
          handleSIGINT: false,
          handleSIGTERM: false,
          handleSIGHUP: false,
        })
        .catch((err: Error) => {
          throw new PdfUnavailable(`Chromium (${executablePath}) did not start: ${err.message.split('\n')[0]}`, 'launch_failed');
        });
      try {
        browser.on('disconnected', () => {
          if (this.warm === attempt) this.warm = null;
          if (!this.closed) Object.assign(this.state, { state: 'unavailable', error: 'Chromium exited; it is relaunched on the next render' });
        });
        // The tab a browser starts with holds a renderer (some 18 MiB) that would never print.
        for (const blank of await browser.pages()) await blank.close();
        const context = await browser.createBrowserContext();
        const pages = new PagePool(this.options.pages ?? 1, () => this.openWarmPage(context));
        const version = (await browser.version()).replace(/^[^/]*\//, ''); // "HeadlessChrome/156.0..." -> "156.0..."
        this.state.launches++;
        Object.assign(this.state, { state: 'ready', version, error: null });
        return { browser, context, pages };
      } catch (err) {
        // A browser that started but could not be set up is not left running (killed: it may not answer a close).
        kill(browser);
        throw new PdfUnavailable(`Chromium (${executablePath}) started but could not be set up: ${(err as Error).message.split('\n')[0]}`, 'launch_failed');
      }
    })();
    attempt.catch((err: Error) => {
      if (this.warm === attempt) this.warm = null;
      Object.assign(this.state, { state: 'unavailable', error: err.message });
    });
    return attempt;
  }

  /**
   * A page of `context` that runs no script of its own, is offline, and
   * whose every request is refused (data: URIs, the inlined fonts, are not
   * requests; the browser reads them in place).
   */
  private async newPage(context: BrowserContext): Promise<Page> {
    const page = await context.newPage().catch((err: Error) => {
      throw new PdfUnavailable(`Chromium could not open a page: ${err.message.split('\n')[0]}`, 'crashed');
    });
    try {
      // Our own timeout (timeoutMs, PdfUnavailable 'timeout') governs; Puppeteer's default of 30 s must not come first.
      page.setDefaultTimeout(this.options.timeoutMs);
      await page.setJavaScriptEnabled(false);
      await page.setOfflineMode(true);
      await page.setRequestInterception(true);
      page.on('request', (request) => {
        if (request.url().startsWith('data:')) return;
        this.state.blocked_requests++;
        void request.abort('blockedbyclient').catch(() => {});
      });
      return page;
    } catch (err) {
      void page.close().catch(() => {});
      throw err;
    }
  }

  /**
   * A page holding the empty document with every font (pdf-view.ts
   * `shellHtml`), each face loaded and decoded now, once for the page's
   * life, instead of with every invoice.
   */
  private async openWarmPage(context: BrowserContext): Promise<Page> {
    const page = await this.newPage(context);
    try {
      await page.setContent(shellHtml(), { waitUntil: 'load', timeout: this.options.timeoutMs });
      await page.evaluate(() => Promise.all([...document.fonts].map((face) => face.load())).then(() => undefined));
      warmPages.set(page, { session: await page.createCDPSession(), renders: 0 });
      this.state.pages_opened++;
      return page;
    } catch (err) {
      void page.close().catch(() => {});
      if (err instanceof PdfUnavailable) throw err;
      throw new PdfUnavailable(`Chromium could not prepare a page: ${(err as Error).message.split('\n')[0]}`, 'crashed');
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
    const context = this.options.newContextPerPrint ? await warm.browser.createBrowserContext() : warm.context;
    const page = await this.newPage(context).catch((err: unknown) => {
      if (context !== warm.context) void context.close().catch(() => {});
      throw err;
    });
    try {
      return await this.render(warm, page, async () => {
        await page.setContent(html, { waitUntil: 'load' });
        return pdfOf(page);
      });
    } finally {
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
    const page = await warm.pages.acquire(this.options.pageWaitMs ?? this.options.timeoutMs);
    let outcome: 'printed' | 'abandoned' | 'failed' = 'failed';
    try {
      const pdf = await this.render(warm, page, async () => {
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
        return pdfOf(page, true);
      });
      outcome = 'printed';
      return pdf;
    } catch (err) {
      if (err instanceof PdfUnavailable && err.reason === 'timeout') outcome = 'abandoned';
      throw err;
    } finally {
      if (outcome === 'printed') this.putBack(warm, page);
      else warm.pages.discard(page, outcome === 'failed'); // abandon() closes a hung page itself
    }
  }

  /**
   * `work` on `page`, bounded by the render timeout: past it the page is
   * abandoned (closed, the browser killed if even that hangs) and the caller
   * gets PdfUnavailable 'timeout'; a failure because the browser went away
   * is PdfUnavailable 'crashed'.
   */
  private async render<T>(warm: Warm, page: Page, work: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new PdfUnavailable(`the render took longer than ${this.options.timeoutMs} ms and was stopped`, 'timeout')), this.options.timeoutMs);
    });
    const running = work();
    try {
      return await Promise.race([running, timeout]);
    } catch (err) {
      if (err instanceof PdfUnavailable) {
        if (err.reason === 'timeout') this.abandon(warm, page);
        throw err;
      }
      if (!warm.browser.connected) throw new PdfUnavailable('Chromium exited during the render; it is relaunched on the next request', 'crashed');
      throw err;
    } finally {
      clearTimeout(timer);
      running.catch(() => {}); // a late failure of an abandoned render is not an unhandled rejection
    }
  }

  /**
   * A page after a clean render goes back to the pool; every GC_EVERY-th
   * render of a page, only once its renderer collected its garbage (some 30
   * ms, after the PDF went to its caller). A collection that fails or takes
   * longer than a render may costs the page, not the next render.
   */
  private putBack(warm: Warm, page: Page): void {
    const kept = warmPages.get(page);
    if (!kept || ++kept.renders % GC_EVERY !== 0) return warm.pages.release(page);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), this.options.timeoutMs).unref();
    });
    void Promise.race([kept.session.send('HeapProfiler.collectGarbage').then(() => 'done' as const), late])
      .then(
        (outcome) => {
          if (outcome === 'done') {
            this.state.collections++;
            return warm.pages.release(page);
          }
          // A renderer that does not finish a collection is hung: treated as a hung render.
          this.abandon(warm, page);
          warm.pages.discard(page, false);
        },
        () => warm.pages.discard(page),
      )
      .finally(() => clearTimeout(timer));
  }

  /**
   * A hung page: close it; if even that does not finish, kill its browser
   * (a hung browser may not answer a close either). Its 'disconnected'
   * handler then forgets it, if it is still the current one: a browser
   * launched meanwhile is left alone.
   */
  private abandon(warm: Warm, page: Page): void {
    void closedWithin(page).then((ok) => {
      if (!ok) kill(warm.browser);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const warm = this.warm;
    this.warm = null;
    if (warm) {
      await warm.then(
        async (w) => {
          if (!(await closedWithin(w.browser))) kill(w.browser);
        },
        () => {},
      );
    }
  }
}
