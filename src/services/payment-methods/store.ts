import { and, eq, exists, isNull, sql } from 'drizzle-orm';
import type { Capability } from '../../connectors/types.ts';
import { fetchPage, newestFirstPage, type Page } from '../../db/paging.ts';
import { apiKeyPaymentMethods, paymentMethods, type PaymentMethodRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import type { Caller } from '../../domain/caller.ts';
import type { Environment } from '../../domain/environment.ts';
import { ServiceError } from '../../lib/errors.ts';
import { changed, IsolateCache } from '../../lib/isolate-cache.ts';
import { methodStatus } from './resources.ts';
import { openSecretsToMerge, sealSecrets } from './secrets.ts';
import {
  checkCapabilities,
  checkDisplayConfiguration,
  connectorVersionOrThrow,
  existingConnectorVersionOrThrow,
  parseSecrets,
} from './validation.ts';

/**
 * Payment methods: created and changed by their owner (management routes), read by business callers.
 * `load*` reads by id alone; `find*` and `list*` stay within an owner (or what a key is linked to) and
 * the environment.
 */

export interface NewPaymentMethod {
  connector_definition_version_id: string;
  name: string;
  credentials: unknown;
  configuration?: unknown;
  display_configuration?: Record<string, unknown>;
  capabilities?: Capability[];
}

export async function createPaymentMethod(
  deps: Deps,
  ownerId: string,
  input: NewPaymentMethod,
): Promise<PaymentMethodRow> {
  const version = connectorVersionOrThrow(input.connector_definition_version_id, deps.environment);
  checkDisplayConfiguration(version, input.display_configuration);
  const secrets = parseSecrets(version, input.credentials, input.configuration ?? {});
  const capabilities = checkCapabilities(version, input.capabilities);
  const now = Date.now();
  const id = crypto.randomUUID();
  const row: PaymentMethodRow = {
    id,
    userId: ownerId,
    environment: deps.environment,
    connectorVersionId: version.id,
    provider: version.provider,
    type: version.type,
    name: input.name,
    enabled: true,
    capabilities,
    displayConfiguration: input.display_configuration ?? {},
    secretsCiphertext: await sealSecrets(deps, id, secrets),
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  };
  await deps.control.insert(paymentMethods).values(row).run();
  return row;
}

/**
 * A method by id alone, whatever its owner or state: for work on an existing payment or refund, whose
 * method was checked when the operation began (resuming, reconciling, expiring, test helpers).
 */
export function loadPaymentMethod({ control: db }: Deps, id: string): Promise<PaymentMethodRow | undefined> {
  return db.select().from(paymentMethods).where(eq(paymentMethods.id, id)).get();
}

/** `loadPaymentMethod` read once per method for a job's run (its rows share a handful of methods). */
export function paymentMethodLoader(deps: Deps): (id: string) => Promise<PaymentMethodRow | undefined> {
  const methods = new Map<string, PaymentMethodRow | undefined>();
  return async (id) => {
    if (!methods.has(id)) methods.set(id, await loadPaymentMethod(deps, id));
    return methods.get(id);
  };
}

/** The owner's methods in this environment, deleted ones left out: the scope of its list and of its cursors. */
const ownersMethods = (ownerId: string, environment: Environment) =>
  and(
    eq(paymentMethods.userId, ownerId),
    eq(paymentMethods.environment, environment),
    isNull(paymentMethods.deletedAt),
  );

/** The statements of a page of the owner's methods; exported so a test can explain their query plans. */
export const accountPaymentMethodListStatements = ({ control: db, environment }: Deps, ownerId: string, page: Page) =>
  newestFirstPage(db, paymentMethods, ownersMethods(ownerId, environment), undefined, page);

export function listAccountPaymentMethods(deps: Deps, ownerId: string, page: Page) {
  return fetchPage(deps.control, accountPaymentMethodListStatements(deps, ownerId, page));
}

/**
 * A method visible to a management caller: its own (any owner for an admin), in this environment.
 * Unknown, foreign and (unless asked) deleted methods are all `undefined`, so they answer alike.
 */
export async function findAccountPaymentMethod(
  { control: db, environment }: Deps,
  viewer: { ownerId: string; isAdmin: boolean },
  id: string,
  includeDeleted = false,
) {
  const conditions = [eq(paymentMethods.id, id), eq(paymentMethods.environment, environment)];
  if (!viewer.isAdmin) conditions.push(eq(paymentMethods.userId, viewer.ownerId));
  if (!includeDeleted) conditions.push(isNull(paymentMethods.deletedAt));
  return db
    .select()
    .from(paymentMethods)
    .where(and(...conditions))
    .get();
}

export interface PaymentMethodPatch {
  name?: string;
  credentials?: unknown;
  configuration?: unknown;
  display_configuration?: Record<string, unknown>;
  capabilities?: Capability[];
  enabled?: boolean;
}

export async function updatePaymentMethod(
  deps: Deps,
  row: PaymentMethodRow,
  patch: PaymentMethodPatch,
): Promise<PaymentMethodRow> {
  const version = existingConnectorVersionOrThrow(row.connectorVersionId, deps.environment);
  checkDisplayConfiguration(version, patch.display_configuration);
  let secretsCiphertext = row.secretsCiphertext;
  if (patch.credentials !== undefined || patch.configuration !== undefined) {
    // A full replacement needs nothing of the old secrets: a method whose stored secrets can no longer
    // be opened (a key retired too early, a row restored from elsewhere) stays repairable in place,
    // keeping its id, its key links and its payments' reference.
    const current =
      patch.credentials !== undefined && patch.configuration !== undefined ? null : await openSecretsToMerge(deps, row);
    const secrets = parseSecrets(
      version,
      patch.credentials ?? current?.credentials,
      patch.configuration ?? current?.configuration,
    );
    secretsCiphertext = await sealSecrets(deps, row.id, secrets);
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
  await deps.control
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
  changed(`payment_method:${row.id}`);
  return next;
}

/** Soft delete: secrets erased and key links disabled in one batch; payments keep their reference. */
export async function deletePaymentMethod({ control: db }: Deps, row: PaymentMethodRow): Promise<void> {
  if (row.deletedAt !== null) return;
  const now = Date.now();
  await db.batch([
    db
      .update(paymentMethods)
      .set({ deletedAt: now, enabled: false, secretsCiphertext: null, updatedAt: Math.max(now, row.updatedAt + 1) })
      .where(and(eq(paymentMethods.id, row.id), isNull(paymentMethods.deletedAt))),
    db
      .update(apiKeyPaymentMethods)
      .set({ enabled: false, updatedAt: now })
      .where(eq(apiKeyPaymentMethods.paymentMethodId, row.id)),
  ]);
  changed(`payment_method:${row.id}`);
}

/** Public view for an API key: active methods linked and enabled for that key. */
function keyVisibleConditions(apiKeyId: string, environment: Environment) {
  return and(linkedToKey(apiKeyId), activeMethods(environment));
}

const linkedToKey = (apiKeyId: string) =>
  and(eq(apiKeyPaymentMethods.apiKeyId, apiKeyId), eq(apiKeyPaymentMethods.enabled, true));

const activeMethods = (environment: Environment) =>
  and(eq(paymentMethods.environment, environment), eq(paymentMethods.enabled, true), isNull(paymentMethods.deletedAt));

/**
 * The statements of a page of the methods a business caller may use; exported so a test can explain their query
 * plans. For a key: its owner's methods (the owner's index keeps the order) with an enabled link to the key.
 */
export function publicPaymentMethodListStatements(deps: Deps, caller: Caller, page: Page) {
  if (caller.kind !== 'api_key') return accountPaymentMethodListStatements(deps, caller.ownerId, page);
  const { control: db, environment } = deps;
  const linked = db
    .select({ linked: sql`1` })
    .from(apiKeyPaymentMethods)
    .where(and(eq(apiKeyPaymentMethods.paymentMethodId, paymentMethods.id), linkedToKey(caller.apiKeyId)));
  const visible = and(eq(paymentMethods.userId, caller.ownerId), activeMethods(environment), exists(linked));
  return newestFirstPage(db, paymentMethods, visible, undefined, page);
}

export function listPublicPaymentMethods(deps: Deps, caller: Caller, page: Page) {
  return fetchPage(deps.control, publicPaymentMethodListStatements(deps, caller, page));
}

/**
 * Methods usable by an API key, as last read by this isolate: creates and refunds of a busy key then skip
 * the lookup. Like API keys (services/authentication.ts), a method disabled, deleted, changed or unlinked
 * through another isolate stops being used within `METHOD_CACHE_TTL_MS`, through this one at once
 * (`changed`). Holds rows with their secrets sealed, as stored; nothing in the clear.
 */
export const METHOD_CACHE_TTL_MS = 10_000;
const usableByKey = new IsolateCache<PaymentMethodRow>(METHOD_CACHE_TTL_MS, 1_000, (method) => [
  `payment_method:${method.id}`,
]);

/** The method a business caller may see: for a key, linked and enabled; for a user, its own. */
export async function findUsablePaymentMethod(deps: Deps, caller: Caller, id: string) {
  if (caller.kind === 'api_key') {
    return usableByKey.read(`${deps.environment}:${caller.apiKeyId}:${id}`, async () => {
      const found = await deps.control
        .select({ method: paymentMethods })
        .from(paymentMethods)
        .innerJoin(apiKeyPaymentMethods, eq(apiKeyPaymentMethods.paymentMethodId, paymentMethods.id))
        .where(and(eq(paymentMethods.id, id), keyVisibleConditions(caller.apiKeyId, deps.environment)))
        .get();
      return found?.method;
    });
  }
  return findAccountPaymentMethod(deps, { ownerId: caller.ownerId, isAdmin: false }, id);
}

/** A method the caller may use for a new operation needing `capability`; not found (or not capable) otherwise. */
export async function usableMethod(
  deps: Deps,
  caller: Caller,
  methodId: string,
  capability: Capability,
): Promise<PaymentMethodRow> {
  const method = await findUsablePaymentMethod(deps, caller, methodId);
  if (!method || methodStatus(method) !== 'active') throw new ServiceError('payment_method_not_found');
  if (!method.capabilities.includes(capability)) {
    throw new ServiceError('capability_not_supported', `The payment method does not support ${capability}.`, {
      details: { capability },
    });
  }
  return method;
}
