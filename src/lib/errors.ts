import type { z } from 'zod';

/**
 * The errors of the service, in the domain's words. Every failure a client can see is a `ServiceError`
 * with a code from `ERROR_CODES`, which gives its category, retryability and default message; nothing
 * here knows HTTP. The HTTP edge alone maps a code to a status and the envelope (src/http/errors.ts),
 * so services, the idempotency runner and jobs throw and store these as they are.
 */
export const ERROR_CATEGORIES = [
  'validation',
  'authentication',
  'authorization',
  'not_found',
  'conflict',
  'rate_limit',
  'processor',
  'configuration',
  'internal',
] as const;

export type ErrorCategory = (typeof ERROR_CATEGORIES)[number];

interface ErrorSpec {
  category: ErrorCategory;
  retryable: boolean;
  message: string;
}

export const ERROR_CODES = {
  invalid_request: { category: 'validation', retryable: false, message: 'The request is invalid.' },
  idempotency_key_required: {
    category: 'validation',
    retryable: false,
    message: 'The Idempotency-Key header is required.',
  },
  invalid_credentials: {
    category: 'authentication',
    retryable: false,
    message: 'Email or password is incorrect.',
  },
  invalid_refresh_token: {
    category: 'authentication',
    retryable: false,
    message: 'The refresh token is invalid, expired or already used; log in again.',
  },
  unauthorized: {
    category: 'authentication',
    retryable: false,
    message: 'A valid credential is required.',
  },
  insufficient_role: {
    category: 'authorization',
    retryable: false,
    message: 'Your role does not allow this operation.',
  },
  insufficient_scope: {
    category: 'authorization',
    retryable: false,
    message: 'The credential lacks the scope this operation needs.',
  },
  not_found: { category: 'not_found', retryable: false, message: 'No such route.' },
  user_not_found: { category: 'not_found', retryable: false, message: 'No such user.' },
  api_key_not_found: { category: 'not_found', retryable: false, message: 'No such API key.' },
  payment_method_not_found: {
    category: 'validation',
    retryable: false,
    message: 'No such payment method for this credential.',
  },
  payment_not_found: { category: 'not_found', retryable: false, message: 'No such payment.' },
  refund_not_found: {
    category: 'not_found',
    retryable: false,
    message: 'No such refund of this payment.',
  },
  dispute_not_found: { category: 'not_found', retryable: false, message: 'No such dispute.' },
  webhook_endpoint_not_found: {
    category: 'not_found',
    retryable: false,
    message: 'No such webhook endpoint.',
  },
  email_taken: {
    category: 'conflict',
    retryable: false,
    message: 'A user with this email already exists.',
  },
  external_reference_conflict: {
    category: 'conflict',
    retryable: false,
    message: 'This external_reference was already used.',
  },
  idempotency_key_reused: {
    category: 'conflict',
    retryable: false,
    message: 'This Idempotency-Key was used with a different request.',
  },
  invalid_state_transition: {
    category: 'conflict',
    retryable: false,
    message: 'The resource is not in a state that allows this operation.',
  },
  payment_disputed: {
    category: 'conflict',
    retryable: false,
    message: 'A dispute of this payment is open: no refund or void until it closes.',
  },
  webhook_endpoint_limit_reached: {
    category: 'conflict',
    retryable: false,
    message: 'The webhook endpoint limit is reached; delete one first.',
  },
  concurrent_update: {
    category: 'conflict',
    retryable: true,
    message: 'The payment is being changed by many requests at once; retry with the same Idempotency-Key and body.',
  },
  terminal_unavailable: {
    category: 'processor',
    retryable: true,
    message:
      'The POS terminal cannot take the payment now (`details.terminal_status`: offline or busy); nothing was charged. Retry with the same Idempotency-Key and body once it is online and free.',
  },
  processor_declined: {
    category: 'processor',
    retryable: false,
    message: 'The processor declined the operation.',
  },
  unsupported_currency: {
    category: 'validation',
    retryable: false,
    message: 'The currency is not supported by this payment method.',
  },
  refund_exceeds_balance: {
    category: 'validation',
    retryable: false,
    message: 'The refund exceeds the refundable balance.',
  },
  capability_not_supported: {
    category: 'validation',
    retryable: false,
    message: 'The payment method does not support this operation.',
  },
  connector_configuration_invalid: {
    category: 'configuration',
    retryable: false,
    message: 'The payment method is misconfigured; an administrator must fix it.',
  },
  rate_limited: {
    category: 'rate_limit',
    retryable: true,
    message: 'Too many attempts; retry after the indicated wait.',
  },
  internal_error: { category: 'internal', retryable: true, message: 'Something went wrong on our side.' },
  processor_unavailable: {
    category: 'processor',
    retryable: true,
    message: 'The processor is unavailable; retry with the same Idempotency-Key and body.',
  },
  owner_moving: {
    category: 'internal',
    retryable: true,
    message: "This account's data is being moved between databases; retry after the indicated wait (reads still work).",
  },
  processor_timeout: {
    category: 'processor',
    retryable: true,
    message: 'The processor did not answer in time; retry with the same Idempotency-Key and body, or reconcile.',
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface ServiceErrorOptions {
  details?: Record<string, unknown>;
  /** How long a retry should wait at least (rate limits): the edge sends it as `Retry-After`. */
  retryAfterSeconds?: number;
}

/** What an error is once it leaves the code that threw it: stored by the idempotency runner, sent by the edge. */
export interface ErrorOutcome {
  code: ErrorCode;
  message: string;
  details: Record<string, unknown>;
  retryAfterSeconds?: number;
}

export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly category: ErrorCategory;
  readonly retryable: boolean;
  readonly details: Record<string, unknown>;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, message?: string, options: ServiceErrorOptions = {}) {
    const spec: ErrorSpec = ERROR_CODES[code];
    super(message ?? spec.message);
    this.name = 'ServiceError';
    this.code = code;
    this.category = spec.category;
    this.retryable = spec.retryable;
    this.details = options.details ?? {};
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  toOutcome(): ErrorOutcome {
    return {
      code: this.code,
      message: this.message,
      details: this.details,
      ...(this.retryAfterSeconds !== undefined ? { retryAfterSeconds: this.retryAfterSeconds } : {}),
    };
  }

  static fromOutcome(outcome: ErrorOutcome): ServiceError {
    return new ServiceError(outcome.code, outcome.message, {
      details: outcome.details,
      ...(outcome.retryAfterSeconds !== undefined ? { retryAfterSeconds: outcome.retryAfterSeconds } : {}),
    });
  }
}

/** One invalid input, named by its path; never carries the offending value. */
export interface FieldIssue {
  field: string;
  issue: string;
}

export function invalidRequest(message: string, fields: FieldIssue[] = []): ServiceError {
  return new ServiceError('invalid_request', message, { details: fields.length > 0 ? { fields } : {} });
}

/** Turns zod issues into field names and messages; the offending values are never echoed. */
export function zodIssuesToFields(error: z.ZodError, prefix?: string): FieldIssue[] {
  const fields: FieldIssue[] = [];
  for (const issue of error.issues) {
    const base = [prefix, ...issue.path.map(String)].filter(Boolean).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) fields.push({ field: base ? `${base}.${key}` : key, issue: 'Unknown field' });
    } else {
      fields.push({ field: base || '(body)', issue: issue.message });
    }
  }
  return fields;
}
