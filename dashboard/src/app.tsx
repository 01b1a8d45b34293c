import { LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { ApiKeys } from './pages/api-keys.tsx';
import { Disputes } from './pages/disputes.tsx';
import { NotFound } from './pages/not-found.tsx';
import { Overview } from './pages/overview.tsx';
import { PaymentMethods } from './pages/payment-methods.tsx';
import { PaymentPage } from './pages/payment.tsx';
import { Payments } from './pages/payments.tsx';
import { SignIn } from './pages/sign-in.tsx';
import { Users } from './pages/users.tsx';
import { Webhooks } from './pages/webhooks.tsx';
import { pageEnvironment, TestBanner } from './components/test-banner.tsx';
import { onSessionChange, readSession, type Session, signOut } from './session.ts';

/** The pages of the navigation, in its order (docs/dashboard.md, "Adding a page"). */
const NAVIGATION: { path: string; title: string; adminOnly?: boolean }[] = [
  { path: '/dashboard', title: 'Overview' },
  { path: '/dashboard/payments', title: 'Payments' },
  { path: '/dashboard/disputes', title: 'Disputes' },
  { path: '/dashboard/api-keys', title: 'API keys' },
  { path: '/dashboard/payment-methods', title: 'Payment methods' },
  { path: '/dashboard/webhooks', title: 'Webhooks' },
  { path: '/dashboard/users', title: 'Users', adminOnly: true },
];

const isCurrent = (path: string, item: string) =>
  item === '/dashboard' ? path === item : path === item || path.startsWith(`${item}/`);

function Shell({ session }: { session: Session }) {
  const { path } = useLocation();
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <TestBanner environment={session.environment === 'unknown' ? pageEnvironment : session.environment} />
        <div class="top">
          <a class="brand" href="/dashboard">
            Payment Service
          </a>
          <nav aria-label="Dashboard">
            <ul>
              {NAVIGATION.filter((item) => !item.adminOnly || session.user.role === 'admin').map((item) => (
                <li key={item.path}>
                  <a href={item.path} aria-current={isCurrent(path, item.path) ? 'page' : undefined}>
                    {item.title}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <div class="who">
            <span>{session.user.email}</span>
            <button type="button" onClick={() => void signOut()}>
              Sign out
            </button>
          </div>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <Router>
          <Route path="/dashboard" component={Overview} />
          <Route path="/dashboard/payments" component={Payments} />
          <Route path="/dashboard/payments/:id" component={PaymentPage} />
          <Route path="/dashboard/disputes" component={Disputes} />
          <Route path="/dashboard/api-keys" component={ApiKeys} />
          <Route path="/dashboard/payment-methods" component={PaymentMethods} />
          <Route path="/dashboard/webhooks" component={Webhooks} />
          <Route path="/dashboard/users" component={Users} />
          <Route default component={NotFound} />
        </Router>
      </main>
    </>
  );
}

/**
 * Signed out, the sign-in form takes the page's place at the same address; once signed in, the page the
 * address names opens (a 401 anywhere returns here, and back). A change of user starts the pages afresh.
 */
export function App() {
  const [session, setSession] = useState(readSession);
  useEffect(() => onSessionChange(setSession), []);
  return (
    <LocationProvider scope="/dashboard">
      {session ? (
        <Shell key={session.user.id} session={session} />
      ) : (
        <>
          {pageEnvironment === 'test' && (
            <header>
              <TestBanner environment={pageEnvironment} />
            </header>
          )}
          <SignIn />
        </>
      )}
    </LocationProvider>
  );
}
