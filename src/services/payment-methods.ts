import { and, count, desc, eq, isNull } from 'drizzle-orm';
import { findConnectorVersion } from '../connectors/registry.ts';
import type { Capability, ConnectorVersion } from '../connectors/types.ts';
import type { Db } from '../db/client.ts';
import { apiKeyPaymentMethods, apiKeys, paymentMethods, type PaymentMethodRow } from '../db/schema/index.ts';
import type { Env, Environment } from '../env.ts';
import { CredentialDecryptionError, decryptJson, encryptJson, parseKeyRing } from '../domain/credential-crypto.ts';
import { ApiError, invalidRequest, type FieldIssue } from '../lib/errors.ts';
import { log } from '../lib/log.ts';
import { zodIssuesToFields } from '../lib/openapi.ts';
import { toIso } from '../lib/time.ts';

/** What is sealed in `secrets_ciphertext`: never returned, never logged, decrypted per operation only. */
export interface MethodSecrets {
  credentials: unknown;
  configuration: Record<string, unknown>;
}

export type MethodStatus = 'active' | 'inactive' | 'deleted';

export const methodStatus = (row: PaymentMethodRow): MethodStatus => (row.deletedAt !== null ? 'deleted' : row.enabled ? 'active' : 'inactive');

/** Deleted methods are never shown, so a shown method is active or inactive. */
const shownStatus = (row: PaymentMethodRow): 'active' | 'inactive' => (row.enabled && row.deletedAt === null ? 'active' : 'inactive');

const SECRETS_PURPOSE = 'payment_method_secrets';

export function toAccountPaymentMethod(row: PaymentMethodRow) {
  return {
    id: row.id,
    user_id: row.userId,
    connector_definition_version_id: row.connectorVersionId,
    name: row.name,
    type: row.type,
    provider: row.provider,
    environment: row.environment,
    status: shownStatus(row),
    capabilities: row.capabilities,
    display_configuration: row.displayConfiguration,
    enabled: row.enabled,
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
  };
}

export function toPublicPaymentMethod(row: PaymentMethodRow) {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    provider: row.provider,
    environment: row.environment,
    status: shownStatus(row),
    capabilities: row.capabilities,
    metadata: row.displayConfiguration,
    created_at: toIso(row.createdAt),
  };
}

function connectorVersionOrThrow(id: string): ConnectorVersion {
  const version = findConnectorVersion(id);
  if (!version || version.status !== 'published') {
    throw invalidRequest('Unknown connector version.', [{ field: 'connector_definition_version_id', issue: 'No published connector version has this id' }]);
  }
  return version;
}

/**
 * Validates credentials and configuration against the version's schemas together, so one answer names
 * every wrong field (never its value).
 */
function parseSecrets(version: ConnectorVersion, credentials: unknown, configuration: unknown): MethodSecrets {
  const creds = version.credentialsSchema.safeParse(credentials);
  const config = version.configurationSchema.safeParse(configuration);
  const fields: FieldIssue[] = [
    ...(creds.success ? [] : zodIssuesToFields(creds.error, 'credentials')),
    ...(config.success ? [] : zodIssuesToFields(config.error, 'configuration')),
  ];
  if (!creds.success || !config.success) {
    throw invalidRequest('Invalid credentials or configuration for this connector version.', fields);
  }
  return { credentials: creds.data, configuration: config.data as Record<string, unknown> };
}

function checkCapabilities(version: ConnectorVersion, requested: Capability[] | undefined): Capability[] {
  if (requested === undefined) return [...version.capabilities];
  const unsupported = requested.filter((c) => !version.capabilities.includes(c));
  if (unsupported.length > 0) {
    const fields: FieldIssue[] = unsupported.map((c) => ({ field: 'capabilities', issue: `Not supported by this connector version: ${c}` }));
    throw invalidRequest('Invalid capability.', fields);
  }
  return version.capabilities.filter((c) => requested.includes(c));
}

async function seal(env: Env, methodId: string, secrets: MethodSecrets): Promise<string> {
  return encryptJson(parseKeyRing(env.CREDENTIALS_ENCRYPTION_KEYS), secrets, { purpose: SECRETS_PURPOSE, resourceId: methodId, environment: env.ENVIRONMENT });
}

/** Opens a method's secrets; call only right before handing them to the connector adapter. */
export async function openSecrets(env: Env, row: PaymentMethodRow): Promise<MethodSecrets> {
  if (row.secretsCiphertext === null) throw new ApiError('connector_configuration_invalid', 'The payment method has no credentials.');
  return decryptJson<MethodSecrets>(parseKeyRing(env.CREDENTIALS_ENCRYPTION_KEYS), row.secretsCiphertext, {
    purpose: SECRETS_PURPOSE,
    resourceId: row.id,
    environment: row.environment,
  });
}

export interface NewPaymentMethod {
  connector_definition_version_id: string;
  name: string;
  credentials: unknown;
  configuration?: unknown;
  display_configuration?: Record<string, unknown>;
  capabilities?: Capability[];
}

