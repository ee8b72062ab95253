/** Shared parts of the OpenAPI document: security, envelopes, common headers and parameters. */

export const components = {
  securitySchemes: {
    bearerAuth: {
      type: 'http',
      scheme: 'bearer',
      description:
        'An API key: svc_test_ (SERVICE_MODE=test), svc_live_ (SERVICE_MODE=live) or svc_acct_ (account-level, both modes).',
    },
  },
  schemas: {
    Error: {
      type: 'object',
      required: ['success', 'error'],
      properties: {
        success: { type: 'boolean', const: false },
        error: {
          type: 'object',
          required: ['code', 'message'],
          properties: {
            code: { type: 'string', description: 'Stable error code (the answer\'s HTTP status follows from it).' },
            message: { type: 'string', description: 'Human-readable; may change.' },
            details: {
              type: 'object',
              description: 'fields for VALIDATION_ERROR and INVALID_JSON (every problem of the request at once); required_scopes or reason for FORBIDDEN; current_version for VERSION_CONFLICT.',
              properties: {
                fields: { type: 'array', items: { $ref: '#/components/schemas/FieldError' } },
                required_scopes: { type: 'array', items: { type: 'string' } },
                reason: { type: 'string' },
                current_version: { type: 'integer' },
                retry_after: { type: 'integer' },
                request_id: { type: 'string' },
              },
            },
          },
        },
      },
    },
    FieldError: {
      type: 'object',
      required: ['field', 'message'],
      properties: {
        field: { type: 'string', description: 'Path of the field, e.g. items[0].quantity, or a header name (If-Match).', example: 'items[0].quantity' },
        message: { type: 'string', example: 'must be greater than 0' },
      },
    },
    Pagination: {
      type: 'object',
      required: ['total', 'page', 'perPage', 'totalPages'],
      properties: {
        total: { type: 'integer', description: 'Items matching the filters.' },
        page: { type: 'integer' },
        perPage: { type: 'integer' },
        totalPages: { type: 'integer' },
      },
    },
  },
  headers: {
    'X-Request-Id': { description: 'The request id (the client\'s X-Request-Id when it is 1..128 of [A-Za-z0-9_.-], else a fresh UUID); quoted by a 500 and in the log.', schema: { type: 'string' } },
    'X-RateLimit-Limit': { description: 'Requests allowed per one-minute window for this key.', schema: { type: 'integer' } },
    'X-RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer' } },
    'X-RateLimit-Reset': { description: 'Unix time in seconds at which the window resets.', schema: { type: 'integer' } },
    'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
    'WWW-Authenticate': { description: 'Bearer.', schema: { type: 'string' } },
    ETag: { description: 'The resource version as a strong entity tag, "<version>"; send it back in If-Match.', schema: { type: 'string', example: '"3"' } },
    Location: { description: 'Path of the created resource, e.g. /api/v1/invoices/{id}.', schema: { type: 'string', format: 'uri-reference' } },
    Link: {
      description: 'RFC 8288 navigation of a list: <...>; rel="first", rel="prev", rel="next", rel="last" (paths with the same filters; next and prev only when that page exists).',
      schema: { type: 'string' },
    },
    'Idempotent-Replayed': { description: 'true when this is the stored answer of an earlier request with the same Idempotency-Key (same status and body bytes).', schema: { type: 'string', enum: ['true'] } },
    'Content-Disposition': { description: 'attachment; filename="INV-2026-000001.pdf" (or .xml).', schema: { type: 'string' } },
  },
  parameters: {
    OrganizationId: {
      name: 'X-Organization-Id',
      in: 'header',
      required: false,
      description: 'With an account-level key: the organization to act on (required). Organization keys act on their own.',
      schema: { type: 'string', format: 'uuid' },
    },
    IdempotencyKey: {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description: 'Replays the first response of the same request for 24 h; another body with the same key answers 409.',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    },
    IfMatch: {
      name: 'If-Match',
      in: 'header',
      required: false,
      description: 'The ETag (a strong entity tag, "<version>") of the version the change is based on; a stale one answers 409 VERSION_CONFLICT, a weak one (W/"3") 400 VALIDATION_ERROR (RFC 9110 strong comparison: it never matches).',
      schema: { type: 'string' },
    },
  },
};
