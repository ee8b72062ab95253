/**
 * `npm run bench -- documents`: PDF and UBL exports, in this process, on a
 * one-page invoice (5 lines, 4 rates), alternating fr and ar, beside the
 * naive baseline of the issue measured in the same run: the same warm
 * browser but a new browser context per render and no cache.
 *
 *  naive   new context per render, the whole document  serial p50, then 4 at a time
 *          with its inlined fonts, no cache
 *  warm    warm pages that hold the fonts, receiving   serial p50, then 4 at a time
 *          each invoice's parts (the service's printer)
 *  cached  DocumentCache hit (the service's path once rendered; without
 *          HTTP and the invoice's read, which every endpoint pays alike)
 *  UBL     renderUbl, serial, beside the same document built as a DOM by
 *          xmlbuilder2 and serialized (bench/support/ubl-dom.ts: the former
 *          implementation, same bytes)
 *
 * Memory is this process plus its Chromium processes after the runs (PSS).
 * BENCH_SCALE (default 1) multiplies the counts.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { DocumentCache } from '../src/documents/cache.ts';
import type { DocumentLocale } from '../src/documents/locale.ts';
import { PdfPrinter } from '../src/documents/printer.ts';
import { renderPdf } from '../src/documents/service.ts';
import { renderUbl } from '../src/documents/ubl.ts';
import { makeSource, type LineSpec } from '../test/documents/fixtures.ts';
import { runConcurrently } from './support/concurrency.ts';
import { renderUblDom } from './support/ubl-dom.ts';
import { fmtMs, perSecond, summarize } from './support/stats.ts';
import { formatTable, markdownTable, type Cell } from './support/table.ts';

const SCALE = Number(process.env.BENCH_SCALE ?? '1') || 1;
const SERIAL = Math.max(10, Math.round(40 * SCALE));
const CONCURRENT = Math.max(20, Math.round(80 * SCALE));
const CACHED = Math.max(1000, Math.round(20_000 * SCALE));
const UBL = Math.max(500, Math.round(5_000 * SCALE));

const LINES: LineSpec[] = [
  ['Audit des comptes annuels 2025', '1', '18500', '20'],
  ['Formation « Fiscalité marocaine » (2 jours)', '2', '4750.5', '20'],
  ['Transport et hébergement', '1', '2300', '14'],
  ['خدمات استشارية في المحاسبة', '3', '1200', '10'],
  ['Manuels de référence', '5', '180', '0'],
];
const source = makeSource({ lines: LINES });
const localeOf = (i: number): DocumentLocale => (i % 2 === 0 ? 'fr' : 'ar');

/**
 * Memory (MiB) of this process and every process below it (Chromium's), as
 * PSS: pages shared between Chromium's processes counted once, shared out,
 * which RSS would count in every process. RSS summed is shown beside it.
 */
function treeMemoryMiB(): { pss: number; rss: number; node: number } {
  const parent = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // exited meanwhile
    }
  }
  const inTree = (pid: number): boolean => pid === process.pid || (pid > 1 && parent.has(pid) && inTree(parent.get(pid)!));
  let pss = 0;
  let rss = 0;
  let node = 0;
  for (const pid of parent.keys()) {
    if (!inTree(pid)) continue;
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      const own = Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0);
      pss += own;
      if (pid === process.pid) node = own;
      rss += Number(/^Rss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0);
    } catch {
      // exited meanwhile
    }
  }
  return { pss: pss / 1024, rss: rss / 1024, node: node / 1024 };
}

async function measure(printer: PdfPrinter) {
  await renderPdf(printer, source, 'fr'); // launch and warm up
  await renderPdf(printer, source, 'ar');
  const serial = await runConcurrently(SERIAL, 1, (i) => renderPdf(printer, source, localeOf(i)), { latencies: true });
  const parallel = await runConcurrently(CONCURRENT, 4, (i) => renderPdf(printer, source, localeOf(i)), { latencies: true });
  return { p50: summarize(serial.latencies).p50, p90: summarize(serial.latencies).p90, perSecond: perSecond(parallel.count, parallel.elapsedMs), p50at4: summarize(parallel.latencies).p50 };
}

type Measured = Awaited<ReturnType<typeof measure>>;

const naivePrinter = (chromiumPath: string | null) => new PdfPrinter({ chromiumPath, timeoutMs: 60_000, newContextPerPrint: true });

