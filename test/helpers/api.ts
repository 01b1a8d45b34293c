import { env, exports } from 'cloudflare:workers';
import { createDeps } from '../../src/deps.ts';
import { users } from '../../src/db/schema/index.ts';
import { hashPassword } from '../../src/domain/passwords.ts';
import { BUSINESS_SCOPES, type Role, type Scope } from '../../src/domain/scopes.ts';
import { newId } from '../../src/lib/ids.ts';
import { checkConformance, type ObservedResponse } from './conformance.ts';
import { recordResponse, trackSecret } from './leak-scan.ts';

/**
 * Everything the suite sends goes through `call`, so every response body is recorded for the leak scan
 * and checked against the served description (test/helpers/conformance.ts).
 */
export interface CallOptions {
  body?: unknown;
  /** Sent as-is instead of JSON.stringify(body). */
  rawBody?: BodyInit;
  token?: string;
  headers?: Record<string, string>;
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  text: string;
  body: T;
  id: number;
}

export function randomIp(): string {
  const b = crypto.getRandomValues(new Uint8Array(3));
  return `10.${b[0]}.${b[1]}.${b[2]}`;
}

/** The request `call` sends, from a client address of its own. */
export function apiRequest(method: string, path: string, options: CallOptions = {}): Request {
  const headers: Record<string, string> = { 'CF-Connecting-IP': randomIp(), ...options.headers };
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  let body: BodyInit | undefined = options.rawBody;
  if (body === undefined && options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['Content-Type'] ??= 'application/json';
  }
  return new Request(`http://localhost${path}`, { method, headers, body });
}

/** A response as the conformance check reads it (test/helpers/conformance.ts). */
export const observedResponse = (method: string, path: string, res: Response, text: string): ObservedResponse => ({
  method,
  path,
  status: res.status,
  contentType: res.headers.get('content-type'),
  text,
  headers: res.headers,
});

export async function call<T = any>(method: string, path: string, options: CallOptions = {}): Promise<ApiResponse<T>> {
  const res = await exports.default.fetch(apiRequest(method, path, options));
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  const id = recordResponse(`${method} ${path}`, res.status, text);
  // Every response is also checked against the served /openapi.json (asserted in test/setup.ts).
  await checkConformance(observedResponse(method, path, res, text));
  trackSecretsOf(options.body, parsed, id);
  return { status: res.status, headers: res.headers, text, body: parsed as T, id };
}

export const TEST_PASSWORD = 'correct-horse-battery-staple';
let passwordHash: Promise<string> | undefined;

export interface TestUser {
  id: string;
  email: string;
  password: string;
  role: Role;
  scopes: Scope[];
}

/** Inserts a user straight into D1 (one shared scrypt hash per test file keeps the suite fast). */
export async function seedUser(options: { role?: Role; scopes?: Scope[]; email?: string } = {}): Promise<TestUser> {
  passwordHash ??= hashPassword(TEST_PASSWORD);
  trackSecret('password', TEST_PASSWORD);
  const now = Date.now();
  const user = {
    id: newId('usr'),
    email: options.email ?? `${newId('u')}@example.com`,
    name: 'Test User',
    role: options.role ?? 'client',
    scopes: options.scopes ?? [...BUSINESS_SCOPES],
  };
  await createDeps(env)
    .control.insert(users)
    .values({ ...user, passwordHash: await passwordHash, createdAt: now, updatedAt: now })
    .run();
  return { ...user, password: TEST_PASSWORD };
}

export interface Session {
  user: TestUser;
  accessToken: string;
  refreshToken: string;
}

export async function login(user: TestUser): Promise<Session> {
  const res = await call('POST', '/v1/auth/login', { body: { email: user.email, password: user.password } });
  if (res.status !== 201) throw new Error(`login failed: ${res.status} ${res.text}`);
  return { user, accessToken: res.body.data.access_token, refreshToken: res.body.data.refresh_token };
}

export async function seedSession(options: Parameters<typeof seedUser>[0] = {}): Promise<Session> {
  return login(await seedUser(options));
}

export async function createKey(session: Session, scopes: Scope[] = [...BUSINESS_SCOPES], name = 'test key') {
  const res = await call('POST', '/v1/account/api-keys', { token: session.accessToken, body: { name, scopes } });
  if (res.status !== 201) throw new Error(`api key creation failed: ${res.status} ${res.text}`);
  return res.body.data as { id: string; secret: string; scopes: Scope[] };
}

/** Asserts the error envelope and returns its error object. */
export function expectError(res: ApiResponse, status: number, code: string) {
  if (res.status !== status || res.body?.error?.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${res.status} ${res.text}`);
  }
  const error = res.body.error;
  for (const key of ['code', 'message', 'category', 'retryable', 'request_id', 'details']) {
    if (!(key in error)) throw new Error(`error envelope lacks ${key}: ${res.text}`);
  }
  if (error.request_id !== res.headers.get('x-request-id')) throw new Error('request_id differs from X-Request-Id');
  return error as {
    code: string;
    message: string;
    category: string;
    retryable: boolean;
    request_id: string;
    details: Record<string, unknown>;
  };
}

/**
 * Secrets are tracked automatically: a password or processor credential sent may appear in no response; a refresh token or API
 * key secret may appear only in the response that issued it.
 */
function trackSecretsOf(requestBody: unknown, responseBody: unknown, responseId: number) {
  const sent = requestBody as { password?: unknown; credentials?: unknown } | undefined;
  if (sent && typeof sent === 'object' && typeof sent.password === 'string') trackSecret('password', sent.password);
  // Processor credentials are write-only: no response may ever carry one of their values.
  if (sent && typeof sent === 'object' && sent.credentials && typeof sent.credentials === 'object') {
    for (const value of Object.values(sent.credentials))
      if (typeof value === 'string') trackSecret('credential', value);
  }
  const data = (responseBody as { data?: Record<string, unknown> } | undefined)?.data;
  if (data && typeof data === 'object') {
    if (typeof data.refresh_token === 'string') trackSecret('refresh_token', data.refresh_token, responseId);
    if (typeof data.secret === 'string') trackSecret('api_key_secret', data.secret, responseId);
  }
}
