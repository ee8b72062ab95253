/**
 * A progress line on stderr while a long command runs on a terminal (never
 * when stderr is a pipe or a file, so scripts and --json output stay clean).
 */
export class Progress {
  private last = 0;
  private readonly enabled = process.stderr.isTTY === true;
  private readonly started = Date.now();

  constructor(
    private readonly verb: string,
    private readonly unit: string,
    private readonly total: number | null = null,
  ) {}

  update(count: number): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (now - this.last < 200) return;
    this.last = now;
    const seconds = Math.max((now - this.started) / 1000, 0.001);
    const rate = Math.round(count / seconds);
    let bar = '';
    if (this.total) {
      const share = Math.min(count / this.total, 1);
      const width = 30;
      bar = `[${'#'.repeat(Math.round(share * width)).padEnd(width, '.')}] ${(share * 100).toFixed(0).padStart(3)}% `;
    }
    process.stderr.write(`\r${bar}${this.verb} ${count} ${this.unit} (${rate}/s)   `);
  }

  done(): void {
    if (this.enabled && this.last !== 0) process.stderr.write('\r\x1b[K');
  }
}
