import { useState } from 'preact/hooks';

/** Copies `value`; its accessible name says what ("Copy request ID"), and the outcome is announced. */
export function CopyButton({ value, what }: { value: string; what: string }) {
  const [outcome, setOutcome] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setOutcome('Copied');
    } catch {
      setOutcome('Could not copy: select the text and copy it');
    }
  };
  return (
    <>
      <button type="button" onClick={copy}>
        Copy<span class="visually-hidden"> {what}</span>
      </button>{' '}
      <span role="status" class="hint">
        {outcome}
      </span>
    </>
  );
}
