import type { ComponentChildren } from 'preact';
import type { Loaded } from '../api.ts';
import { ProblemNotice } from './problem-notice.tsx';

/** What a page shows of a load: its content once loaded, the problem (with Retry), or that it is loading. */
export function LoadState<T>({ state, children }: { state: Loaded<T>; children: (data: T) => ComponentChildren }) {
  if (state.problem) return <ProblemNotice problem={state.problem} onRetry={state.reload} />;
  if (state.data === undefined)
    return (
      <p role="status" class="hint">
        Loading…
      </p>
    );
  return <>{children(state.data)}</>;
}
