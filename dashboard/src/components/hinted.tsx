import type { ComponentChildren, JSX } from 'preact';
import { useId } from 'preact/hooks';

export interface ControlProps {
  id: string;
  'aria-describedby'?: string;
}

/**
 * A labelled control with a hint after it, outside its label: the label names the control (what a screen
 * reader says and a test finds it by), the hint describes it (aria-describedby).
 */
export function Hinted({
  label,
  hint,
  children,
}: {
  label: ComponentChildren;
  hint?: ComponentChildren;
  children: (control: ControlProps) => JSX.Element;
}) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  return (
    <div class="field">
      <label htmlFor={`${id}-control`}>{label}</label>
      {children({ id: `${id}-control`, 'aria-describedby': hintId })}
      {hint && (
        <span id={hintId} class="hint">
          {hint}
        </span>
      )}
    </div>
  );
}
