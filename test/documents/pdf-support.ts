/** Reading PDFs back with poppler (pdftotext, pdffonts, pdftoppm), as a reader or an auditor would. */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

async function withFile<T>(pdf: Buffer, use: (file: string, dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(path.join(tmpdir(), 'pdf-'));
  try {
    const file = path.join(dir, 'doc.pdf');
    writeFileSync(file, pdf);
    return await use(file, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The text of each page, in reading order: poppler reorders Chromium's
 * visual right-to-left runs; bidi controls are dropped, presentation forms
 * and no-break spaces normalized (NFKC).
 */
export async function pdfPages(pdf: Buffer, options: { raw?: boolean } = {}): Promise<string[]> {
  return withFile(pdf, async (file) => {
    // -raw (content stream order) keeps rotated text (the VOID / PAID stamp) whole; the default reorders RTL runs.
    const mode = options.raw ? ['-raw'] : [];
    const { stdout } = await run('pdftotext', [...mode, '-enc', 'UTF-8', file, '-'], { maxBuffer: 1 << 26 });
    return stdout.split('\f').slice(0, -1).map(normalize);
  });
}

export function normalize(text: string): string {
  return text.replace(/[\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '').normalize('NFKC');
}

/** Arabic as compared: no spaces (poppler splits words) and no vowel marks (it moves them). */
export function arabicKey(text: string): string {
  return normalize(text).replace(/[\u064b-\u0652]/g, '').replace(/\s+/g, '');
}

export interface FontRow {
  name: string;
  embedded: boolean;
}

export async function pdfFonts(pdf: Buffer): Promise<FontRow[]> {
  return withFile(pdf, async (file) => {
    const { stdout } = await run('pdffonts', [file]);
    return stdout.trim().split('\n').slice(2).map((line) => {
      const cols = line.trim().split(/\s+/);
      // name type... encoding emb sub uni object ID: emb is the 5th field from the end
      return { name: cols[0], embedded: cols[cols.length - 5] === 'yes' };
    });
  });
}

/** pdfinfo's fields ("Tagged", "Pages", ...). */
export async function pdfInfo(pdf: Buffer): Promise<Record<string, string>> {
  return withFile(pdf, async (file) => {
    const { stdout } = await run('pdfinfo', [file]);
    return Object.fromEntries(stdout.trim().split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]));
  });
}

/** The first page as PNG at `dpi`. */
export async function firstPagePng(pdf: Buffer, dpi: number): Promise<Buffer> {
  return withFile(pdf, async (file, dir) => {
    await run('pdftoppm', ['-r', String(dpi), '-png', '-f', '1', '-l', '1', '-singlefile', file, path.join(dir, 'page')]);
    return readFileSync(path.join(dir, 'page.png'));
  });
}

export async function popplerAvailable(): Promise<boolean> {
  try {
    await run('pdftotext', ['-v']);
    return true;
  } catch {
    return false;
  }
}
