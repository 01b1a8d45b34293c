import { ERROR_CODES, type ErrorCode, type ErrorOutcome, ServiceError, type FieldIssue } from '../lib/errors.ts';
import { boundedDetails } from '../lib/echo.ts';

/**
 * The one place where errors become HTTP: each code's status, the envelope, and the headers an error
 * carries. Services, the idempotency runner and jobs speak `ServiceError`s (lib/errors.ts); the error
 * handler, the idempotent-operation answer and the OpenAPI error responses all read this table.
 */
export const HTTP_STATUS = {
  invalid_request: 400,
  idempotency_key_required: 400,
  invalid_credentials: 401,
  invalid_refresh_token: 401,
  unauthorized: 401,
  insufficient_role: 403,
  insufficient_scope: 403,
  not_found: 404,
  user_not_found: 404,
  api_key_not_found: 404,
  payment_method_not_found: 404,
  payment_not_found: 404,
  refund_not_found: 404,
  dispute_not_found: 404,
  webhook_endpoint_not_found: 404,
  email_taken: 409,
  external_reference_conflict: 409,
  idempotency_key_reused: 409,
  invalid_state_transition: 409,
  payment_disputed: 409,
  webhook_endpoint_limit_reached: 409,
  concurrent_update: 409,
  terminal_unavailable: 409,
  processor_declined: 402,
  unsupported_currency: 422,
  refund_exceeds_balance: 422,
  capability_not_supported: 422,
  connector_configuration_invalid: 422,
  rate_limited: 429,
  internal_error: 500,
  processor_unavailable: 503,
  owner_moving: 503,
  processor_timeout: 504,
} as const satisfies Record<ErrorCode, number>;

/**
 * An error only the HTTP edge raises, with a status of its own where the contract gives the code more than
 * one (`invalid_request` answers 413 for a body too large and 415 for another media type).
 */
export class EdgeError extends ServiceError {
  constructor(
    readonly status: number,
    message: string,
    fields: FieldIssue[] = [],
  ) {
    super('invalid_request', message, { details: fields.length > 0 ? { fields } : {} });
  }
}

export function statusOf(error: ServiceError | ErrorOutcome): number {
  return error instanceof EdgeError ? error.status : HTTP_STATUS[error.code];
}

/** The error envelope (docs/errors.md); `request_id` is always the answering request's own. */
export function errorEnvelope(error: ErrorOutcome, requestId: string) {
  const spec = ERROR_CODES[error.code];
  return {
    error: {
      code: error.code,
      message: error.message,
      category: spec.category,
      retryable: spec.retryable,
      request_id: requestId,
      // Details may repeat client text (field paths built from its keys): bounded wherever they are built.
      details: boundedDetails(error.details),
    },
  };
}

export function errorHeaders(error: ErrorOutcome): Record<string, string> {
  return error.retryAfterSeconds !== undefined ? { 'Retry-After': String(error.retryAfterSeconds) } : {};
}
