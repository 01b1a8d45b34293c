/**
 * Structured log lines (one JSON object each). Callers pass identifiers and outcomes only: never a
 * secret, a credential, a token, a password or a request body.
 */
export function log(level: 'info' | 'warn' | 'error', event: string, fields: Record<string, unknown> = {}) {
  const line = JSON.stringify({ level, event, time: new Date().toISOString(), ...fields });
  if (level === 'error') console.error(line);
  else if (level === 'warn') console.warn(line);
  else console.log(line);
}

/** What a log line may say of a caught error: its class and message, never a stack or the objects involved. */
export function errorFields(error: unknown): { error_name: string | undefined; error_message: string | undefined } {
  const e = error as Error | undefined;
  return { error_name: e?.name, error_message: e?.message };
}
