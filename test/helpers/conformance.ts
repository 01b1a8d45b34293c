import { dereference, validate, type Schema } from '@cfworker/json-schema';
import { exports } from 'cloudflare:workers';

/**
 * Response conformance: every response the suite receives through `call` is checked against the served
 * description (/openapi.json). The route must be described (or the answer must be the 404 `not_found`
 * envelope of an unknown route), the status must be declared for the operation (or a `default` must
 * exist), the media type must be the declared one, a JSON body must validate against the declared
 * schema (JSON Schema 2020-12, refs into `#/components/schemas`), and an error's `code` must be one of
 * the codes the operation lists for that status. The headers of the contract (`CONTRACT_HEADERS`) must be
 * declared on the response that carries them, with a value their schema accepts, and a required one must
 * be there. Mismatches are collected here (method, path, status and the first validation errors, never
 * the body) and test/setup.ts asserts that none were found.
 */

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

export interface ObservedResponse {
  method: string;
  /** As sent: path and optional query string. */
  path: string;
  status: number;
  contentType: string | null;
  text: string;
  /** When given, the contract's headers among them are checked too. */
  headers?: Headers;
}

/** The response headers the description declares where they are sent (routes/docs/docs.description.ts). */
export const CONTRACT_HEADERS = ['X-Request-Id', 'Idempotent-Replayed', 'X-Read-Bookmark', 'Retry-After', 'ETag'];

export interface Mismatch {
  method: string;
  path: string;
  /** `METHOD /template` of the described operation, or null for an undescribed route. */
  operation: string | null;
  status: number;
  problems: string[];
}

export interface DescribedOperation {
  method: string;
  path: string;
  operationId?: string;
  parameters?: Array<{
    name: string;
    in: string;
    required?: boolean;
    schema?: Record<string, unknown>;
    style?: string;
    explode?: boolean;
  }>;
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Record<string, unknown> }> };
  responses: Record<string, DescribedResponse>;
  security?: Array<Record<string, string[]>>;
}

interface DescribedResponse {
  description?: string;
  headers?: Record<string, { $ref?: string; required?: boolean; schema?: Schema }>;
  content?: Record<string, { schema?: Schema; examples?: Record<string, { value?: unknown }> }>;
}

/** A webhook the service sent, as a receiver got it (lowercase header names). */
export interface ObservedWebhook {
  headers: Record<string, string>;
  body: string;
}

export interface Conformance {
  /** The problems of one response; empty when it conforms. */
  check(response: ObservedResponse): { operation: string | null; problems: string[] };
  /** The problems of one webhook against the description's `webhooks` entry of its `type`. */
  checkWebhook(webhook: ObservedWebhook): { webhook: string | null; problems: string[] };
  /** Validates any instance against a schema of the document (refs resolved); the first errors, or []. */
  validate(instance: unknown, schema: unknown): string[];
  operations: DescribedOperation[];
  document: any;
}

const BASE_URI = 'https://conformance.invalid/openapi.json';
const MAX_ERRORS = 3;

/** Documentation routes the description does not (and need not) describe: checked for status only. */
const DOC_ROUTES: Array<{ method: string; pattern: RegExp; statuses: number[] }> = [
  { method: 'GET', pattern: /^\/docs$/, statuses: [200] },
  // The dashboard's page, at every path of it but its files (HEAD as GET: the page's headers without it).
  { method: 'GET', pattern: /^\/dashboard(?!\/assets\/)(\/.*)?$/, statuses: [200] },
  { method: 'HEAD', pattern: /^\/dashboard(?!\/assets\/)(\/.*)?$/, statuses: [200] },
];
/** Files of the explorer and of the dashboard: 200, or the unknown-route envelope for a file that does not exist. */
const DOC_ASSETS = /^\/(docs|dashboard)\/assets\/./;

interface CompiledOperation {
  op: DescribedOperation;
  label: string;
  segments: Array<{ literal: string } | { param: string }>;
}

export function listOperations(doc: any): DescribedOperation[] {
  const operations: DescribedOperation[] = [];
  for (const [path, item] of Object.entries<Record<string, any>>(doc?.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      const op = item?.[method];
      if (op && typeof op === 'object') operations.push({ ...op, method, path });
    }
  }
  return operations;
}

/** The key of `op.responses` that describes `status`: itself, its class (`4XX`) or `default`. */
function declaredKeyOf(op: DescribedOperation, status: number): string | undefined {
  const key = String(status);
  return [key, `${key[0]}XX`, 'default'].find((candidate) => op.responses?.[candidate] !== undefined);
}

