/** True when D1 refused a write for a unique index: the loser of a race to insert the same key. */
export function isUniqueViolation(error: unknown): boolean {
  const message =
    error instanceof Error ? `${error.message} ${String((error as { cause?: unknown }).cause ?? '')}` : '';
  return /UNIQUE constraint failed/i.test(message);
}
