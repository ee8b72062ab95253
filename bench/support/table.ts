/** Plain-text tables for benchmark output (and pasting into docs as Markdown). */

export type Cell = string | number;

/** Short rows get empty cells at the end. */
function pad(row: Cell[], length: number): Cell[] {
  return row.length >= length ? row : [...row, ...Array<Cell>(length - row.length).fill('')];
}

/** Aligned columns: first column left, the others right. */
export function formatTable(headers: string[], rows: Cell[][]): string {
  rows = rows.map((r) => pad(r, headers.length));
  const all = [headers, ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, c) => Math.max(...all.map((r) => String(r[c] ?? '').length)));
  const line = (r: Cell[]) =>
    r.map((cell, c) => (c === 0 ? String(cell).padEnd(widths[c]) : String(cell).padStart(widths[c]))).join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** The same rows as a Markdown table. */
export function markdownTable(headers: string[], rows: Cell[][]): string {
  rows = rows.map((r) => pad(r, headers.length));
  const esc = (c: Cell) => String(c).replace(/\|/g, '\\|');
  return [
    `| ${headers.map(esc).join(' | ')} |`,
    `| ${headers.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`),
  ].join('\n');
}
