import { PageTitle } from '../components/page-title.tsx';

export function NotFound() {
  return (
    <>
      <PageTitle title="Page not found" />
      <p>
        No dashboard page has this address. <a href="/dashboard">Go to the overview</a>.
      </p>
    </>
  );
}