export async function run(): Promise<void> {
  const chromiumPath = process.env.CHROMIUM_PATH || null;
  const warmPrinter = new PdfPrinter({ chromiumPath, timeoutMs: 60_000 });
  try {
    // Two interleaved halves, so noise on a shared machine hits both alike. The naive
    // printers are closed before RSS is read: it is the warm process's memory.
    const halves: { naive: Measured; warm: Measured }[] = [];
    for (let half = 0; half < 2; half++) {
      const naive = naivePrinter(chromiumPath);
      try {
        halves.push({ naive: await measure(naive), warm: await measure(warmPrinter) });
      } finally {
        await naive.close();
      }
    }
    const avg = (pick: (h: { naive: Measured; warm: Measured }) => number) => (pick(halves[0]) + pick(halves[1])) / 2;
    const naive = { p50: avg((h) => h.naive.p50), p90: avg((h) => h.naive.p90), perSecond: avg((h) => h.naive.perSecond), p50at4: avg((h) => h.naive.p50at4) };
    const warm = { p50: avg((h) => h.warm.p50), p90: avg((h) => h.warm.p90), perSecond: avg((h) => h.warm.perSecond), p50at4: avg((h) => h.warm.p50at4) };
    const memory = treeMemoryMiB();

    const cache = new DocumentCache(64 * 1024 * 1024);
    const render = () => renderPdf(warmPrinter, source, 'fr');
    await cache.get('invoice:3:fr', render);
    const cached = summarize((await runConcurrently(CACHED, 1, () => cache.get('invoice:3:fr', render), { latencies: true })).latencies);

    if (renderUbl(source) !== renderUblDom(source)) throw new Error('the UBL writer and the xmlbuilder2 DOM baseline print different documents');
    const ublRate = (render: (s: typeof source) => string, count: number) => {
      const start = process.hrtime.bigint();
      for (let i = 0; i < count; i++) render(source);
      return perSecond(count, Number(process.hrtime.bigint() - start) / 1e6);
    };
    // Interleaved halves again; the baseline is some ten times slower, so it gets a tenth of the documents.
    const ubl = { dom: [] as number[], ours: [] as number[] };
    for (let half = 0; half < 2; half++) {
      ubl.dom.push(ublRate(renderUblDom, Math.max(50, Math.round(UBL / 10))));
      ubl.ours.push(ublRate(renderUbl, UBL));
    }
    const ublPerSecond = (ubl.ours[0] + ubl.ours[1]) / 2;
    const ublBaseline = (ubl.dom[0] + ubl.dom[1]) / 2;

    const version = (await warmPrinter.browser()).version();
    const x = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
    const rows: Cell[][] = [
      ['render p50, serial, fr/ar (ms)', fmtMs(naive.p50), fmtMs(warm.p50), x(naive.p50, warm.p50), '<= 60'],
      ['render p90, serial (ms)', fmtMs(naive.p90), fmtMs(warm.p90), x(naive.p90, warm.p90), ''],
      ['PDFs/s at concurrency 4', naive.perSecond.toFixed(1), warm.perSecond.toFixed(1), x(warm.perSecond, naive.perSecond), '>= 15'],
      ['render p50 at concurrency 4 (ms)', fmtMs(naive.p50at4), fmtMs(warm.p50at4), x(naive.p50at4, warm.p50at4), ''],
      ['cached p50 (ms)', fmtMs(naive.p50), fmtMs(cached.p50), x(naive.p50, cached.p50), '<= 5'],
      ['memory, process + Chromium, PSS (MiB)', '', memory.pss.toFixed(0), '', '< 400'],
      ['  of which this Node process (MiB)', '', memory.node.toFixed(0), '', ''],
      ['  the same as summed RSS (MiB)', '', memory.rss.toFixed(0), '', ''],
      ['UBL documents/s (naive: xmlbuilder2 DOM)', ublBaseline.toFixed(0), ublPerSecond.toFixed(0), x(ublPerSecond, ublBaseline), '>= 500'],
    ];
    const headers = ['measure', 'naive', 'this', 'ratio', 'target'];
    console.log(`Chromium ${version}; per half: ${SERIAL} serial and ${CONCURRENT} concurrent renders, two halves each; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    console.log(formatTable(headers, rows));
    console.log(`\n${markdownTable(headers, rows)}`);
  } finally {
    await warmPrinter.close();
  }
}
