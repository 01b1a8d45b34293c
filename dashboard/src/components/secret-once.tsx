import { CopyButton } from './copy-button.tsx';

/** A secret the API shows in this one answer: copy it now, it is never shown again (then `onDone` drops it). */
export function SecretOnce({ what, secret, onDone }: { what: string; secret: string; onDone: () => void }) {
  return (
    <section class="secret" aria-label={`New ${what}`}>
      <p>
        <strong>Copy the {what} now: it is shown only this once.</strong>
      </p>
      <p>
        <code>{secret}</code> <CopyButton value={secret} what={what} />
      </p>
      <button type="button" onClick={onDone}>
        I have copied it
      </button>
    </section>
  );
}
