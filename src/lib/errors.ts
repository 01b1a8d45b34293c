import { boundedDetails } from './echo.ts';

/**
 * The one error type of the API. Every failure a client can see is an `ApiError` with a code from
 * `ERROR_CODES`; its status, category and retryability come from that table (an error may override
 * the status where the contract says so, e.g. 413/415 `invalid_request`).
 */
export type ErrorCategory =
  | 'validation'
  | 'authentication'
  | 'authorization'
  | 'not_found'
  | 'conflict'
  | 'rate_limit'
  | 'processor'
  | 'configuration'
  | 'internal';

interface ErrorSpec {
  status: number;
  category: ErrorCategory;
  retryable: boolean;
  message: string;
}

export const ERROR_CODES = {
  invalid_request: { status: 400, category: 'validation', retryable: false, message: 'The request is invalid.' },
  idempotency_key_required: {
    status: 400,
    category: 'validation',
    retryable: false,
    message: 'The Idempotency-Key header is required.',
  },
  invalid_credentials: {
    status: 401,
    category: 'authentication',
    retryable: false,
    message: 'Email or password is incorrect.',
  },
  invalid_refresh_token: {
    status: 401,
    category: 'authentication',
    retryable: false,
    message: 'The refresh token is invalid, expired or already used; log in again.',
  },
  unauthorized: {
    status: 401,
    category: 'authentication',
    retryable: false,
    message: 'A valid credential is required.',
  },
  insufficient_role: {
    status: 403,
    category: 'authorization',
    retryable: false,
    message: 'Your role does not allow this operation.',
  },
  insufficient_scope: {
    status: 403,
    category: 'authorization',
    retryable: false,
    message: 'The credential lacks the scope this operation needs.',
  },
  not_found: { status: 404, category: 'not_found', retryable: false, message: 'No such route.' },
  user_not_found: { status: 404, category: 'not_found', retryable: false, message: 'No such user.' },
  api_key_not_found: { status: 404, category: 'not_found', retryable: false, message: 'No such API key.' },
  payment_method_not_found: {
    status: 404,
    category: 'validation',
    retryable: false,
    message: 'No such payment method for this credential.',
  },
  payment_not_found: { status: 404, category: 'not_found', retryable: false, message: 'No such payment.' },
  refund_not_found: {
    status: 404,
    category: 'not_found',
    retryable: false,
    message: 'No such refund of this payment.',
  },
  webhook_endpoint_not_found: {
    status: 404,
    category: 'not_found',
    retryable: false,
    message: 'No such webhook endpoint.',
  },
  email_taken: {
    status: 409,
    category: 'conflict',
    retryable: false,
    message: 'A user with this email already exists.',
  },
  external_reference_conflict: {
    status: 409,
    category: 'conflict',
    retryable: false,
    message: 'This external_reference was already used.',
  },
  idempotency_key_reused: {
    status: 409,
    category: 'conflict',
    retryable: false,
    message: 'This Idempotency-Key was used with a different request.',
  },
  invalid_state_transition: {
    status: 409,
    category: 'conflict',
    retryable: false,
    message: 'The resource is not in a state that allows this operation.',
  },
  webhook_endpoint_limit_reached: {
    status: 409,
    category: 'conflict',
    retryable: false,
    message: 'The webhook endpoint limit is reached; delete one first.',
  },
  concurrent_update: {
    status: 409,
    category: 'conflict',
    retryable: true,
    message: 'The payment is being changed by many requests at once; retry with the same Idempotency-Key and body.',
  },
  processor_declined: {
    status: 402,
    category: 'processor',
    retryable: false,
    message: 'The processor declined the operation.',
  },
  unsupported_currency: {
    status: 422,
    category: 'validation',
    retryable: false,
    message: 'The currency is not supported by this payment method.',
  },
  refund_exceeds_balance: {
    status: 422,
    category: 'validation',
    retryable: false,
    message: 'The refund exceeds the refundable balance.',
  },
  capability_not_supported: {
    status: 422,
    category: 'validation',
    retryable: false,
    message: 'The payment method does not support this operation.',
  },
  connector_configuration_invalid: {
    status: 422,
    category: 'configuration',
    retryable: false,
    message: 'The payment method is misconfigured; an administrator must fix it.',
  },
  rate_limited: {
    status: 429,
    category: 'rate_limit',
    retryable: true,
    message: 'Too many attempts; retry after the indicated wait.',
  },
  internal_error: { status: 500, category: 'internal', retryable: true, message: 'Something went wrong on our side.' },
  processor_unavailable: {
    status: 503,
    category: 'processor',
    retryable: true,
    message: 'The processor is unavailable; retry with the same Idempotency-Key and body.',
  },
  processor_timeout: {
    status: 504,
    category: 'processor',
    retryable: true,
    message: 'The processor did not answer in time; retry with the same Idempotency-Key and body, or reconcile.',
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface ApiErrorOptions {
  details?: Record<string, unknown>;
  status?: number;
  headers?: Record<string, string>;
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly category: ErrorCategory;
  readonly retryable: boolean;
  readonly details: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message?: string, options: ApiErrorOptions = {}) {
    const spec: ErrorSpec = ERROR_CODES[code];
    super(message ?? spec.message);
    this.name = 'ApiError';
    this.code = code;
    this.status = options.status ?? spec.status;
    this.category = spec.category;
    this.retryable = spec.retryable;
    this.details = options.details ?? {};
    this.headers = options.headers ?? {};
  }

  toBody(requestId: string) {
    return {
      error: {
        code: this.code,
        message: this.message,
        category: this.category,
        retryable: this.retryable,
        request_id: requestId,
        // Details may repeat client text (field paths built from its keys): bounded wherever they are built.
        details: boundedDetails(this.details),
      },
    };
  }
}

/** One invalid input, named by its path; never carries the offending value. */
export interface FieldIssue {
  field: string;
  issue: string;
}

export function invalidRequest(message: string, fields: FieldIssue[] = [], status?: number): ApiError {
  return new ApiError('invalid_request', message, {
    details: fields.length > 0 ? { fields } : {},
    ...(status !== undefined ? { status } : {}),
  });
}