export async function createPaymentMethod(env: Env, db: Db, ownerId: string, input: NewPaymentMethod): Promise<PaymentMethodRow> {
  const version = connectorVersionOrThrow(input.connector_definition_version_id);
  const secrets = parseSecrets(version, input.credentials, input.configuration ?? {});
  const capabilities = checkCapabilities(version, input.capabilities);
  const now = Date.now();
  const id = crypto.randomUUID();
  const row: PaymentMethodRow = {
    id,
    userId: ownerId,
    environment: env.ENVIRONMENT,
    connectorVersionId: version.id,
    provider: version.provider,
    type: version.type,
    name: input.name,
    enabled: true,
    capabilities,
    displayConfiguration: input.display_configuration ?? {},
    secretsCiphertext: await seal(env, id, secrets),
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  };
  await db.insert(paymentMethods).values(row).run();
  return row;
}

/**
 * A method by id alone, whatever its owner or state: for work on an existing payment or refund, whose
 * method was checked when the operation began (resuming, reconciling, expiring, test helpers).
 */
export function findPaymentMethodById(db: Db, id: string): Promise<PaymentMethodRow | undefined> {
  return db.select().from(paymentMethods).where(eq(paymentMethods.id, id)).get();
}

export async function listAccountPaymentMethods(db: Db, ownerId: string, environment: Environment, limit: number, offset: number) {
  const where = and(eq(paymentMethods.userId, ownerId), eq(paymentMethods.environment, environment), isNull(paymentMethods.deletedAt));
  const [rows, [{ total } = { total: 0 }]] = await db.batch([
    db.select().from(paymentMethods).where(where).orderBy(desc(paymentMethods.createdAt), desc(paymentMethods.id)).limit(limit).offset(offset),
    db.select({ total: count() }).from(paymentMethods).where(where),
  ]);
  return { rows, total };
}

/**
 * A method visible to a management caller: its own (any owner for an admin), in this environment.
 * Unknown, foreign and (unless asked) deleted methods are all `undefined`, so they answer alike.
 */
export async function findAccountPaymentMethod(db: Db, viewer: { ownerId: string; isAdmin: boolean }, environment: Environment, id: string, includeDeleted = false) {
  const conditions = [eq(paymentMethods.id, id), eq(paymentMethods.environment, environment)];
  if (!viewer.isAdmin) conditions.push(eq(paymentMethods.userId, viewer.ownerId));
  if (!includeDeleted) conditions.push(isNull(paymentMethods.deletedAt));
  return db.select().from(paymentMethods).where(and(...conditions)).get();
}

export interface PaymentMethodPatch {
  name?: string;
  credentials?: unknown;
  configuration?: unknown;
  display_configuration?: Record<string, unknown>;
  capabilities?: Capability[];
  enabled?: boolean;
}

export async function updatePaymentMethod(env: Env, db: Db, row: PaymentMethodRow, patch: PaymentMethodPatch): Promise<PaymentMethodRow> {
  const version = connectorVersionOrThrow(row.connectorVersionId);
  let secretsCiphertext = row.secretsCiphertext;
  if (patch.credentials !== undefined || patch.configuration !== undefined) {
    // A full replacement needs nothing of the old secrets: a method whose stored secrets can no longer
    // be opened (a key retired too early, a row restored from elsewhere) stays repairable in place,
    // keeping its id, its key links and its payments' reference.
    const current = patch.credentials !== undefined && patch.configuration !== undefined ? null : await openSecretsToMerge(env, row);
    const secrets = parseSecrets(version, patch.credentials ?? current?.credentials, patch.configuration ?? current?.configuration);
    secretsCiphertext = await seal(env, row.id, secrets);
  }
  const next: PaymentMethodRow = {
    ...row,
    name: patch.name ?? row.name,
    displayConfiguration: patch.display_configuration ?? row.displayConfiguration,
    capabilities: patch.capabilities !== undefined ? checkCapabilities(version, patch.capabilities) : row.capabilities,
    enabled: patch.enabled ?? row.enabled,
    secretsCiphertext,
    updatedAt: Math.max(Date.now(), row.updatedAt + 1),
  };
  await db
    .update(paymentMethods)
    .set({
      name: next.name,
      displayConfiguration: next.displayConfiguration,
      capabilities: next.capabilities,
      enabled: next.enabled,
      secretsCiphertext: next.secretsCiphertext,
      updatedAt: next.updatedAt,
    })
    .where(and(eq(paymentMethods.id, row.id), isNull(paymentMethods.deletedAt)))
    .run();
  return next;
}

/**
 * A partial secrets patch merges with what is stored. When that cannot be read, the answer is the
 * administrator's error (not a retryable 500) and says how to repair it; the cause is logged by id only.
 */
async function openSecretsToMerge(env: Env, row: PaymentMethodRow): Promise<MethodSecrets> {
  try {
    return await openSecrets(env, row);
  } catch (error) {
    if (!(error instanceof CredentialDecryptionError)) throw error;
    log('warn', 'payment_method_secrets_unreadable', { payment_method_id: row.id });
    throw new ApiError('connector_configuration_invalid', 'The stored credentials cannot be read; send both `credentials` and `configuration` to replace them.');
  }
}

