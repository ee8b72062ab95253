/**
 * A sleep that something else can cut short: a worker's loop waits with
 * `sleep(ms)`; a notification, a stop() or new work calls `wake()` and the
 * loop goes on at once. One sleeper at a time (a loop), as its users have.
 */
export class Alarm {
  private ring: (() => void) | null = null;

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.ring = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.ring = done;
    });
  }

  /** Ends the current sleep, if any (a wake with nobody asleep is not remembered). */
  wake(): void {
    this.ring?.();
  }
}
