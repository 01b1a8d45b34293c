/**
 * What the dashboard shows of a failed call (docs/dashboard.md, "Errors"): the envelope's message, code and
 * `request_id` (the value a merchant quotes to support), and whether the same request may succeed later.
 */
export interface Problem {
  /** The HTTP status; 0 when no answer came. */
  status: number;
  code: string;
  message: string;
  requestId: string | null;
  retryable: boolean;
}

/** A call's outcome: the 2xx body and status, or the problem. */
export type Answer<T> = { data: T; status: number; problem?: undefined } | { data?: undefined; problem: Problem };

export const NETWORK_PROBLEM: Problem = {
  status: 0,
  code: 'network_error',
  message: 'The service could not be reached. Check the connection, then retry: a retry sends the same request.',
  requestId: null,
  retryable: true,
};

/** The problem of a non-2xx answer: the error envelope when it is one, else what the status says. */
export function problemOf(response: Response, body: unknown): Problem {
  const error = (body as { error?: Partial<Record<string, unknown>> } | undefined)?.error;
  const text = (value: unknown) => (typeof value === 'string' ? value : null);
  return {
    status: response.status,
    code: text(error?.code) ?? `http_${response.status}`,
    message: text(error?.message) ?? `The service answered ${response.status} ${response.statusText}.`.trim(),
    requestId: text(error?.request_id) ?? response.headers.get('X-Request-Id'),
    retryable: typeof error?.retryable === 'boolean' ? error.retryable : response.status >= 500,
  };
}