/** Soft delete: secrets erased and key links disabled in one batch; payments keep their reference. */
export async function deletePaymentMethod(db: Db, row: PaymentMethodRow): Promise<void> {
  if (row.deletedAt !== null) return;
  const now = Date.now();
  await db.batch([
    db
      .update(paymentMethods)
      .set({ deletedAt: now, enabled: false, secretsCiphertext: null, updatedAt: Math.max(now, row.updatedAt + 1) })
      .where(and(eq(paymentMethods.id, row.id), isNull(paymentMethods.deletedAt))),
    db.update(apiKeyPaymentMethods).set({ enabled: false, updatedAt: now }).where(eq(apiKeyPaymentMethods.paymentMethodId, row.id)),
  ]);
}

/** Public view for an API key: active methods linked and enabled for that key. */
function keyVisibleConditions(apiKeyId: string, environment: Environment) {
  return and(
    eq(apiKeyPaymentMethods.apiKeyId, apiKeyId),
    eq(apiKeyPaymentMethods.enabled, true),
    eq(paymentMethods.environment, environment),
    eq(paymentMethods.enabled, true),
    isNull(paymentMethods.deletedAt),
  );
}

export async function listPublicPaymentMethods(db: Db, caller: PublicCaller, environment: Environment, limit: number, offset: number) {
  if (caller.kind === 'api_key') {
    const where = keyVisibleConditions(caller.apiKeyId, environment);
    const join = eq(apiKeyPaymentMethods.paymentMethodId, paymentMethods.id);
    const [rows, [{ total } = { total: 0 }]] = await db.batch([
      db.select({ method: paymentMethods }).from(paymentMethods).innerJoin(apiKeyPaymentMethods, join).where(where)
        .orderBy(desc(paymentMethods.createdAt), desc(paymentMethods.id)).limit(limit).offset(offset),
      db.select({ total: count() }).from(paymentMethods).innerJoin(apiKeyPaymentMethods, join).where(where),
    ]);
    return { rows: rows.map((r) => r.method), total };
  }
  return listAccountPaymentMethods(db, caller.ownerId, environment, limit, offset);
}

export type PublicCaller = { kind: 'api_key'; apiKeyId: string; ownerId: string } | { kind: 'user'; ownerId: string };

/** The method a business caller may use: for a key, linked, enabled and active; for a user, its own. */
export async function findUsablePaymentMethod(db: Db, caller: PublicCaller, environment: Environment, id: string) {
  if (caller.kind === 'api_key') {
    const found = await db
      .select({ method: paymentMethods })
      .from(paymentMethods)
      .innerJoin(apiKeyPaymentMethods, eq(apiKeyPaymentMethods.paymentMethodId, paymentMethods.id))
      .where(and(eq(paymentMethods.id, id), keyVisibleConditions(caller.apiKeyId, environment)))
      .get();
    return found?.method;
  }
  return findAccountPaymentMethod(db, { ownerId: caller.ownerId, isAdmin: false }, environment, id);
}

export function toLinkResource(link: typeof apiKeyPaymentMethods.$inferSelect) {
  return { api_key_id: link.apiKeyId, payment_method_id: link.paymentMethodId, enabled: link.enabled, created_at: toIso(link.createdAt) };
}

/** Enables a method for one key of the same owner and environment; both must be active. */
export async function linkApiKey(db: Db, method: PaymentMethodRow, apiKeyId: string) {
  const key = await db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.id, apiKeyId), eq(apiKeys.userId, method.userId), eq(apiKeys.environment, method.environment)))
    .get();
  if (!key) throw new ApiError('api_key_not_found');
  if (key.status !== 'active') throw new ApiError('invalid_state_transition', 'The API key is revoked.');
  if (methodStatus(method) !== 'active') throw new ApiError('invalid_state_transition', 'The payment method is not active.');
  const now = Date.now();
  const link = await db
    .insert(apiKeyPaymentMethods)
    .values({ apiKeyId, paymentMethodId: method.id, enabled: true, createdAt: now, updatedAt: now })
    .onConflictDoUpdate({ target: [apiKeyPaymentMethods.apiKeyId, apiKeyPaymentMethods.paymentMethodId], set: { enabled: true, updatedAt: now } })
    .returning()
    .get();
  return link;
}

/** Disables the method for that key only; other keys keep it. */
export async function disableApiKeyLink(db: Db, method: PaymentMethodRow, apiKeyId: string) {
  const link = await db
    .update(apiKeyPaymentMethods)
    .set({ enabled: false, updatedAt: Date.now() })
    .where(and(eq(apiKeyPaymentMethods.apiKeyId, apiKeyId), eq(apiKeyPaymentMethods.paymentMethodId, method.id)))
    .returning()
    .get();
  if (!link) throw new ApiError('api_key_not_found', 'This API key is not linked to the payment method.');
  return link;
}
