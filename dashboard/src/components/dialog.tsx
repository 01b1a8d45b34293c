import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';
import type { Action } from '../api.ts';
import { ProblemNotice } from './problem-notice.tsx';

/**
 * A modal dialog (the native `<dialog>`: focus moves into it and stays, Escape closes it), shown while
 * mounted: a dialog's state (its Idempotency-Key) lives exactly as long as it is open.
 */
export function Dialog({
  title,
  onClose,
  children,
}: {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    ref.current?.showModal();
  }, []);
  return (
    <dialog ref={ref} aria-labelledby={titleId} onClose={onClose}>
      <h2 id={titleId}>{title}</h2>
      {children}
    </dialog>
  );
}

/** A dialog around one write: its fields, the write's problem (with Retry), the button that submits, Close. */
export function FormDialog<A extends unknown[]>({
  title,
  submit,
  action,
  onSubmit,
  onClose,
  danger = false,
  children,
}: {
  title: string;
  submit: string;
  action: Action<A>;
  onSubmit: () => void;
  onClose: () => void;
  danger?: boolean;
  children: ComponentChildren;
}) {
  return (
    <Dialog title={title} onClose={onClose}>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          onSubmit();
        }}
      >
        {children}
        {action.problem && <ProblemNotice problem={action.problem} onRetry={action.retry} />}
        <div class="actions">
          <button type="submit" class={danger ? 'danger' : 'primary'} disabled={action.busy}>
            {submit}
          </button>
          <button type="button" onClick={onClose}>
            Close
          </button>
        </div>
      </form>
    </Dialog>
  );
}
