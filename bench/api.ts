// What the bench's tools (run.ts, profile.ts) send a local server: requests as fetch and autocannon send them, and a
// merchant set up through the API. Measurement only; nothing of it runs in the service.
import { randomBytes } from 'node:crypto';
import { D1_STATS_HEADER, parseD1Stats } from './d1.ts';

export interface RequestSpec {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export type Answer = { status: number; headers: Headers; text: string; body: any };

/** `spec` with its JSON body's `Content-Type`. */
export const withContentType = (spec: RequestSpec): RequestSpec =>
  spec.body === undefined ? spec : { ...spec, headers: { 'Content-Type': 'application/json', ...spec.headers } };

export async function send(base: string, spec: RequestSpec): Promise<Answer> {
  const { method, headers, body } = withContentType(spec);
  const res = await fetch(base + spec.path, { method, headers, body, signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  // The service and the baseline answer JSON, or nothing.
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined };
}

/** `spec` answered below 300 (else an error naming it), with its D1 work as the bench's entries report it. */
export async function sendOk(base: string, spec: RequestSpec) {
  const answer = await send(base, spec);
  if (answer.status >= 300) throw new Error(`${spec.path}: ${answer.status} ${answer.text}`);
  return { ...answer, d1: parseD1Stats(answer.headers.get(D1_STATS_HEADER)) };
}

export const auth = (secret: string) => ({ Authorization: `Bearer ${secret}` });

/** A request of the management API with a user's token, checked for its status; the answer's `data`. */
export async function call(base: string, token: string | null, path: string, status: number, body?: unknown) {
  const answer = await send(base, {
    method: body === undefined ? 'GET' : 'POST',
    path,
    headers: token ? auth(token) : {},
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (answer.status !== status) throw new Error(`${path}: expected ${status}, got ${answer.status} ${answer.text}`);
  return answer.body.data;
}

export const login = async (base: string, user: { email: string; password: string }) =>
  (await call(base, null, '/v1/auth/login', 201, user)).access_token as string;

export const paymentBody = (reference: string, value: string, method: string) =>
  JSON.stringify({ amount: { value, currency: 'USD' }, external_reference: reference, payment_method: method });

export const SCOPES = ['payment_methods:read', 'payments:create', 'payments:read', 'payments:cancel', 'refunds:create'];

/** `count` API keys of the user of `token`, and a sandbox method (POS unless `connector` says) linked to each. */
export async function merchant(base: string, token: string, count: number, connector = 'cnv_sandbox_pos_v1') {
  const keys: { id: string; secret: string }[] = [];
  for (let k = 0; k < count; k++)
    keys.push(await call(base, token, '/v1/account/api-keys', 201, { name: `bench ${k}`, scopes: SCOPES }));
  const { id: method } = await call(base, token, '/v1/account/payment-methods', 201, {
    connector_definition_version_id: connector,
    name: `Bench ${connector}`,
    credentials: { api_key: 'bench-sandbox-key' },
  });
  for (const key of keys)
    await call(base, token, `/v1/account/payment-methods/${method}/api-keys`, 201, { api_key_id: key.id });
  return { keys, method: method as string };
}

/** A new merchant: a user made by the admin of `token`, its `keys` API keys and a sandbox method (see `merchant`). */
export async function newMerchant(base: string, token: string, name: string, keys: number, connector?: string) {
  const user = {
    // The name may hold spaces (`Shop 1`), which an address may not.
    email: `${name.replaceAll(' ', '-')}-${randomBytes(6).toString('hex')}@example.com`,
    password: randomBytes(18).toString('base64url'),
  };
  const { id } = await call(base, token, '/v1/users', 201, { ...user, name });
  return { id: id as string, ...(await merchant(base, await login(base, user), keys, connector)) };
}

/** The shard the directory placed user `id` on. */
export const placement = async (base: string, token: string, id: string) =>
  (await call(base, token, `/v1/users/${id}/placement`, 200)).shard as string;
