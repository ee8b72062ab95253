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
        success: { const: false },
        error: {
          type: 'object',
          required: ['code', 'message'],
          properties: {
            code: { type: 'string' },
            message: { type: 'string' },
            details: {
              type: 'object',
              description: 'fields: [{field, message}] for VALIDATION_ERROR and INVALID_JSON; required_scopes or reason for FORBIDDEN.',
              properties: {
                fields: {
                  type: 'array',
                  items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } } },
                },
                required_scopes: { type: 'array', items: { type: 'string' } },
                reason: { type: 'string' },
                request_id: { type: 'string' },
              },
            },
          },
        },
      },
    },
    Pagination: {
      type: 'object',
      required: ['total', 'page', 'perPage', 'totalPages'],
      properties: {
        total: { type: 'integer' },
        page: { type: 'integer' },
        perPage: { type: 'integer' },
        totalPages: { type: 'integer' },
      },
    },
  },
  headers: {
    'X-RateLimit-Limit': { description: 'Requests allowed per one-minute window for this key.', schema: { type: 'integer' } },
    'X-RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer' } },
    'X-RateLimit-Reset': { description: 'Unix time in seconds at which the window resets.', schema: { type: 'integer' } },
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
      description: 'The ETag of the version the change is based on; a stale one answers 409 VERSION_CONFLICT.',
      schema: { type: 'string' },
    },
  },
};
