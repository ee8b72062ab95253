/**
 * `audit export`: every event of one organization whose occurred_at falls in
 * a date range (calendar days in Africa/Casablanca, inclusive), in log order,
 * with its hash, as JSON lines or CSV (docs/audit.md "Export"). It streams:
 * one page of the log in memory at a time, and it waits for the output to
 * drain before reading the next page, so memory stays bounded whatever the
 * size of the log.
 */
import type { Writable } from 'node:stream';
import { getHeapStatistics } from 'node:v8';
import type { EventStore, RecordedEvent, TextLogEntry } from '../eventstore/types.ts';
import { BUSINESS_TIME_ZONE } from '../shared/business-time.ts';
import { logPages, pagesAhead } from './log-fold.ts';

const CASABLANCA = new Intl.DateTimeFormat('en-CA', { timeZone: BUSINESS_TIME_ZONE, year: 'numeric', month: '2-digit', day: '2-digit' });

export type ExportFormat = 'jsonl' | 'csv';

/** The UTC instant at which `date` (YYYY-MM-DD) starts in Casablanca (UTC+0 or UTC+1, depending on the season). */
export function casablancaMidnight(date: string): Date {
  const utc = Date.parse(`${date}T00:00:00.000Z`);
  for (const offsetHours of [1, 0, 2, -1]) {
    const candidate = utc - offsetHours * 3_600_000;
    if (CASABLANCA.format(candidate) === date && CASABLANCA.format(candidate - 1) !== date) return new Date(candidate);
  }
  throw new Error(`cannot place midnight of ${date} in Africa/Casablanca`);
}

/**
 * Events per page read. Small pages keep the process small: with pages of
 * 5,000 a 1,000,000-event export peaked at 316 to 336 MiB RSS (every page
 * and the one read ahead live long enough to reach V8's old generation,
 * which is collected late); with 200, 172 MiB (JSON lines) and 185 MiB
 * (CSV), at the same speed (docs/performance.md "Audit").
 */
const EXPORT_PAGE = 200;

export const CSV_COLUMNS = ['position', 'stream', 'revision', 'event_id', 'type', 'occurred_at', 'actor', 'hash', 'data', 'metadata'] as const;

/** RFC 4180 field: quoted when it holds a comma, quote or line break. */
function csvField(value: unknown): string {
  const text = value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  if (text.includes('"')) return `"${text.replaceAll('"', '""')}"`; // every data and metadata field: JSON has quotes
  return /[,\r\n]/.test(text) ? `"${text}"` : text;
}

type ExportRow = Record<(typeof CSV_COLUMNS)[number], unknown>;

function csvLine(row: ExportRow): string {
  return `${CSV_COLUMNS.map((c) => csvField(row[c])).join(',')}\r\n`;
}

function line(e: RecordedEvent, format: ExportFormat): string {
  const { occurred_at, actor } = e.metadata;
  const row = { position: e.position, stream: e.stream, revision: e.revision, event_id: e.id, type: e.type, occurred_at, actor, hash: e.hash, data: e.data, metadata: e.metadata };
  return format === 'jsonl' ? `${JSON.stringify(row)}\n` : csvLine(row);
}

/**
 * One line of JSON text as stored. A line break in stored JSON text can only be whitespace between tokens (inside a
 * string JSON escapes it), which the service never writes but an edit by hand may: it becomes a space, the same JSON.
 */
function oneLine(json: string): string {
  return json.includes('\n') || json.includes('\r') ? json.replace(/[\r\n]/g, ' ') : json;
}

/** The same line from a text entry (readAllText): data and metadata are copied as stored (the hashed text). */
function textLine(position: string, e: NonNullable<TextLogEntry['event']>, format: ExportFormat): string {
  if (format === 'csv') {
    const { stream, revision, type, occurred_at, actor, hash, data, metadata } = e;
    return csvLine({ position, stream, revision, event_id: e.id, type, occurred_at, actor, hash, data, metadata });
  }
  // Written out rather than looped over CSV_COLUMNS (the same keys, in the same order, as line()'s JSON):
  // this runs once per exported event, and the loop made a line cost 4.0 us instead of 2.3 (measured).
  // An absent occurred_at or actor is left out, as JSON.stringify leaves out undefined.
  const q = JSON.stringify;
  return `{"position":${q(position)},"stream":${q(e.stream)},"revision":${e.revision},"event_id":${q(e.id)},"type":${q(e.type)}` +
    `${e.occurred_at === undefined ? '' : `,"occurred_at":${q(e.occurred_at)}`}${e.actor === undefined ? '' : `,"actor":${q(e.actor)}`}` +
    `,"hash":${q(e.hash)},"data":${oneLine(e.data)},"metadata":${oneLine(e.metadata)}}\n`;
}