/** The object a local `$ref` (`#/components/...`) points to in `doc`. */
function resolvePointer(doc: any, ref: string): any {
  return ref
    .replace(/^#\//, '')
    .split('/')
    .reduce((node, part) => node?.[part.replaceAll('~1', '/').replaceAll('~0', '~')], doc);
}

export function createConformance(doc: any): Conformance {
  if (!doc || typeof doc !== 'object' || typeof doc.openapi !== 'string' || !doc.paths) {
    throw new Error('not an OpenAPI document');
  }
  const lookup: Record<string, Schema | boolean> = Object.create(null);
  dereference({ $id: BASE_URI, components: { schemas: sanitizeMap(doc.components?.schemas ?? {}) } } as Schema, lookup);

  const operations = listOperations(doc);
  const compiled: CompiledOperation[] = [];
  // Response schemas, sanitized and registered once, by `METHOD path status media`.
  const responseSchemas = new Map<string, Schema | boolean>();
  // Header schemas, sanitized and registered once, by `METHOD path status name` (lowercase name).
  const headerSchemas = new Map<string, Schema | boolean>();
  for (const op of operations) {
    const label = `${op.method.toUpperCase()} ${op.path}`;
    compiled.push({
      op,
      label,
      segments: op.path
        .split('/')
        .slice(1)
        .map((segment) => {
          const param = /^\{([^}]+)\}$/.exec(segment);
          return param ? { param: param[1]! } : { literal: segment };
        }),
    });
    for (const [status, response] of Object.entries(op.responses ?? {})) {
      for (const [name, declared] of Object.entries(response.headers ?? {})) {
        const resolved = declared.$ref ? resolvePointer(doc, declared.$ref) : declared;
        if (resolved?.schema === undefined) continue;
        const schema = sanitize(resolved.schema) as Schema | boolean;
        dereference(schema as Schema, lookup, new URL(BASE_URI), `/x-headers/${headerSchemas.size}`);
        headerSchemas.set(`${label} ${status} ${name.toLowerCase()}`, schema);
      }
      for (const [media, content] of Object.entries(response.content ?? {})) {
        if (content.schema === undefined) continue;
        const schema = sanitize(content.schema) as Schema | boolean;
        const pointer = `/x-responses/${responseSchemas.size}`;
        dereference(schema as Schema, lookup, new URL(BASE_URI), pointer);
        responseSchemas.set(`${label} ${status} ${media}`, schema);
      }
    }
  }
  const errorSchema = lookup[`${BASE_URI}#/components/schemas/ErrorResponse`];

  function findOperation(method: string, pathname: string): CompiledOperation | null {
    const parts = pathname.split('/').slice(1);
    let best: CompiledOperation | null = null;
    let bestScore = -1;
    for (const candidate of compiled) {
      if (candidate.op.method.toUpperCase() !== method || candidate.segments.length !== parts.length) continue;
      let score = 0;
      let matches = true;
      for (let i = 0; i < parts.length; i++) {
        const segment = candidate.segments[i]!;
        const part = parts[i]!;
        if ('literal' in segment) {
          if (segment.literal !== part) matches = false;
          else score += 1;
        } else if (part === '') {
          matches = false;
        }
        if (!matches) break;
      }
      // A literal segment wins over a parameter, as in the router.
      if (matches && score > bestScore) {
        best = candidate;
        bestScore = score;
      }
    }
    return best;
  }

  function schemaErrors(instance: unknown, schema: Schema | boolean): string[] {
    const result = validate(instance, schema, '2020-12', lookup, false);
    if (result.valid) return [];
    // Leaf errors first (the wrappers only repeat "does not match schema"); locations and keywords only.
    const leaves = result.errors.filter(
      (e) => !['properties', '$ref', 'allOf', 'items', 'additionalProperties', 'prefixItems'].includes(e.keyword),
    );
    return (leaves.length > 0 ? leaves : result.errors)
      .slice(0, MAX_ERRORS)
      .map((e) => `${e.instanceLocation || '#'}: ${e.error}`);
  }

  function deref(schema: Schema | boolean): Schema | boolean {
    let current = schema;
    for (let hops = 0; typeof current === 'object' && current.$ref !== undefined && hops < 32; hops++) {
      const target = lookup[current.__absolute_ref__ ?? current.$ref];
      if (target === undefined) return current;
      current = target;
    }
    return current;
  }

  /**
   * Properties of `instance` that its schema does not declare, where the schema names its properties
   * and does not open the object to others (`additionalProperties` / `patternProperties`). Follows
   * `$ref`, `allOf`, the matching branch of `anyOf` / `oneOf`, properties and array items.
   */
  function undeclaredFields(instance: unknown, schema: Schema | boolean, at: string): string[] {
    if (instance === null || typeof instance !== 'object') return [];
    const branches: Schema[] = [];
    const collect = (node: Schema | boolean) => {
      const resolved = deref(node);
      if (typeof resolved !== 'object') return;
      branches.push(resolved);
      for (const part of resolved.allOf ?? []) collect(part);
      for (const alternatives of [resolved.anyOf, resolved.oneOf]) {
        const match = alternatives?.find(
          (alternative) => validate(instance, alternative, '2020-12', lookup, true).valid,
        );
        if (match) collect(match);
      }
    };
    collect(schema);
    const out: string[] = [];
    if (Array.isArray(instance)) {
      for (const branch of branches) {
        if (branch.items === undefined || Array.isArray(branch.items)) continue;
        instance.forEach((item, i) =>
          out.push(...undeclaredFields(item, branch.items as Schema | boolean, `${at}/${i}`)),
        );
      }
      return out;
    }
    const declared = new Map<string, Array<Schema | boolean>>();
    let open = false;
    let named = false;
    for (const branch of branches) {
      if (branch.properties) named = true;
      if (
        (branch.additionalProperties !== undefined && branch.additionalProperties !== false) ||
        branch.patternProperties ||
        branch.unevaluatedProperties !== undefined
      )
        open = true;
      for (const [name, sub] of Object.entries(branch.properties ?? {}))
        declared.set(name, [...(declared.get(name) ?? []), sub]);
    }
    for (const [name, value] of Object.entries(instance)) {
      const subs = declared.get(name);
      if (!subs) {
        if (named && !open) out.push(`${at}/${name}: not declared by the schema`);
        continue;
      }
      // One schema for all the branches that name it (`allOf` parts each declare some of its fields).
      out.push(...undeclaredFields(value, subs.length === 1 ? subs[0]! : { allOf: subs as Schema[] }, `${at}/${name}`));
    }
    return out;
  }

  function expectNotFoundEnvelope(res: ObservedResponse, json: unknown, why: string): string[] {
    if (res.status !== 404) return [`${why}: expected the 404 not_found envelope, got status ${res.status}`];
    if (json === undefined) return [`${why}: the 404 body is not JSON`];
    const problems =
      errorSchema === undefined ? ['components.schemas.ErrorResponse is missing'] : schemaErrors(json, errorSchema);
    if (errorSchema !== undefined && problems.length === 0)
      problems.push(...undeclaredFields(json, errorSchema, '').slice(0, MAX_ERRORS));
    const code = (json as { error?: { code?: unknown } })?.error?.code;
    if (code !== 'not_found') problems.push(`${why}: expected error code not_found, got ${String(code)}`);
    return problems;
  }

  /** The contract's headers of one response: each declared where sent, valid, and the required ones there. */
  function checkHeaders(headers: Headers, label: string, status: string, declared: DescribedResponse): string[] {
    const problems: string[] = [];
    const declaredNames = new Map(
      Object.entries(declared.headers ?? {}).map(([name, header]) => [name.toLowerCase(), header]),
    );
    for (const name of CONTRACT_HEADERS) {
      const value = headers.get(name);
      const header = declaredNames.get(name.toLowerCase());
      const resolved = header?.$ref ? resolvePointer(doc, header.$ref) : header;
      if (value === null) {
        if (resolved?.required) problems.push(`header ${name} is declared required but was not sent`);
        continue;
      }
      if (!header) {
        problems.push(`header ${name} is sent but not declared for status ${status}`);
        continue;
      }
      const schema = headerSchemas.get(`${label} ${status} ${name.toLowerCase()}`);
      // Header values are text; an integer header is compared as the number it spells.
      const typed = (schema as Schema | undefined)?.type === 'integer' && /^\d+$/.test(value) ? Number(value) : value;
      if (schema !== undefined)
        problems.push(...schemaErrors(typed, schema).map((error) => `header ${name}: ${error}`));
    }
    return problems;
  }

  function check(res: ObservedResponse): { operation: string | null; problems: string[] } {
    const result = checkBody(res);
    if (!res.headers || result.operation === null) return result;
    const method = res.method.toUpperCase() === 'HEAD' ? 'GET' : res.method.toUpperCase();
    const found = findOperation(method, new URL(res.path, 'http://localhost').pathname)!;
    const declaredKey = declaredKeyOf(found.op, res.status);
    if (declaredKey === undefined) return result;
    const headers = checkHeaders(res.headers, found.label, declaredKey, found.op.responses[declaredKey]!);
    return { operation: result.operation, problems: [...result.problems, ...headers] };
  }

  function checkBody(res: ObservedResponse): { operation: string | null; problems: string[] } {
    const url = new URL(res.path, 'http://localhost');
    const method = res.method.toUpperCase();
    const media = (res.contentType ?? '').split(';')[0]!.trim().toLowerCase();
    let json: unknown;
    let isJson = false;
    if (res.text !== '' && /^application\/([a-z0-9.+-]*\+)?json$/.test(media)) {
      try {
        json = JSON.parse(res.text);
        isJson = true;
      } catch {
        return { operation: null, problems: ['the body is declared JSON by its Content-Type but does not parse'] };
      }
    }

    // Documentation routes: status only.
    const doc = DOC_ROUTES.find((r) => r.method === method && r.pattern.test(url.pathname));
    if (doc) {
      return {
        operation: null,
        problems: doc.statuses.includes(res.status)
          ? []
          : [`status ${res.status} for a documentation route (expected ${doc.statuses.join(' or ')})`],
      };
    }
    if (method === 'GET' && DOC_ASSETS.test(url.pathname) && res.status === 200)
      return { operation: null, problems: [] };

    // HEAD is answered by the GET operation, without a body.
    const lookupMethod = method === 'HEAD' ? 'GET' : method;
    const found = findOperation(lookupMethod, url.pathname);
    if (!found) return { operation: null, problems: expectNotFoundEnvelope(res, json, 'undescribed route') };

    const { op, label } = found;
    const declaredKey = declaredKeyOf(op, res.status);
    const declared = declaredKey === undefined ? undefined : op.responses[declaredKey];
    if (!declared) {
      const code = (json as { error?: { code?: unknown } } | undefined)?.error?.code;
      return {
        operation: label,
        problems: [`status ${res.status} is not declared${typeof code === 'string' ? ` (error code ${code})` : ''}`],
      };
    }
    if (method === 'HEAD') return { operation: label, problems: [] };

    const contents = declared.content ?? {};
    const declaredMedia = Object.keys(contents);
    if (declaredMedia.length === 0) {
      return {
        operation: label,
        problems:
          res.text === ''
            ? []
            : [`status ${res.status} is declared without a body, but one came (${media || 'no Content-Type'})`],
      };
    }
    if (res.text === '')
      return {
        operation: label,
        problems: [`status ${res.status} declares ${declaredMedia.join(', ')}, but the body is empty`],
      };
    const content = contents[media];
    if (!content)
      return {
        operation: label,
        problems: [
          `Content-Type ${media || '(none)'} is not declared for status ${res.status} (${declaredMedia.join(', ')})`,
        ],
      };
    if (!isJson) return { operation: label, problems: [] };

    const problems: string[] = [];
    const schema = responseSchemas.get(`${label} ${declaredKey} ${media}`);
    if (schema !== undefined) {
      const errors = schemaErrors(json, schema);
      problems.push(...errors);
      // A field the code sends but the description does not name is drift too (the schemas leave
      // objects open to additions, so validation alone would not notice it).
      if (errors.length === 0) problems.push(...undeclaredFields(json, schema, '').slice(0, MAX_ERRORS));
    }
    // An error's code must be one the operation lists for this status (its examples, see errorResponses).
    const code = (json as { error?: { code?: unknown } })?.error?.code;
    const listed = Object.values(content.examples ?? {})
      .map((example) => (example.value as { error?: { code?: unknown } } | undefined)?.error?.code)
      .filter((c): c is string => typeof c === 'string');
    if (res.status >= 400 && listed.length > 0 && typeof code === 'string' && !listed.includes(code)) {
      problems.push(`error code ${code} is not listed for status ${res.status} (listed: ${listed.join(', ')})`);
    }
    return { operation: label, problems };
  }

  function checkWebhook(webhook: ObservedWebhook): { webhook: string | null; problems: string[] } {
    let body: { type?: unknown };
    try {
      body = JSON.parse(webhook.body);
    } catch {
      return { webhook: null, problems: ['the webhook body does not parse as JSON'] };
    }
    const type = typeof body?.type === 'string' ? body.type : null;
    const described = type === null ? undefined : doc.webhooks?.[type]?.post;
    if (!described) return { webhook: type, problems: [`webhook type ${String(type)} is not described in webhooks`] };
    const problems: string[] = [];
    for (const parameter of described.parameters ?? []) {
      if (
        parameter.in === 'header' &&
        parameter.required &&
        webhook.headers[parameter.name.toLowerCase()] === undefined
      )
        problems.push(`header ${parameter.name} is required but was not sent`);
    }
    const schema = described.requestBody?.content?.['application/json']?.schema;
    if (schema === undefined) problems.push(`webhook ${type} declares no application/json body`);
    else {
      const errors = validateAny(body, schema);
      problems.push(...errors);
      if (errors.length === 0) problems.push(...undeclaredFields(body, prepared.get(schema)!, '').slice(0, MAX_ERRORS));
    }
    return { webhook: type, problems };
  }

  // Schemas handed to `validate` (e.g. request bodies), prepared once each.
  const prepared = new WeakMap<object, Schema | boolean>();
  function validateAny(instance: unknown, schema: unknown): string[] {
    if (typeof schema === 'boolean') return schemaErrors(instance, schema);
    if (!schema || typeof schema !== 'object') throw new Error('not a schema');
    let ready = prepared.get(schema);
    if (ready === undefined) {
      ready = sanitize(schema) as Schema;
      dereference(ready, lookup, new URL(BASE_URI), `/x-schemas/${++preparedCount}`);
      prepared.set(schema, ready);
    }
    return schemaErrors(instance, ready);
  }
  let preparedCount = 0;

  return { check, checkWebhook, validate: validateAny, operations, document: doc };
}

