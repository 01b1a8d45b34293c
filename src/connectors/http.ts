import { ConnectorError } from './types.ts';

/**
 * The one way a connector talks HTTP to its processor: a fixed timeout on every request, the body read as
 * JSON where it is JSON, and a fetch that throws (our timeout, or a network that never answered) turned
 * into the retryable `ConnectorError` each processor words its own way. What a status code means stays
 * with each connector: it differs by processor.
 */

export interface ProcessorHttp {
  /** Every request is aborted after this long; the outcome is then unknown, hence `timeout`. */
  timeoutMs: number;
  /** `processorCode` and message of an aborted request. */
  timeout: { code: string; message: string };
  /** `processorCode` and message of a request that never got an answer. */
  network: { code: string; message: string };
}

export interface HttpAnswer {
  status: number;
  ok: boolean;
  headers: Headers;
  /** The parsed JSON body; null when empty or not JSON (the caller then maps by status alone). */
  json: unknown;
}

export interface HttpRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** A fetch that threw: aborted by its timeout signal, or a network failure. */
export function fetchFailure(error: unknown, http: ProcessorHttp): ConnectorError {
  const name = (error as { name?: unknown } | null)?.name;
  if (name === 'TimeoutError' || name === 'AbortError')
    return new ConnectorError('timeout', http.timeout.message, http.timeout.code);
  return new ConnectorError('unavailable', http.network.message, http.network.code);
}

/** Sends one request; only a fetch that throws becomes an error here, every HTTP answer is returned. */
export async function sendRequest(
  fetchFn: typeof fetch,
  http: ProcessorHttp,
  request: HttpRequest,
): Promise<HttpAnswer> {
  let response: Response;
  let text: string;
  try {
    response = await fetchFn(request.url, {
      method: request.method,
      headers: request.headers,
      ...(request.body !== undefined ? { body: request.body } : {}),
      signal: AbortSignal.timeout(http.timeoutMs),
    });
    // Reading the body is part of the request: a body cut off by the timeout is a timeout too.
    text = await response.text();
  } catch (error) {
    throw fetchFailure(error, http);
  }
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  return { status: response.status, ok: response.ok, headers: response.headers, json };
}

/** A processor code fit for `details.processor_code`: a short identifier, never free text of the payload. */
export function safeCode(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isInteger(value)) value = String(value);
  if (typeof value !== 'string') return undefined;
  return /^[A-Za-z0-9_.-]{1,64}$/.test(value) ? value : undefined;
}
