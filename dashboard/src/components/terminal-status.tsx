import { ask, client, useAction, useLoad } from '../api.ts';
import type { Schemas } from '../client.ts';
import { LoadState } from './load-state.tsx';
import { ProblemNotice } from './problem-notice.tsx';
import { StatusBadge } from './status-badge.tsx';
import { Time } from './time.tsx';

/** The terminal of a POS method (GET /v1/payment-methods/{id}/terminal); in `test`, its simulated status. */
export function TerminalStatus({ methodId, test }: { methodId: string; test: boolean }) {
  const terminal = useLoad(
    () =>
      ask(
        client.GET('/v1/payment-methods/{payment_method_id}/terminal', {
          params: { path: { payment_method_id: methodId } },
        }),
      ),
    [methodId],
  );
  const simulate = useAction(
    (status: Schemas['SimulateTerminalRequest']['status']) =>
      ask(
        client.POST('/v1/test-helpers/payment-methods/{payment_method_id}/terminal', {
          params: { path: { payment_method_id: methodId } },
          body: { status },
        }),
      ),
    () => terminal.reload(),
  );
  return (
    <section class="card" aria-label="Terminal">
      <h3>Terminal</h3>
      <LoadState state={terminal}>
        {({ data }) => (
          <dl class="fields">
            <dt>Status</dt>
            <dd>
              <StatusBadge status={data.status} />
              {data.busy_with && ` (busy with ${data.busy_with.kind})`}
            </dd>
            <dt>Device</dt>
            <dd>
              <code>{data.processor_id}</code>
            </dd>
            <dt>Read at</dt>
            <dd>
              <Time iso={data.read_at} />
            </dd>
          </dl>
        )}
      </LoadState>
      <button type="button" onClick={terminal.reload}>
        Read the terminal again
      </button>
      {test && (
        <div class="actions">
          {(['online', 'offline', 'busy'] as const).map((status) => (
            <button type="button" key={status} disabled={simulate.busy} onClick={() => void simulate.run(status)}>
              Set terminal {status} (test)
            </button>
          ))}
        </div>
      )}
      {simulate.problem && <ProblemNotice problem={simulate.problem} onRetry={simulate.retry} />}
    </section>
  );
}
