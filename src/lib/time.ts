/** Timestamps are stored as integer epoch milliseconds and shown as ISO 8601 UTC with milliseconds. */
export const toIso = (ms: number): string => new Date(ms).toISOString();
export const toIsoOrNull = (ms: number | null | undefined): string | null => (ms == null ? null : toIso(ms));

/** An ISO 8601 date-time (with `Z` or an offset, already validated) as stored: epoch milliseconds. */
export const fromIso = (iso: string): number => Date.parse(iso);
