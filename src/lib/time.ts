/** Timestamps are stored as integer epoch milliseconds and shown as ISO 8601 UTC with milliseconds. */
export const toIso = (ms: number): string => new Date(ms).toISOString();
export const toIsoOrNull = (ms: number | null | undefined): string | null => (ms == null ? null : toIso(ms));
