/**
 * One error family for the whole service. Deciders and handlers throw
 * DomainError; src/api/errors.ts renders it into the reference's envelope.
 * The HTTP status of each code lives here so there is exactly one table.
 */

export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  INVALID_JSON: 400,
  ORG_HEADER_REQUIRED: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  API_DISABLED: 403,
  SUBSCRIPTION_EXPIRED: 403,
  API_TIER_NOT_SUPPORTED: 403,
  ACCOUNT_KEY_REQUIRED: 403,
  ENTITY_CAP_REACHED: 403,
  QUOTA_EXCEEDED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  INVOICE_NOT_EDITABLE: 409,
  INVOICE_NOT_DRAFT: 409,
  INVALID_STATUS_TRANSITION: 409,
  CANNOT_VOID_PAID: 409,
  ALREADY_VOIDED: 409,
  PDF_NOT_AVAILABLE: 409,
  XML_NOT_AVAILABLE: 409,
  ALREADY_ARCHIVED: 409,
  NOT_ARCHIVED: 409,
  INVALID_STATE: 409,
  CUSTOMER_INACTIVE: 409,
  VERSION_CONFLICT: 409,
  IDEMPOTENCY_KEY_REUSED: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
  PDF_RENDERER_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface FieldError {
  field: string;
  message: string;
}

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'DomainError';
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

/** A VALIDATION_ERROR with field details (docs/api-decisions.md "Errors"). */
export function validationError(fields: FieldError[], message = 'The request is invalid.'): DomainError {
  return new DomainError('VALIDATION_ERROR', message, { fields });
}

export function notFound(what = 'Resource'): DomainError {
  return new DomainError('NOT_FOUND', `${what} not found.`);
}
