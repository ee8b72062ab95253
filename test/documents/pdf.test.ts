/**
 * The PDF, read back as its reader and an auditor would: text extracted per
 * locale by poppler, fonts embedded, long invoices paginated with the table
 * header repeated and the totals block whole, status marks, the first page
 * of each locale compared pixel by pixel with a committed reference, and
 * the page isolated from the network. Real Chromium (CHROMIUM_PATH or the
 * system's), no mock.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import pixelmatch from 'pixelmatch';
import { PNG } from 'pngjs';
import { formatMoney, formatRate, type DocumentLocale } from '../../src/documents/locale.ts';
import { GC_EVERY, PdfPrinter, PdfUnavailable } from '../../src/documents/printer.ts';
import { invoiceDocument, invoiceHtml, invoiceView, pageCss } from '../../src/documents/pdf-view.ts';
import { renderPdf } from '../../src/documents/service.ts';
import { makeSource, manyLines, type LineSpec } from './fixtures.ts';
import { arabicKey, firstPagePng, normalize, pdfFonts, pdfInfo, pdfPages } from './pdf-support.ts';
import { until } from '../support/wait.ts';

const LINES: LineSpec[] = [
  ['Audit des comptes annuels 2025', '1', '18500', '20'],
  ['Formation « Fiscalité marocaine » (2 jours)', '2', '4750.5', '20'],
  ['Transport et hébergement', '1', '2300', '14'],
  ['خدمات استشارية في المحاسبة', '3', '1200', '10'],
  ['Manuels de référence', '5', '180', '0'],
];
const sample = (status: 'finalized' | 'paid' | 'void' = 'finalized') => makeSource({ lines: LINES, status, notes: 'Merci pour votre confiance.' });

const WORDS: Record<DocumentLocale, string> = {
  fr: 'Arrêtée la présente facture à la somme de quarante et un mille quatre-vingt-trois dirhams et vingt centimes toutes taxes comprises.',
  en: 'This invoice is closed at the sum of forty-one thousand eighty-three dirhams and twenty centimes, all taxes included.',
  ar: 'أوقفت هذه الفاتورة على مبلغ قدره واحد وأربعون ألفًا وثلاثة وثمانون درهمًا وعشرون سنتيمًا مع احتساب جميع الرسوم.',
};
const REFERENCES = new URL('./references/', import.meta.url);
const DPI = 50;

describe('documents: PDF', function () {
  this.timeout(300_000);
  const printer = new PdfPrinter({ chromiumPath: process.env.CHROMIUM_PATH || null, timeoutMs: 120_000 });
  after(() => printer.close());

  for (const locale of ['fr', 'en', 'ar'] as const) {
    it(`${locale}: number, both ICEs, every line total, VAT per rate, total TTC and the total in words`, async () => {
      const source = sample();
      const text = (await pdfPages(await renderPdf(printer, source, locale))).join('\n');
      const flat = text.replace(/\s+/g, ' ');
      const { invoice, seller } = source;
      expect(flat).to.include(invoice.invoice_number!);
      expect(flat).to.include(seller.ice!);
      expect(flat).to.include(invoice.customer!.ice!);
      const money = (v: string) => normalize(formatMoney(v, 'MAD', locale));
      for (const item of invoice.items) expect(flat, `line ${item.position}`).to.include(money(item.total));
      for (const t of invoice.tax_breakdown) {
        expect(flat).to.include(normalize(formatRate(t.rate, locale)));
        expect(flat).to.include(money(t.taxable_amount));
        expect(flat).to.include(money(t.tax_amount));
      }
      expect(invoice.total).to.equal('41083.20');
      expect(flat).to.include(money(invoice.total));
      if (locale === 'ar') {
        expect(arabicKey(text)).to.include(arabicKey(WORDS.ar));
        // Isolated, no-break grouped amounts keep their reading order inside right-to-left text.
        expect(flat).to.include('41 083,20').and.not.include('083,20 41');
        expect(flat).to.include('18 500,00').and.not.include('500,00 18');
        expect(arabicKey(text)).to.include(arabicKey('خدمات استشارية في المحاسبة'));
      } else {
        expect(flat).to.include(WORDS[locale]);
        expect(flat).to.include(locale === 'fr' ? '41 083,20 DH' : '41,083.20 MAD');
      }
    });
  }

  it('embeds every font, and only the project\'s (Noto Sans, Noto Naskh Arabic)', async () => {
    for (const locale of ['fr', 'ar'] as const) {
      const fonts = await pdfFonts(await renderPdf(printer, sample(), locale));
      expect(fonts.length).to.be.greaterThan(0);
      for (const f of fonts) {
        expect(f.embedded, f.name).to.equal(true);
        expect(f.name).to.match(/\+(NotoSans|NotoNaskhArabic)-/);
      }
      if (locale === 'ar') expect(fonts.some((f) => f.name.includes('NotoNaskhArabic'))).to.equal(true);
    }
  });

  it('prints untagged PDFs (as small as the invoice allows: a tagged one-page invoice is twice the size)', async () => {
    for (const locale of ['fr', 'ar'] as const) {
      const pdf = await renderPdf(printer, sample(), locale);
      expect((await pdfInfo(pdf)).Tagged, locale).to.equal('no');
    }
  });

  it('500 lines: several pages, "k/N" on each, the table header repeated, the totals block on one page', async () => {
    const source = makeSource({ lines: manyLines(500) });
    const pages = await pdfPages(await renderPdf(printer, source, 'fr'));
    expect(pages.length).to.be.greaterThan(5);
    pages.forEach((page, i) => {
      expect(page, `page ${i + 1}`).to.include(`${i + 1}/${pages.length}`);
      if (/Prestation \d+:/.test(page)) expect(page, `header on page ${i + 1}`).to.include('Désignation').and.include('Prix unitaire HT');
    });
    const lastLine = pages.findIndex((p) => p.includes('Prestation 500:'));
    expect(lastLine).to.be.at.least(0);
    const totalsPages = ['Récapitulatif de la TVA', 'Total HT', 'Total TTC', 'Net à payer', 'Arrêtée la présente facture'].map((label) =>
      pages.findIndex((p) => p.toLowerCase().includes(label.toLowerCase())), // some labels are uppercased by CSS
    );
    expect(new Set(totalsPages).size, `totals block split over pages ${totalsPages}`).to.equal(1);
    expect(totalsPages[0]).to.be.at.least(lastLine);
    expect(pages.join('\n')).to.include(normalize(formatMoney(source.invoice.total, 'MAD', 'fr')));
  });

  describe('long unbroken text wraps inside the page: all of it is printed', () => {
    /** `n` characters without a space: "X0X1X2...". */
    const run = (c: string, n: number) => Array.from({ length: n }, (_, i) => c + String(i % 10)).join('').slice(0, n);
    /** The pages' text without spaces and without their footers (the seller's identifiers, "number k/N"), which interrupt text that runs on. */
    const body = async (source: ReturnType<typeof makeSource>) => {
      const pages = await pdfPages(await renderPdf(printer, source, 'fr'));
      const footerIds = [source.seller.legal_name, `ICE ${source.seller.ice}`, `IF ${source.seller.if_number}`, `RC ${source.seller.rc}`].join('·').replace(/\s+/g, '');
      const flat = (text: string) => text.replace(/[\s\u200b]+/g, ''); // the footer breaks long words with zero-width spaces
      return pages.map((p) => flat(p).split(footerIds).join('').replace(new RegExp(`${source.invoice.invoice_number}\\d+/\\d+`), '')).join('');
    };

    it('the notes (5,000 characters, over several pages) and the payment terms (500)', async () => {
      const long = { notes: run('N', 5000), terms: run('T', 500) };
      const flat = await body(makeSource({ lines: LINES, notes: long.notes, paymentTerms: long.terms }));
      for (const [field, text] of Object.entries(long)) expect(flat.includes(text), `${field}: all ${text.length} characters printed`).to.equal(true);
    });

    it("the footer breaks a long legal name between characters, never inside one (surrogate pairs, combining marks)", () => {
      const css = pageCss(invoiceView(makeSource({ lines: LINES, seller: { legal_name: `A${'\u{1D400}'.repeat(40)}${'e\u0301'.repeat(40)}` } }), 'fr'));
      expect(css).to.include('\u200b');
      expect(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(css), 'a lone surrogate').to.equal(false);
      expect(css).to.not.include('e\u200b\u0301');
    });

    it("the seller's legal name, e-mail and website, the buyer's name and street", async () => {
      const long = { sellerName: run('L', 200), email: `${run('e', 240)}@atlas.ma`, website: `https://${run('w', 480)}.ma`, buyer: run('B', 200), street: run('S', 500) };
      const base = makeSource({ lines: LINES, customerName: long.buyer, seller: { legal_name: long.sellerName, email: long.email, website: long.website } });
      const customer = base.invoice.customer!;
      const flat = await body({ ...base, invoice: { ...base.invoice, customer: { ...customer, address: { ...customer.address, street: long.street } } } });
      for (const [field, text] of Object.entries(long)) expect(flat.includes(text), `${field}: all ${text.length} characters printed`).to.equal(true);
    });
  });

  it('prints text as written even when it came with a bidirectional override (refused by the API, not by every way in)', async () => {
    const base = makeSource({ lines: LINES, seller: { legal_name: 'Atlas \u202eevil #4 SARL' } });
    const source = { ...base, invoice: { ...base.invoice, notes: 'Note \u202devil #4' } };
    const text = (await pdfPages(await renderPdf(printer, source, 'fr'))).join('\n');
    expect(text).to.include('Atlas evil #4 SARL').and.include('Note evil #4');
    expect(text).not.to.match(/[\u202d\u202e]|4# live/);
  });

  it('marks a void invoice VOID and a paid one PAID with its date, in each language', async () => {
    const voidFr = (await pdfPages(await renderPdf(printer, sample('void'), 'fr'), { raw: true })).join(' ');
    expect(voidFr).to.include('ANNULÉE').and.include('Facture annulée le 25/11/2026');
    const paidEn = (await pdfPages(await renderPdf(printer, sample('paid'), 'en'), { raw: true })).join(' ');
    expect(paidEn).to.include('PAID').and.include('on 28 Nov 2026');
    expect(paidEn.replace(/\s+/g, ' ')).to.include('Amount due 0.00 MAD');
    // Rotated text only comes out in content order, where Chromium keeps right-to-left runs visual (reversed).
    const paidAr = arabicKey((await pdfPages(await renderPdf(printer, sample('paid'), 'ar'), { raw: true })).join(' '));
    const reversed = (word: string) => [...arabicKey(word)].reverse().join('');
    expect(paidAr).to.include(reversed('مؤداة')).and.include(reversed('بتاريخ'));
    const plain = (await pdfPages(await renderPdf(printer, sample(), 'fr'), { raw: true })).join(' ');
    expect(plain).not.to.include('ANNULÉE').and.not.include('PAYÉE');
  });

  describe('first pages against the committed references', () => {
    const versionFile = new URL('chromium-version.txt', REFERENCES);
    for (const locale of ['fr', 'en', 'ar'] as const) {
      it(`${locale} page 1 matches references/${locale}.png`, async () => {
        const png = await firstPagePng(await renderPdf(printer, sample(), locale), DPI);
        const reference = new URL(`${locale}.png`, REFERENCES);
        const version = printer.status().version;
        if (process.env.UPDATE_REFERENCES === '1') {
          writeFileSync(reference, png);
          writeFileSync(versionFile, `${version}\n`);
        }
        expect(existsSync(reference), 'reference image missing: run with UPDATE_REFERENCES=1').to.equal(true);
        const recorded = readFileSync(versionFile, 'utf8').trim();
        const actual = PNG.sync.read(png);
        const expected = PNG.sync.read(readFileSync(reference));
        expect([actual.width, actual.height]).to.deep.equal([expected.width, expected.height]);
        const diff = pixelmatch(actual.data, expected.data, undefined, actual.width, actual.height, { threshold: 0.1 });
        const share = diff / (actual.width * actual.height);
        // Same Chromium: at most anti-aliasing noise. Another version may move glyphs by a pixel.
        const limit = version === recorded ? 0.002 : 0.02;
        if (version !== recorded) console.warn(`      references made with Chromium ${recorded}, this is ${version}: tolerance ${limit}`);
        expect(share, `${diff} pixels differ (${(share * 100).toFixed(2)} %)`).to.be.at.most(limit);
      });
    }
  });

  it('the page makes no network request: everything the HTML asks for is refused', async () => {
    let hits = 0;
    const server = http.createServer((_req, res) => {
      hits++;
      res.end('x');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const before = printer.status().blocked_requests;
      const url = `http://127.0.0.1:${port}`;
      const pdf = await printer.print(
        `<html><head><link rel="stylesheet" href="${url}/style.css"><style>@font-face{font-family:x;src:url(${url}/font.woff2)} body{font-family:x}</style></head>` +
          `<body>offline<img src="${url}/logo.png"><iframe src="${url}/frame"></iframe></body></html>`,
      );
      expect(pdf.subarray(0, 5).toString()).to.equal('%PDF-');
      expect(hits).to.equal(0);
      expect(printer.status().blocked_requests).to.be.greaterThan(before);
    } finally {
      server.close();
    }
  });

  it('a render waits for a free page at most its wait (the render timeout by default), then answers timeout', async () => {
    const one = new PdfPrinter({ chromiumPath: process.env.CHROMIUM_PATH || null, timeoutMs: 60_000, pages: 1, pageWaitMs: 200 });
    try {
      await renderPdf(one, sample(), 'fr'); // launched, its one page open
      let longDone = false;
      const long = renderPdf(one, makeSource({ lines: manyLines(500) }), 'fr').finally(() => (longDone = true)); // holds the page for a second or more
      const err = await renderPdf(one, sample(), 'ar').then(() => null, (e) => e);
      expect(err).to.be.instanceOf(PdfUnavailable);
      expect(err.reason).to.equal('timeout');
      expect(err.message).to.include('no page was free');
      expect(longDone, 'answered before the render holding the page ended').to.equal(false);
      expect((await long).subarray(0, 5).toString()).to.equal('%PDF-'); // the render holding the page is not disturbed
      expect((await pdfPages(await renderPdf(one, sample(), 'en'))).join(' ')).to.include(sample().invoice.invoice_number!); // the page went back
      expect(one.status().pages_opened).to.equal(1);
    } finally {
      await one.close();
    }
  });

  it('a browser that hangs (stopped) is killed after the render timeout, and the next render launches another', async () => {
    const hung = new PdfPrinter({ chromiumPath: process.env.CHROMIUM_PATH || null, timeoutMs: 1000, pages: 1 });
    const alive = (pid: number) => {
      try {
        return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
      } catch {
        return false;
      }
    };
    const stopped: number[] = [];
    try {
      await renderPdf(hung, sample(), 'fr');
      const pid = (await hung.browser()).process()!.pid!;
      // The browser and every process below it: none can answer any more.
      const parentOf = (p: string) => Number(readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
      const tree = new Set([pid]);
      for (let grew = true; grew; ) {
        grew = false;
        for (const p of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
          try {
            if (!tree.has(Number(p)) && tree.has(parentOf(p))) {
              tree.add(Number(p));
              grew = true;
            }
          } catch {
            // exited meanwhile
          }
        }
      }
      for (const p of tree) {
        try {
          process.kill(p, 'SIGSTOP');
          stopped.push(p);
        } catch (e) {
          // A helper that exited since the scan cannot answer either (seen once: ESRCH under a loaded full suite).
          if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
        }
      }
      const err = await renderPdf(hung, sample(), 'ar').then(() => null, (e) => e);
      expect(err).to.be.instanceOf(PdfUnavailable);
      expect(err.reason).to.equal('timeout');
      // The page does not close either: the browser is killed (a close would wait for an answer that never comes).
      await until(() => !alive(pid), 10_000, 'the hung browser killed');
      await until(() => hung.status().state === 'unavailable', 10_000, 'the printer to forget it');
      expect((await pdfPages(await renderPdf(hung, sample(), 'en'))).join(' ')).to.include(sample().invoice.invoice_number!);
      expect(hung.status().launches).to.equal(2);
    } finally {
      for (const p of stopped) {
        try {
          process.kill(p, 'SIGCONT'); // the rest of the old browser notices its parent is gone and exits
        } catch {
          // gone already
        }
      }
      await hung.close();
    }
  });

  describe('warm pages (fonts loaded once, everything else replaced per render)', () => {
    const one = () => new PdfPrinter({ chromiumPath: process.env.CHROMIUM_PATH || null, timeoutMs: 120_000, pages: 1 });

    it('one page serves every render, and an invoice prints as its whole self-contained document does', async () => {
      const warm = one();
      const whole = new PdfPrinter({ chromiumPath: process.env.CHROMIUM_PATH || null, timeoutMs: 120_000 });
      try {
        // A void Arabic invoice first, then a plain French one on the same page: nothing of the first may remain.
        const first = sample('void');
        const second = makeSource({ lines: [['Conseil', '1', '900', '20']], number: 'INV-2026-000077' });
        await renderPdf(warm, first, 'ar');
        const reused = await renderPdf(warm, second, 'fr');
        const fresh = await whole.print(invoiceHtml(invoiceView(second, 'fr'), second));
        expect(warm.status().pages_opened).to.equal(1);
        expect(await pdfPages(reused)).to.deep.equal(await pdfPages(fresh));
        expect(await pdfPages(reused, { raw: true })).to.deep.equal(await pdfPages(fresh, { raw: true }));
        expect((await pdfPages(reused, { raw: true })).join(' ')).not.to.include('ANNULÉE').and.not.include(first.invoice.invoice_number);
        expect(await pdfFonts(reused)).to.deep.equal(await pdfFonts(fresh));
        const pixels = async (pdf: Buffer) => PNG.sync.read(await firstPagePng(pdf, DPI));
        const [a, b] = [await pixels(reused), await pixels(fresh)];
        expect(pixelmatch(a.data, b.data, undefined, a.width, a.height, { threshold: 0 })).to.equal(0);
      } finally {
        await Promise.all([warm.close(), whole.close()]);
      }
    });

    it(`every ${GC_EVERY} renders the page's renderer collects its garbage: the replaced documents do not pile up`, async () => {
      const warm = one();
      try {
        const domNodes = async () => {
          const [page] = await (await warm.browser()).browserContexts().at(-1)!.pages();
          const session = await page.createCDPSession();
          try {
            const { nodes } = await session.send('Memory.getDOMCounters');
            const reachable = await page.evaluate(() => {
              let count = 1;
              for (const walker = document.createTreeWalker(document, NodeFilter.SHOW_ALL); walker.nextNode(); ) count++;
              return count;
            });
            return { nodes, reachable };
          } finally {
            await session.detach();
          }
        };
        // The one page goes back after its collection, so render 2 * GC_EVERY + 1 waited for the second.
        for (let i = 1; i <= 2 * GC_EVERY + 1; i++) await renderPdf(warm, sample(), i % 2 ? 'fr' : 'ar');
        expect(warm.status().collections).to.equal(2);
        expect(warm.status().pages_opened).to.equal(1);
        // After a collection and one render the renderer holds two documents' nodes, not those of every document
        // replaced since it opened (13,309 nodes after 32 renders without the collections, for 431 on the page).
        const { nodes, reachable } = await domNodes();
        expect(nodes).to.be.below(reachable * 3);
      } finally {
        await warm.close();
      }
    });

    it('renders beyond the page count wait for a free page', async () => {
      const warm = one();
      try {
        const pdfs = await Promise.all(['fr', 'en', 'ar', 'fr'].map((locale) => renderPdf(warm, sample(), locale as DocumentLocale)));
        expect(pdfs.every((pdf) => pdf.subarray(0, 5).toString() === '%PDF-')).to.equal(true);
        expect(warm.status().pages_opened).to.equal(1);
      } finally {
        await warm.close();
      }
    });

    it('a warm page makes no request either (the shell\'s CSP refuses them, request interception aborts any other)', async () => {
      let hits = 0;
      const server = http.createServer((_req, res) => {
        hits++;
        res.end('x');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      const warm = one();
      try {
        const url = `http://127.0.0.1:${port}`;
        const doc = { ...invoiceDocument(invoiceView(sample(), 'fr')), style: `@font-face{font-family:x;src:url(${url}/font.woff2)} body{font-family:x}` };
        const pdf = await warm.printDocument({ ...doc, body: `<p>offline</p><img src="${url}/logo.png"><iframe src="${url}/frame"></iframe><link rel="stylesheet" href="${url}/s.css">` });
        expect(pdf.subarray(0, 5).toString()).to.equal('%PDF-');
        // The same page then prints an invoice as usual.
        expect((await pdfPages(await renderPdf(warm, sample(), 'fr'))).join(' ')).to.include('INV-2026-000042');
        expect(warm.status().pages_opened).to.equal(1);
        expect(hits).to.equal(0);
      } finally {
        server.close();
        await warm.close();
      }
    });
  });

  it('a render past its timeout is stopped with PdfUnavailable, and the next one works', async () => {
    const quick = new PdfPrinter({ chromiumPath: process.env.CHROMIUM_PATH || null, timeoutMs: 100 });
    try {
      await quick.browser(); // warm: the timeout covers the render, not the launch
      const rows = Array.from({ length: 20_000 }, (_, i) => `<tr><td>${i}</td><td>${'ligne '.repeat(20)}</td></tr>`).join('');
      const err = await quick.print(`<html><body><table>${rows}</table></body></html>`).then(() => null, (e) => e);
      expect(err).to.be.instanceOf(PdfUnavailable);
      expect(err.reason).to.equal('timeout');
      const small = new PdfPrinter({ chromiumPath: process.env.CHROMIUM_PATH || null, timeoutMs: 60_000 });
      try {
        expect((await small.print('<html><body>ok</body></html>')).subarray(0, 5).toString()).to.equal('%PDF-');
      } finally {
        await small.close();
      }
    } finally {
      await quick.close();
    }
  });
});

