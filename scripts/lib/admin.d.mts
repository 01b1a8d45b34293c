// Types of scripts/lib/admin.mjs for TypeScript callers (bench/run.ts).
export const ROOT: string;
export const BUSINESS_SCOPES: readonly string[];
export const MIN_PASSWORD_LENGTH: number;
export const MAX_PASSWORD_LENGTH: number;
export function normalizeEmail(email: string): string;
export function isPlausibleEmail(email: string): boolean;
export function sqlString(value: unknown): string;
export function buildInsertAdminSql(options: {
  email: string;
  name: string;
  password: string;
  now?: number;
}): Promise<{ sql: string; id: string; email: string }>;
export function wranglerBin(): string;
export function runWrangler(
  args: string[],
  options?: { capture?: boolean; env?: Record<string, string> },
): Promise<{ code: number; stdout: string }>;
export function ensureAdmin(options: {
  env: string;
  target: string[];
  email: string;
  name: string;
  password: string;
}): Promise<{ id: string; email: string; created: boolean | null }>;
