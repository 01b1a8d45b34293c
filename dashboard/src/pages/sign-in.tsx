import { useState } from 'preact/hooks';
import { PageTitle } from '../components/page-title.tsx';
import { ProblemNotice } from '../components/problem-notice.tsx';
import type { Problem } from '../problem.ts';
import { signIn } from '../session.ts';

/** POST /v1/auth/login. Shown in place of any page while signed out; that page opens once signed in. */
export function SignIn() {
  const [problem, setProblem] = useState<Problem>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    if (busy) return;
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    const answer = await signIn(String(form.get('email')), String(form.get('password')));
    setBusy(false);
    setProblem(answer.problem);
  };
  return (
    <main id="main" class="sign-in card">
      <PageTitle title="Sign in" />
      <p class="hint">Sign in with your user of this deployment to manage its payments.</p>
      <form onSubmit={submit}>
        <label>
          Email
          <input name="email" type="email" autoComplete="username" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
        <button type="submit" class="primary" disabled={busy}>
          Sign in
        </button>
      </form>
      {problem && <ProblemNotice problem={problem} />}
    </main>
  );
}
