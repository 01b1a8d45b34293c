import { useState } from 'preact/hooks';
import { ask, client, useAction, useLoad } from '../api.ts';
import type { Schemas } from '../client.ts';
import { ConfirmDialog } from '../components/confirm-dialog.tsx';
import { CopyButton } from '../components/copy-button.tsx';
import { FormDialog } from '../components/dialog.tsx';
import { Hinted } from '../components/hinted.tsx';
import { LoadState } from '../components/load-state.tsx';
import { PageTitle } from '../components/page-title.tsx';
import { Pager, type Cursor } from '../components/pager.tsx';
import { ProblemNotice } from '../components/problem-notice.tsx';
import { SecretOnce } from '../components/secret-once.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { Time } from '../components/time.tsx';
import { EVENT_TYPES, type EventType } from '../vocabulary.ts';

type Endpoint = Schemas['WebhookEndpoint'];
type Subscription = Schemas['CreateWebhookEndpointRequest']['enabled_events'];

/** GET /v1/account/webhook-secret: the key that signs every payment's webhooks, hidden until asked for. */
function SigningSecret() {
  const secret = useLoad(() => ask(client.GET('/v1/account/webhook-secret')), []);
  const [shown, setShown] = useState(false);
  const [rotating, setRotating] = useState(false);
  return (
    <section class="card" aria-labelledby="secret-title">
      <h2 id="secret-title">Account signing secret</h2>
      <p class="hint">Signs the webhooks sent to each payment's webhook_url (Standard Webhooks).</p>
      <LoadState state={secret}>
        {({ data }) => (
          <>
            <p>
              <code>{shown ? data.secret : `${data.secret.slice(0, 10)}…`}</code>{' '}
              <button type="button" aria-pressed={shown} onClick={() => setShown(!shown)}>
                {shown ? 'Hide' : 'Reveal'}
                <span class="visually-hidden"> signing secret</span>
              </button>{' '}
              <CopyButton value={data.secret} what="signing secret" />
            </p>
            {data.previous_secret_expires_at && (
              <p>
                The previous secret also signs until <Time iso={data.previous_secret_expires_at} />.
              </p>
            )}
          </>
        )}
      </LoadState>
      <button type="button" class="danger" onClick={() => setRotating(true)}>
        Rotate signing secret…
      </button>
      {rotating && (
        <ConfirmDialog
          title="Rotate the signing secret?"
          confirm="Rotate secret"
          act={() => ask(client.POST('/v1/account/webhook-secret/rotate'))}
          onClose={() => setRotating(false)}
          onDone={() => {
            setRotating(false);
            setShown(true);
            secret.reload();
          }}
        >
          <p>A new secret signs from now on; the current one also signs for 24 hours, while receivers switch.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}

function EventChecks({ value, onChange }: { value: Subscription; onChange: (value: Subscription) => void }) {
  const all = value.includes('*');
  return (
    <fieldset>
      <legend>Events</legend>
      <label class="check">
        <input type="checkbox" checked={all} onChange={(e) => onChange(e.currentTarget.checked ? ['*'] : [])} />
        Every event, including types added later
      </label>
      {!all &&
        EVENT_TYPES.map((type) => (
          <label class="check" key={type}>
            <input
              type="checkbox"
              checked={value.includes(type)}
              onChange={(e) => onChange(e.currentTarget.checked ? [...value, type] : value.filter((t) => t !== type))}
            />
            <code>{type}</code>
          </label>
        ))}
    </fieldset>
  );
}

function CreateEndpointDialog({ onClose, onCreated }: { onClose: () => void; onCreated: (secret: string) => void }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<Subscription>(['*']);
  const create = useAction(
    (body: Schemas['CreateWebhookEndpointRequest']) => ask(client.POST('/v1/account/webhook-endpoints', { body })),
    ({ data }) => onCreated(data.secret),
  );
  return (
    <FormDialog
      title="Add a webhook endpoint"
      submit="Add endpoint"
      action={create}
      onSubmit={() => {
        const body: Schemas['CreateWebhookEndpointRequest'] = { url: url.trim(), enabled_events: events };
        if (description.trim()) body.description = description.trim();
        void create.run(body);
      }}
      onClose={onClose}
    >
      <Hinted label="URL" hint="HTTPS, on a public address.">
        {(control) => (
          <input {...control} type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        )}
      </Hinted>
      <label>
        Description (optional)
        <input maxLength={500} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      </label>
      <EventChecks value={events} onChange={setEvents} />
    </FormDialog>
  );
}

function EndpointRow({
  endpoint,
  onChanged,
  onSecret,
}: {
  endpoint: Endpoint;
  onChanged: () => void;
  onSecret: (secret: string) => void;
}) {
  const path = { webhook_endpoint_id: endpoint.id };
  const [confirming, setConfirming] = useState<'rotate' | 'delete' | null>(null);
  const [ping, setPing] = useState<Schemas['WebhookEndpointTestResult'] | null>(null);
  const test = useAction(
    () => ask(client.POST('/v1/account/webhook-endpoints/{webhook_endpoint_id}/test', { params: { path } })),
    ({ data }) => setPing(data),
  );
  const toggle = useAction(
    () =>
      ask(
        client.PATCH('/v1/account/webhook-endpoints/{webhook_endpoint_id}', {
          params: { path },
          body: { disabled: endpoint.status === 'enabled' },
        }),
      ),
    onChanged,
  );
  const problem = test.problem ?? toggle.problem;
  const name = ` ${endpoint.url}`;
  return (
    <tr>
      <td>
        <code>{endpoint.url}</code>
        {endpoint.description && <div class="hint">{endpoint.description}</div>}
      </td>
      <td>{endpoint.enabled_events.join(', ')}</td>
      <td>
        <StatusBadge status={endpoint.status} />
        {endpoint.disabled_reason && ` (${endpoint.disabled_reason})`}
        {endpoint.failing_since && (
          <div class="hint">
            Failing since <Time iso={endpoint.failing_since} />
          </div>
        )}
      </td>
      <td>
        <div class="actions">
          <button type="button" disabled={test.busy} onClick={() => void test.run()}>
            Send test ping<span class="visually-hidden">{name}</span>
          </button>
          <button type="button" disabled={toggle.busy} onClick={() => void toggle.run()}>
            {endpoint.status === 'enabled' ? 'Disable' : 'Enable'}
            <span class="visually-hidden">{name}</span>
          </button>
          <button type="button" onClick={() => setConfirming('rotate')}>
            Rotate secret<span class="visually-hidden">{name}</span>
          </button>
          <button type="button" class="danger" onClick={() => setConfirming('delete')}>
            Delete<span class="visually-hidden">{name}</span>
          </button>
        </div>
        {ping && (
          <p role="status">
            Ping {ping.succeeded ? 'delivered' : 'failed'}: status {ping.status_code ?? 'none'}
            {ping.error && `, ${ping.error}`}, {ping.latency_ms} ms.
          </p>
        )}
        {problem && <ProblemNotice problem={problem} onRetry={test.problem ? test.retry : toggle.retry} />}
        {confirming === 'rotate' && (
          <ConfirmDialog
            title="Rotate this endpoint's secret?"
            confirm="Rotate secret"
            act={() =>
              ask(
                client.POST('/v1/account/webhook-endpoints/{webhook_endpoint_id}/rotate-secret', { params: { path } }),
              )
            }
            onClose={() => setConfirming(null)}
            onDone={({ data }) => {
              setConfirming(null);
              onSecret(data.secret);
            }}
          >
            <p>
              A new secret signs deliveries to <code>{endpoint.url}</code>; the current one also signs for 24 hours.
            </p>
          </ConfirmDialog>
        )}
        {confirming === 'delete' && (
          <ConfirmDialog
            title="Delete this endpoint?"
            confirm="Delete endpoint"
            act={() => ask(client.DELETE('/v1/account/webhook-endpoints/{webhook_endpoint_id}', { params: { path } }))}
            onClose={() => setConfirming(null)}
            onDone={() => {
              setConfirming(null);
              onChanged();
            }}
          >
            <p>
              <code>{endpoint.url}</code> receives nothing more; its pending deliveries are closed.
            </p>
          </ConfirmDialog>
        )}
      </td>
    </tr>
  );
}

function Endpoints() {
  const endpoints = useLoad(
    () => ask(client.GET('/v1/account/webhook-endpoints', { params: { query: { limit: 100 } } })),
    [],
  );
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);
  const showSecret = (value: string) => {
    setCreating(false);
    setSecret(value);
    endpoints.reload();
  };
  return (
    <section class="card" aria-labelledby="endpoints-title">
      <h2 id="endpoints-title">Endpoints</h2>
      <p class="hint">Account-wide receivers of the events they subscribe to, each with its own signing secret.</p>
      <button type="button" class="primary" onClick={() => setCreating(true)}>
        Add an endpoint…
      </button>
      {creating && <CreateEndpointDialog onClose={() => setCreating(false)} onCreated={showSecret} />}
      {secret && <SecretOnce what="endpoint signing secret" secret={secret} onDone={() => setSecret(null)} />}
      <LoadState state={endpoints}>
        {({ data }) =>
          data.length === 0 ? (
            <p>No endpoints.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Events</th>
                  <th scope="col">Status</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {data.map((endpoint) => (
                  <EndpointRow
                    key={endpoint.id}
                    endpoint={endpoint}
                    onChanged={endpoints.reload}
                    onSecret={showSecret}
                  />
                ))}
              </tbody>
            </table>
          )
        }
      </LoadState>
    </section>
  );
}

/** GET /v1/events: every event, newest first, each the body its webhook carries. */
function Events() {
  const [type, setType] = useState<EventType | ''>('');
  const [cursor, setCursor] = useState<Cursor>({});
  const events = useLoad(
    () => ask(client.GET('/v1/events', { params: { query: { type: type || undefined, limit: 25, ...cursor } } })),
    [type, cursor],
  );
  return (
    <section class="card" aria-labelledby="events-title">
      <h2 id="events-title">Events</h2>
      <div class="row">
        <label>
          Type
          <select
            value={type}
            onChange={(e) => {
              setType(e.currentTarget.value as EventType | '');
              setCursor({});
            }}
          >
            <option value="">Any</option>
            {EVENT_TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
      </div>
      <LoadState state={events}>
        {(page) => (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">Type</th>
                  <th scope="col">Time</th>
                  <th scope="col">Payment</th>
                  <th scope="col">Event</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((event) => (
                  <tr key={event.id}>
                    <td>{event.type}</td>
                    <td>
                      <Time iso={event.created_at} />
                    </td>
                    <td>
                      <a href={`/dashboard/payments/${event.data.payment.id}`} class="mono">
                        {event.data.payment.id}
                      </a>
                    </td>
                    <td>
                      <code>{event.id}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            {page.data.length === 0 && <p>No events.</p>}
            <Pager page={page} cursor={cursor} go={setCursor} />
          </>
        )}
      </LoadState>
    </section>
  );
}

/** Webhooks: the account signing secret, the account endpoints, and the events list. */
export function Webhooks() {
  return (
    <>
      <PageTitle title="Webhooks" />
      <Endpoints />
      <SigningSecret />
      <Events />
    </>
  );
}
