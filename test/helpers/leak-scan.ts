/**
 * Records every response body and log line the suite produces, and the secrets it used, so that each
 * test file can assert (in test/setup.ts) that no secret appears anywhere except in the one response
 * that legitimately returns it.
 */
interface RecordedResponse {
  id: number;
  label: string;
  status: number;
  text: string;
}

interface TrackedSecret {
  value: string;
  kind: string;
  /** The response allowed to contain it (the one that issued it), or null: it may appear nowhere. */
  allowedResponseId: number | null;
  /** Further responses allowed to contain it (a secret that can be read again, e.g. the webhook secret). */
  alsoAllowed?: number[];
}

const responses: RecordedResponse[] = [];
const logLines: string[] = [];
const secrets: TrackedSecret[] = [];
let nextId = 1;

export function recordResponse(label: string, status: number, text: string): number {
  const id = nextId++;
  responses.push({ id, label, status, text });
  return id;
}

export function recordLogLine(line: string) {
  logLines.push(line);
}

export function trackSecret(kind: string, value: string, allowedResponseId: number | null = null) {
  if (value.length >= 8) secrets.push({ kind, value, allowedResponseId });
}

/** Allows an already tracked secret in one more response, for secrets an endpoint returns on every read. */
export function allowSecretIn(value: string, responseId: number) {
  for (const secret of secrets) if (secret.value === value) (secret.alsoAllowed ??= []).push(responseId);
}

export interface Leak {
  kind: string;
  where: string;
}

export function findLeaks(): Leak[] {
  const leaks: Leak[] = [];
  for (const secret of secrets) {
    for (const res of responses) {
      if (res.id !== secret.allowedResponseId && !secret.alsoAllowed?.includes(res.id) && res.text.includes(secret.value)) {
        leaks.push({ kind: secret.kind, where: `response #${res.id} ${res.label} (${res.status})` });
      }
    }
    for (const line of logLines) {
      if (line.includes(secret.value)) leaks.push({ kind: secret.kind, where: 'log line' });
    }
  }
  return leaks;
}

export const recordedCounts = () => ({ responses: responses.length, logLines: logLines.length, secrets: secrets.length });
