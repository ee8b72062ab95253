/**
 * How an endpoint is declared. Every route of /api/v1 is one RouteSpec in a
 * router file per resource (src/api/<resource>.ts). The pipeline
 * (src/api/pipeline/) turns specs into express handlers in the order of
 * docs/api-decisions.md "Keys, plans and quotas", and src/api/openapi.ts documents the same specs, so the
 * JSON schemas that validate a request are the ones the OpenAPI shows.
 */
import type { Request, Response } from 'express';
import type { EventMetadata, EventStore } from '../eventstore/types.ts';
import type { Runtime } from '../runtime.ts';
import type { Scope } from '../accounts/scopes.ts';
import type { ErrorCode, FieldError } from '../shared/errors.ts';
import type { Prefetched, PrefetchKind } from './pipeline/prefetch.ts';

export type { Scope };

/** A JSON schema as ajv takes it (draft 2020-12 subset; additionalProperties: false on bodies). */
export type JsonSchema = Record<string, unknown>;

export interface ApiKeyInfo {
  id: string;
  kind: 'organization' | 'account';
  mode: 'test' | 'live' | 'account';
  accountId: string;
  /** For organization keys: their organization. */
  organizationId: string | null;
  scopes: readonly Scope[];
}

export interface RequestContext {
  rt: Runtime;
  req: Request;
  res: Response;
  requestId: string;
  key: ApiKeyInfo;
  /** The organization the request acts on (null on /organizations* routes). */
  organizationId: string | null;
  /**
   * Facts the key's statement fetched for this route (RouteSpec.prefetch; src/api/pipeline/prefetch.ts);
   * emptied when the request waited for another attempt of its Idempotency-Key.
   */
  prefetched: Prefetched;
  /** The event store this request's writes go to: the runtime's, or on a remembered key its view under the key's condition. */
  store: EventStore;
  /** If-Match as a stream revision (undefined when absent). */
  ifMatch?: number;
  /** Metadata for events appended by this request. */
  metadata(): EventMetadata;
  /**
   * The id of a resource this request creates (`kind`: 'invoice', 'customer',
   * ...): a fresh UUID v7, or under an Idempotency-Key the same one on every
   * attempt of the request (derived from the key's seed), so a retry after a
   * crash finds the resource instead of creating another.
   */
  newId(kind: string): string;
  /** Set by the pipeline once it holds the Idempotency-Key's claim. */
  idempotencySeed: string | null;
}

export interface Input<B = any, Q = any> {
  body: B;
  query: Q;
  params: Record<string, string>;
}

export interface JsonReply {
  status?: number; // default 200
  data: unknown;
  /** Sets ETag: "<version>" */
  version?: number;
  pagination?: { total: number; page: number; perPage: number; totalPages: number };
}

export interface FileReply {
  status?: number;
  file: { contentType: string; filename: string; body: Buffer | string };
}

export type Reply = JsonReply | FileReply;

/**
 * The domain rules of a body, run by the pipeline when the JSON schema has
 * already refused it, so one answer lists every field problem (the schema's
 * and the domain's; docs/api-decisions.md "Errors"). It gets the parsed body
 * as sent, of any shape, and returns the field errors the route's command
 * would report (never throws for a wrong shape).
 */
export type BodyCheck = (ctx: { rt: Runtime; organizationId: string | null; accountId: string; params: Record<string, string> }, body: unknown) => Promise<FieldError[]> | FieldError[];

export interface RouteSpec<B = any, Q = any> {
  method: 'get' | 'post' | 'patch' | 'put' | 'delete';
  /** The OpenAPI operationId, a verb and the resource (`listInvoices`, `finalizeInvoice`). Derived from the path when absent. */
  operationId?: string;
  /** Express path below /api/v1, e.g. '/invoices/:id/finalize'. ':id' params must be UUIDs (else 404). */
  path: string;
  summary: string;
  tag: string;
  /** The one scope the key needs (docs/api-decisions.md "Keys, plans and quotas": scopes never imply each other). */
  scope: Scope;
  /** 'organization': regular endpoints; 'account': /organizations* (account key required). */
  audience: 'organization' | 'account';
  body?: JsonSchema;
  query?: JsonSchema;
  /** Success status for OpenAPI (default 200). */
  successStatus?: number;
  /**
   * For a route that answers 201: the path (below /api/v1) of what it
   * created, its `:id` taken from the answer's `data.id`; the pipeline sends
   * it as `Location` (docs/api-decisions.md "Status codes").
   */
  location?: string;
  /** Domain rules of the body, reported with the schema's errors (see BodyCheck). */
  check?: BodyCheck;
  /**
   * What the handler will read, fetched by the key's statement (round trips fewer): the customer its body names,
   * or the invoice its path names, its stream and its customer (src/api/pipeline/prefetch.ts).
   */
  prefetch?: PrefetchKind;
  /**
   * The route may run on what the process remembers of its key and of the customer its body names, its write
   * committing under a condition that reads them again (src/api/pipeline/remembered.ts). Only for a handler
   * whose one effect is one append through ctx.store, with `prefetch: 'customer-of-body'`.
   */
  rememberedKey?: true;
  /** The route changes the customer its path names: a remembered copy of it is forgotten (src/api/pipeline/remembered.ts). */
  changesCustomer?: true;
  /** Schema of `data` in the success envelope, for OpenAPI (optional). */
  response?: JsonSchema;
  /** Endpoint-specific error codes, for OpenAPI. */
  errors?: ErrorCode[];
  /** Raw file response (PDF, XML) instead of the JSON envelope. */
  produces?: string;
  handler(ctx: RequestContext, input: Input<B, Q>): Promise<Reply>;
}
