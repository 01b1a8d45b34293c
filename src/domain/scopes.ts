/** The five business scopes, shared by API keys and users. */
export const BUSINESS_SCOPES = [
  'payment_methods:read',
  'payments:create',
  'payments:read',
  'payments:cancel',
  'refunds:create',
] as const;

export type Scope = (typeof BUSINESS_SCOPES)[number];

export const ROLES = ['client', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** Scopes in canonical order without duplicates, so stored lists compare and display consistently. */
export function normalizeScopes(scopes: readonly Scope[]): Scope[] {
  const wanted = new Set(scopes);
  return BUSINESS_SCOPES.filter((scope) => wanted.has(scope));
}
