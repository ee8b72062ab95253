/**
 * Rendered PDFs by (invoice id, version, locale). An issued invoice's content
 * changes only with a new event (paid, void: its status mark), which moves
 * its version, so an entry never goes stale; old versions simply age out.
 * The map holds the render's promise, so concurrent requests for the same
 * document share one render; a failed render is dropped at once (the next
 * request tries again). Least recently used entries leave first, within a
 * byte budget.
 */
export class DocumentCache {
  private readonly entries = new Map<string, { pdf: Promise<Buffer>; bytes: number }>();
  private bytes = 0;
  renders = 0;
  hits = 0;

  constructor(private readonly maxBytes: number) {}

  static key(invoiceId: string, version: number, locale: string): string {
    return `${invoiceId}:${version}:${locale}`;
  }

  get(key: string, render: () => Promise<Buffer>): Promise<Buffer> {
    const found = this.entries.get(key);
    if (found) {
      this.hits++;
      this.entries.delete(key); // re-insert: most recently used last
      this.entries.set(key, found);
      return found.pdf;
    }
    this.renders++;
    const entry = { pdf: render(), bytes: 0 };
    this.entries.set(key, entry);
    entry.pdf.then(
      (pdf) => {
        if (this.entries.get(key) !== entry) return;
        entry.bytes = pdf.length;
        this.bytes += pdf.length;
        this.evict();
      },
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    );
    return entry.pdf;
  }

  private evict(): void {
    for (const [key, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) return;
      if (entry.bytes === 0) continue; // still rendering
      this.entries.delete(key);
      this.bytes -= entry.bytes;
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
