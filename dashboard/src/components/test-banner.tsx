/**
 * On every page of a `test` deployment, the sign-in form included. Signed in, the environment is the access
 * token's `env` claim; signed out, the one the Worker wrote into the page (`deployment-environment`), since no
 * token names it yet.
 */
export function TestBanner({ environment }: { environment: string | null | undefined }) {
  if (environment !== 'test') return null;
  return <p class="test-banner">TEST deployment: sandbox data, no real money moves</p>;
}

/** The environment of the deployment that served this page, or null when the page does not say. */
export const pageEnvironment =
  document.querySelector<HTMLMetaElement>('meta[name="deployment-environment"]')?.content ?? null;
