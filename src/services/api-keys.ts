import { and, eq } from 'drizzle-orm';
import { fetchPage, newestFirstPage, type Page } from '../db/paging.ts';
import { apiKeys, type ApiKeyRow } from '../db/schema/index.ts';
import type { Deps } from '../deps.ts';
import { displayPrefix, generateApiKeySecret, hashApiKeySecret } from '../domain/api-key-secrets.ts';
import { normalizeScopes, type Scope } from '../domain/scopes.ts';
import { newId } from '../lib/ids.ts';
import { changed } from '../lib/isolate-cache.ts';
import { toIso, toIsoOrNull } from '../lib/time.ts';

export function toApiKeyResource(row: ApiKeyRow) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    environment: row.environment,
    status: row.status,
    created_at: toIso(row.createdAt),
    last_used_at: toIsoOrNull(row.lastUsedAt),
    revoked_at: toIsoOrNull(row.revokedAt),
  };
}

/** A new key of this environment for `ownerId`; the secret is returned once, only its peppered hash is stored. */
export async function createApiKey(
  { control: db, environment, apiKeyPepper }: Deps,
  input: { ownerId: string; name: string; scopes: Scope[] },
) {
  const secret = generateApiKeySecret(environment);
  const row: ApiKeyRow = {
    id: newId('key'),
    userId: input.ownerId,
    name: input.name,
    scopes: normalizeScopes(input.scopes),
    environment,
    status: 'active',
    secretHash: await hashApiKeySecret(apiKeyPepper, secret),
    prefix: displayPrefix(secret),
    createdAt: Date.now(),
    lastUsedAt: null,
    revokedAt: null,
  };
  await db.insert(apiKeys).values(row).run();
  return { row, secret };
}

/** The statements of a page of the owner's keys; exported so a test can explain their query plans. */
export const apiKeyListStatements = ({ control: db, environment }: Deps, ownerId: string, page: Page) =>
  newestFirstPage(db, apiKeys, and(eq(apiKeys.userId, ownerId), eq(apiKeys.environment, environment)), undefined, page);

export function listApiKeys(deps: Deps, ownerId: string, page: Page) {
  return fetchPage(deps.control, apiKeyListStatements(deps, ownerId, page));
}

/**
 * A key of this owner (of any owner when `ownerId` is null: an admin) and environment, or undefined:
 * foreign and unknown ids look the same.
 */
export function findApiKey({ control: db, environment }: Deps, ownerId: string | null, id: string) {
  const conditions = [eq(apiKeys.id, id), eq(apiKeys.environment, environment)];
  if (ownerId !== null) conditions.push(eq(apiKeys.userId, ownerId));
  return db
    .select()
    .from(apiKeys)
    .where(and(...conditions))
    .get();
}

/** Idempotent: revoking a revoked key keeps its first revocation time. */
export async function revokeApiKey({ control: db }: Deps, row: ApiKeyRow): Promise<ApiKeyRow> {
  if (row.status === 'revoked') return row;
  const revoked = await db
    .update(apiKeys)
    .set({ status: 'revoked', revokedAt: Date.now() })
    .where(and(eq(apiKeys.id, row.id), eq(apiKeys.status, 'active')))
    .returning()
    .get();
  changed(`api_key:${row.id}`);
  // A concurrent revocation got there first: answer with the time it stored, not with our own.
  return revoked ?? (await db.select().from(apiKeys).where(eq(apiKeys.id, row.id)).get()) ?? row;
}
