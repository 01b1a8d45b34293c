import { eq } from 'drizzle-orm';
import { fetchPage, newestFirstPage, type Page } from '../db/paging.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { users, type UserRow } from '../db/schema/index.ts';
import type { Deps } from '../deps.ts';
import { placeOwner } from './shards/directory.ts';
import { normalizeEmail } from '../domain/accounts.ts';
import { hashPassword } from '../domain/passwords.ts';
import { BUSINESS_SCOPES, normalizeScopes, type Role, type Scope } from '../domain/scopes.ts';
import { ServiceError } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { changed } from '../lib/isolate-cache.ts';
import { toIso } from '../lib/time.ts';

export function toUserResource(row: UserRow) {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    scopes: row.scopes,
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
  };
}

export interface NewUser {
  email: string;
  name: string;
  password: string;
  role?: Role;
  scopes?: Scope[];
}

export async function createUser(deps: Deps, input: NewUser): Promise<UserRow> {
  const { control: db } = deps;
  const email = normalizeEmail(input.email);
  if (await loadUserByEmail(deps, email)) throw new ServiceError('email_taken');
  const now = Date.now();
  const row: UserRow = {
    id: newId('usr'),
    email,
    name: input.name,
    role: input.role ?? 'client',
    scopes: normalizeScopes(input.scopes ?? BUSINESS_SCOPES),
    passwordHash: await hashPassword(input.password),
    createdAt: now,
    updatedAt: now,
  };
  try {
    await db.insert(users).values(row).run();
  } catch (error) {
    // Two creations with one email at once: the unique index decides, the loser gets the same 409.
    if (isUniqueViolation(error)) throw new ServiceError('email_taken');
    throw error;
  }
  // Placed now, so consecutive new owners alternate between shards (domain/shard-policy.ts); were this to fail,
  // the owner's first request places it by the same policy.
  await placeOwner(deps, row.id, undefined, now).catch(() => undefined);
  return row;
}

/** Users are owners, not owned: these reads are unscoped (`load*`); routes decide who may see whom. */
export function loadUserByEmail({ control: db }: Deps, email: string) {
  return db
    .select()
    .from(users)
    .where(eq(users.email, normalizeEmail(email)))
    .get();
}

export function loadUser({ control: db }: Deps, id: string) {
  return db.select().from(users).where(eq(users.id, id)).get();
}

/** The statements of a page of all users (an admin's list); exported so a test can explain their query plans. */
export const userListStatements = ({ control: db }: Deps, page: Page) =>
  newestFirstPage(db, users, undefined, undefined, page);

export function listUsers(deps: Deps, page: Page) {
  return fetchPage(deps.control, userListStatements(deps, page));
}

export interface UserPatch {
  email?: string;
  name?: string;
  role?: Role;
  scopes?: Scope[];
}

export async function updateUser(deps: Deps, current: UserRow, patch: UserPatch): Promise<UserRow> {
  // Only the fields sent are written: rewriting the others from `current` would let a concurrent
  // patch (a user renaming itself while an admin demotes it) put back the values it read.
  const changes: Partial<UserRow> = {
    ...(patch.email !== undefined ? { email: normalizeEmail(patch.email) } : {}),
    ...(patch.name !== undefined ? { name: patch.name } : {}),
    ...(patch.role !== undefined ? { role: patch.role } : {}),
    ...(patch.scopes !== undefined ? { scopes: normalizeScopes(patch.scopes) } : {}),
    updatedAt: Math.max(Date.now(), current.updatedAt + 1),
  };
  if (changes.email !== undefined && changes.email !== current.email) {
    const other = await loadUserByEmail(deps, changes.email);
    if (other && other.id !== current.id) throw new ServiceError('email_taken');
  }
  let updated: UserRow | undefined;
  try {
    updated = await deps.control.update(users).set(changes).where(eq(users.id, current.id)).returning().get();
  } catch (error) {
    if (isUniqueViolation(error)) throw new ServiceError('email_taken');
    throw error;
  }
  if (!updated) throw new ServiceError('user_not_found');
  // Scopes and role narrow the user's API keys: seen at once.
  if (patch.scopes !== undefined || patch.role !== undefined) changed(`owner:${current.id}`);
  return updated;
}

/** Replaces a password hash written with weaker parameters (domain/passwords.ts), after a successful login. */
export async function rehashPassword({ control: db }: Deps, user: UserRow, password: string): Promise<void> {
  await db
    .update(users)
    .set({ passwordHash: await hashPassword(password) })
    .where(eq(users.id, user.id))
    .run();
}
