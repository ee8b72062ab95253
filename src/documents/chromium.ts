/**
 * Which Chromium prints the PDFs: CHROMIUM_PATH when set (and then only
 * that one: a configured path that is missing is an error, not a silent
 * fallback), else the system's (Debian's `chromium-headless-shell` or
 * `chromium` package and the usual names), else one shipped in an npm package (@sparticuz/chromium) when
 * it is installed. Never a download.
 */
import { accessSync, constants } from 'node:fs';

/**
 * Debian's headless shell first (package chromium-headless-shell: the same
 * Blink without the desktop browser around it; its processes take some 180
 * MiB less and it prints faster, docs/performance.md "PDF memory"), the real
 * binary: the package's /usr/bin/chromium-headless-shell is a shell script
 * that runs it without exec, so it would stay as the browser's parent
 * process; then the full browsers.
 */
const SYSTEM_CANDIDATES = [
  '/usr/lib/chromium/chromium-headless-shell',
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome-stable',
  '/usr/bin/google-chrome',
];

export class ChromiumNotFound extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChromiumNotFound';
  }
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export async function findChromium(configured: string | null): Promise<string> {
  if (configured) {
    if (executable(configured)) return configured;
    throw new ChromiumNotFound(`CHROMIUM_PATH=${configured} is not an executable file`);
  }
  const system = SYSTEM_CANDIDATES.find(executable);
  if (system) return system;
  try {
    const name = '@sparticuz/chromium'; // optional: resolved only when installed
    const shipped = (await import(name)) as { default: { executablePath(): Promise<string> } };
    const file = await shipped.default.executablePath();
    if (file && executable(file)) return file;
  } catch {
    // not installed: fall through to the error below
  }
  throw new ChromiumNotFound(`no Chromium found: set CHROMIUM_PATH, or install Debian's chromium-headless-shell or chromium (looked for ${SYSTEM_CANDIDATES.join(', ')}) or the npm package @sparticuz/chromium`);
}

/** Command-line switches for a headless, offline, reproducible Chromium. */
export function chromiumArgs(): string[] {
  const args = [
    '--disable-background-networking', // the network is closed: no update checks, no safe-browsing lists
    '--disable-component-update',
    '--disable-dev-shm-usage', // containers have a tiny /dev/shm
    '--font-render-hinting=none', // same glyph outlines on every machine, for the reference images
    '--no-first-run',
    // Printing to PDF draws with Skia's PDF backend, never with a GPU or a rasterizer: no GPU, no software
    // GL, and what is left of the GPU process (the display compositor) in the browser process. The network
    // service, which only ever sees blocked requests, in the browser process too. Some 50 MiB less in all,
    // same PDFs (the reference-image tests), same speed: docs/performance.md "PDF memory, again".
    '--disable-gpu',
    '--disable-software-rasterizer',
    '--in-process-gpu',
    '--enable-features=NetworkServiceInProcess2',
  ];
  // Chromium refuses to start its sandbox as root (CI, containers).
  if (process.getuid?.() === 0) args.push('--no-sandbox');
  return args;
}