/** Set when the process runs with --expose-gc (`npm run admin` does). */
const gc = (globalThis as { gc?: (options?: { type?: 'major' | 'minor'; execution?: 'sync' | 'async' }) => void }).gc;

/**
 * Keeps the export's heap near its live size (a page or two): each page lives
 * just long enough for some of it to reach V8's old generation, which V8
 * lets grow to several times its live size before collecting it (on Node 26,
 * peaks from 120 to over 200 MiB RSS over a million events, from one run to
 * the next). A full collection of this heap every 20,000 events, once it
 * passes 48 MiB, takes a few milliseconds.
 */
function heapKeeper(): (read: number) => void {
  let collectedAt = 0;
  return (read) => {
    if (!gc || read - collectedAt < 20_000) return;
    collectedAt = read;
    if (getHeapStatistics().used_heap_size > 48 * 1024 * 1024) gc({ type: 'major', execution: 'sync' });
  };
}

/** The output went away before the export was done (its reader closed the pipe): not a failure of the export. */
export class OutputClosed extends Error {
  constructor() {
    super('the output was closed before the export was done');
    this.name = 'OutputClosed';
  }
}

export interface ExportOptions {
  organizationId: string;
  from: string;
  to: string;
  format: ExportFormat;
  onProgress?: (read: number, written: number) => void;
}

/**
 * Writes the export to `out`; returns how many events it wrote. A store
 * with readAllText (PostgreSQL) hands over the organization's events as
 * JSON text, copied into the lines without being parsed and printed again
 * (about twice as fast, docs/performance.md "Audit"); otherwise every event
 * is read whole and filtered here.
 */
export async function exportEvents(store: EventStore, out: Writable, options: ExportOptions): Promise<number> {
  const start = casablancaMidnight(options.from).toISOString();
  const next = new Date(Date.parse(`${options.to}T00:00:00.000Z`) + 86_400_000).toISOString().slice(0, 10);
  const end = casablancaMidnight(next).toISOString();
  const inRange = (at: unknown) => typeof at === 'string' && at >= start && at < end;
  // The reader may go away (`audit export ... | head`): a write then fails with EPIPE, or the stream
  // closes. The export stops there instead of reading the rest of the log into nowhere.
  let gone = false;
  out.on('error', () => (gone = true)); // kept for the stream's life: a late EPIPE must not become uncaught
  out.once('close', () => (gone = true));
  const write = async (text: string) => {
    if (gone) throw new OutputClosed();
    if (out.write(text)) return;
    await new Promise<void>((resolve) => {
      const settle = () => {
        out.off('drain', settle);
        out.off('close', settle);
        out.off('error', settle);
        resolve();
      };
      out.once('drain', settle);
      out.once('close', settle);
      out.once('error', settle);
    });
    if (gone) throw new OutputClosed();
  };
  if (options.format === 'csv') await write(`${CSV_COLUMNS.join(',')}\r\n`);
  const collectOldPages = heapKeeper(); // this export's own count
  let read = 0;
  let written = 0;
  const flush = async (chunk: string, pageLength: number) => {
    read += pageLength;
    if (chunk) await write(chunk);
    options.onProgress?.(read, written);
    collectOldPages(read);
  };
  const textPages = store.readAllText?.bind(store);
  if (textPages) {
    for await (const page of pagesAhead((after) => textPages(after, EXPORT_PAGE, options.organizationId))) {
      let chunk = '';
      for (const { position, event } of page) {
        if (event && inRange(event.occurred_at)) {
          chunk += textLine(position, event, options.format);
          written++;
        }
      }
      await flush(chunk, page.length);
    }
    return written;
  }
  for await (const page of logPages(store, EXPORT_PAGE)) {
    let chunk = '';
    for (const e of page) {
      if (e.metadata?.organization_id === options.organizationId && inRange(e.metadata?.occurred_at)) {
        chunk += line(e, options.format);
        written++;
      }
    }
    await flush(chunk, page.length);
  }
  return written;
}
