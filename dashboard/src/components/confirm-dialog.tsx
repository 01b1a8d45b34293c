import type { ComponentChildren } from 'preact';
import { useAction } from '../api.ts';
import type { Answer } from '../problem.ts';
import { FormDialog } from './dialog.tsx';

/** "Are you sure?" for one write that takes no input: what it does, and the button that does it. */
export function ConfirmDialog<T>({
  title,
  confirm,
  act,
  onDone,
  onClose,
  children,
}: {
  title: string;
  confirm: string;
  act: () => Promise<Answer<T>>;
  onDone: (data: T) => void;
  onClose: () => void;
  children: ComponentChildren;
}) {
  const action = useAction(act, onDone);
  return (
    <FormDialog
      title={title}
      submit={confirm}
      action={action}
      onSubmit={() => void action.run()}
      onClose={onClose}
      danger
    >
      {children}
    </FormDialog>
  );
}
