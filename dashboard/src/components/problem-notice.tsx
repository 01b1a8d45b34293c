import type { Problem } from '../problem.ts';
import { CopyButton } from './copy-button.tsx';

/**
 * An error as a person needs it: the message, the code, the `request_id` to quote to support (with a copy
 * button) and, when the same request may succeed later, Retry (the same call, with the same Idempotency-Key).
 */
export function ProblemNotice({ problem, onRetry }: { problem: Problem; onRetry?: () => void }) {
  return (
    <div class="problem" role="alert">
      <p>
        <strong>{problem.message}</strong>
      </p>
      <p class="hint">
        Code <code>{problem.code}</code>
        {problem.status > 0 && ` (HTTP ${problem.status})`}
      </p>
      {problem.requestId && (
        <p>
          Request ID <code>{problem.requestId}</code> <CopyButton value={problem.requestId} what="request ID" />
        </p>
      )}
      {problem.retryable && onRetry && (
        <button type="button" onClick={onRetry}>
          Retry
        </button>
      )}
    </div>
  );
}
