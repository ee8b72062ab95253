/**
 * The last step: a handler's Reply becomes an HTTP response. JSON replies get
 * the success envelope ({ success, data, meta.pagination }) and, when they
 * carry a version, ETag "<version>"; file replies (PDF, XML) are sent raw as
 * attachments. Rendering is separate from sending so that the Idempotency-Key
 * store keeps exactly what was sent.
 */
import type { Response } from 'express';
import { DomainError } from '../../shared/errors.ts';
import { errorEnvelope } from '../errors.ts';
import type { FileReply, Reply } from '../route.ts';

export interface Rendered {
  status: number;
  /** Headers that belong to the resource (ETag, Content-Disposition); not the per-request ones. */
  headers: Record<string, string>;
  /** JSON body, or null for a file. */
  json: unknown;
  file: FileReply['file'] | null;
  /** The JSON body exactly as first sent (an Idempotency-Key replay); else `json` is serialized. */
  bytes?: string;
}

/** The JSON body as sent: what an Idempotency-Key replay answers byte for byte. */
export function bodyBytes(r: Rendered): string {
  return r.bytes ?? JSON.stringify(r.json);
}

export function etagOf(version: number): string {
  return `"${version}"`;
}

function isFile(reply: Reply): reply is FileReply {
  return 'file' in reply;
}

/** RFC 6266 filename: ASCII with quotes escaped, plus filename* for anything else. */
function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const star = ascii === filename ? '' : `; filename*=UTF-8''${encodeURIComponent(filename)}`;
  return `attachment; filename="${ascii}"${star}`;
}

export function renderReply(reply: Reply): Rendered {
  const status = reply.status ?? 200;
  if (isFile(reply)) {
    return {
      status,
      headers: { 'Content-Type': reply.file.contentType, 'Content-Disposition': contentDisposition(reply.file.filename) },
      json: null,
      file: reply.file,
    };
  }
  const headers: Record<string, string> = {};
  if (reply.version !== undefined) headers.ETag = etagOf(reply.version);
  const json: Record<string, unknown> = { success: true, data: reply.data ?? null };
  if (reply.pagination) json.meta = { pagination: reply.pagination };
  return { status, headers, json, file: null };
}

export function renderError(err: DomainError): Rendered {
  return { status: err.status, headers: {}, json: errorEnvelope(err), file: null };
}

export function send(res: Response, r: Rendered): void {
  for (const [name, value] of Object.entries(r.headers)) res.setHeader(name, value);
  res.status(r.status);
  if (r.file) {
    res.send(typeof r.file.body === 'string' ? Buffer.from(r.file.body, 'utf8') : r.file.body);
  } else {
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.send(bodyBytes(r));
  }
}
