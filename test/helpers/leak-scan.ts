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

export interface Leak {
  kind: string;
  where: string;
}

/** One scan's records; the suite uses the default instance below, the scanner's own test makes others. */
export class LeakScanner {
  private readonly responses: RecordedResponse[] = [];
  private readonly logLines: string[] = [];
  private readonly secrets: TrackedSecret[] = [];
  private nextId = 1;

  recordResponse(label: string, status: number, text: string): number {
    const id = this.nextId++;
    this.responses.push({ id, label, status, text });
    return id;
  }

  recordLogLine(line: string) {
    this.logLines.push(line);
  }

  trackSecret(kind: string, value: string, allowedResponseId: number | null = null) {
    if (value.length >= 8) this.secrets.push({ kind, value, allowedResponseId });
  }

  /** Allows an already tracked secret in one more response, for secrets an endpoint returns on every read. */
  allowSecretIn(value: string, responseId: number) {
    for (const secret of this.secrets) if (secret.value === value) (secret.alsoAllowed ??= []).push(responseId);
  }

  isTracked(value: string): boolean {
    return this.secrets.some((secret) => secret.value === value);
  }

  findLeaks(): Leak[] {
    const leaks: Leak[] = [];
    for (const secret of this.secrets) {
      for (const res of this.responses) {
        if (
          res.id !== secret.allowedResponseId &&
          !secret.alsoAllowed?.includes(res.id) &&
          res.text.includes(secret.value)
        ) {
          leaks.push({ kind: secret.kind, where: `response #${res.id} ${res.label} (${res.status})` });
        }
      }
      for (const line of this.logLines) {
        if (line.includes(secret.value)) leaks.push({ kind: secret.kind, where: 'log line' });
      }
    }
    return leaks;
  }

  /** The log lines recorded so far, in order. */
  lines(): readonly string[] {
    return this.logLines;
  }

  counts() {
    return { responses: this.responses.length, logLines: this.logLines.length, secrets: this.secrets.length };
  }
}

const suiteScanner = new LeakScanner();

export const recordResponse = (label: string, status: number, text: string) =>
  suiteScanner.recordResponse(label, status, text);
export const recordLogLine = (line: string) => suiteScanner.recordLogLine(line);
export const recordedLogLines = () => suiteScanner.lines();
export const trackSecret = (kind: string, value: string, allowedResponseId: number | null = null) =>
  suiteScanner.trackSecret(kind, value, allowedResponseId);
export const allowSecretIn = (value: string, responseId: number) => suiteScanner.allowSecretIn(value, responseId);
export const isTracked = (value: string) => suiteScanner.isTracked(value);
export const findLeaks = () => suiteScanner.findLeaks();
export const recordedCounts = () => suiteScanner.counts();