/**
 * A copy of a schema without OpenAPI annotations (`example`, `examples`): they are no validation
 * keywords, and an example object with an `id` would otherwise be read as a schema identifier.
 */
function sanitize(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(sanitize);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'example' || key === 'examples') continue;
    if (key === 'enum' || key === 'const' || key === 'default' || key === 'required') out[key] = value;
    else if (['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'].includes(key))
      out[key] = sanitizeMap(value as Record<string, unknown>);
    else out[key] = sanitize(value);
  }
  return out;
}

function sanitizeMap(map: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(map ?? {}).map(([name, schema]) => [name, sanitize(schema)]));
}

// ---------------------------------------------------------------------------------------------------
// The suite's checker: the served description, loaded once per test file, and the mismatches found.

const mismatches: Mismatch[] = [];
let served: Promise<Conformance> | undefined;

/** The description this deployment serves, fetched once per test file (not through `call`). */
export function servedConformance(): Promise<Conformance> {
  served ??= (async () => {
    const res = await exports.default.fetch(new Request('http://localhost/openapi.json'));
    if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}`);
    return createConformance(await res.json());
  })();
  return served;
}

/** Checks one response the suite received and records it when it does not conform. */
export async function checkConformance(response: ObservedResponse): Promise<void> {
  let result: { operation: string | null; problems: string[] };
  try {
    result = (await servedConformance()).check(response);
  } catch (error) {
    result = { operation: null, problems: [`conformance check failed: ${(error as Error).message}`] };
  }
  if (result.problems.length > 0) {
    mismatches.push({
      method: response.method.toUpperCase(),
      path: response.path.split('?')[0]!.slice(0, 200),
      operation: result.operation,
      status: response.status,
      problems: result.problems,
    });
  }
}

/** Checks one webhook a test receiver got and records it when it does not conform. */
export async function checkWebhookConformance(webhook: ObservedWebhook): Promise<void> {
  let result: { webhook: string | null; problems: string[] };
  try {
    result = (await servedConformance()).checkWebhook(webhook);
  } catch (error) {
    result = { webhook: null, problems: [`webhook conformance check failed: ${(error as Error).message}`] };
  }
  if (result.problems.length > 0) {
    mismatches.push({
      method: 'POST',
      path: `(webhook ${result.webhook ?? 'of unknown type'})`,
      operation: result.webhook === null ? null : `webhooks.${result.webhook}`,
      status: 0,
      problems: result.problems,
    });
  }
}

export function conformanceMismatches(): readonly Mismatch[] {
  return mismatches;
}
