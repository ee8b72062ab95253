/**
 * The PDF's fonts, inlined as data: URIs so that the page never fetches
 * anything (every request is blocked anyway). They come from the npm
 * packages @fontsource/noto-sans (Latin, with French accents) and
 * @fontsource/noto-naskh-arabic (the Naskh style of printed Moroccan
 * documents); their own CSS gives the unicode ranges, so Latin text in an
 * Arabic invoice uses Noto Sans and Arabic text in a French one uses Naskh.
 * Read once per process.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);

interface Face {
  pkg: string;
  subset: string;
  weight: number;
}

const LATIN: Face[] = [400, 600, 700].flatMap((weight) => [
  { pkg: 'noto-sans', subset: 'latin', weight },
  { pkg: 'noto-sans', subset: 'latin-ext', weight },
]);
const ARABIC: Face[] = [400, 700].map((weight) => ({ pkg: 'noto-naskh-arabic', subset: 'arabic', weight }));

function faceCss({ pkg, subset, weight }: Face): string {
  const dir = path.dirname(require.resolve(`@fontsource/${pkg}/package.json`));
  const css = readFileSync(path.join(dir, `${weight}.css`), 'utf8');
  const block = css.split('@font-face').find((b) => b.includes(`${pkg}-${subset}-${weight}-normal.woff2`));
  if (!block) throw new Error(`@fontsource/${pkg}: no ${subset} ${weight} face`);
  const family = /font-family:\s*'([^']+)'/.exec(block)![1];
  const range = /unicode-range:\s*([^;]+);/.exec(block)?.[1];
  const woff2 = readFileSync(path.join(dir, 'files', `${pkg}-${subset}-${weight}-normal.woff2`)).toString('base64');
  return `@font-face{font-family:'${family}';font-style:normal;font-weight:${weight};font-display:block;` +
    `src:url(data:font/woff2;base64,${woff2}) format('woff2');${range ? `unicode-range:${range};` : ''}}`;
}

let latin: string | null = null;
let arabic: string | null = null;

/** @font-face rules for the Latin faces, plus the Arabic ones when the document has Arabic text. */
export function fontFaces(withArabic: boolean): string {
  latin ??= LATIN.map(faceCss).join('\n');
  if (!withArabic) return latin;
  arabic ??= ARABIC.map(faceCss).join('\n');
  return `${latin}\n${arabic}`;
}

/** True when the text holds Arabic letters (U+0600..U+06FF and presentation forms). */
export function hasArabic(text: string): boolean {
  return /[\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff]/.test(text);
}

