import { useState } from 'preact/hooks';
import { ask, client, useAction, useLoad } from '../api.ts';
import type { Schemas } from '../client.ts';
import { ConfirmDialog } from '../components/confirm-dialog.tsx';
import { FormDialog } from '../components/dialog.tsx';
import { Hinted } from '../components/hinted.tsx';
import { LoadState } from '../components/load-state.tsx';
import { PageTitle } from '../components/page-title.tsx';
import { Pager, type Cursor } from '../components/pager.tsx';
import { ScopeChecks } from '../components/scope-checks.tsx';
import { SecretOnce } from '../components/secret-once.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { Time } from '../components/time.tsx';

type ApiKey = Schemas['ApiKey'];

function CreateKeyDialog({ onClose, onCreated }: { onClose: () => void; onCreated: (secret: string) => void }) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Schemas['Scope'][]>([
    'payment_methods:read',
    'payments:create',
    'payments:read',
  ]);
  const create = useAction(
    (body: Schemas['CreateApiKeyRequest']) => ask(client.POST('/v1/account/api-keys', { body })),
    ({ data }) => onCreated(data.secret),
  );
  return (
    <FormDialog
      title="Create an API key"
      submit="Create key"
      action={create}
      onSubmit={() => void create.run({ name: name.trim(), scopes })}
      onClose={onClose}
    >
      <Hinted label="Name" hint={'Where the key is used, e.g. "Checkout server".'}>
        {(control) => (
          <input {...control} required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        )}
      </Hinted>
      <ScopeChecks value={scopes} onChange={setScopes} />
    </FormDialog>
  );
}

/** GET and POST /v1/account/api-keys, and revoke: a new key's secret is shown once. */
export function ApiKeys() {
  const [cursor, setCursor] = useState<Cursor>({});
  const keys = useLoad(
    () => ask(client.GET('/v1/account/api-keys', { params: { query: { limit: 50, ...cursor } } })),
    [cursor],
  );
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  return (
    <>
      <PageTitle title="API keys" />
      <p class="hint">
        Keys call the business routes (payments, refunds) from your servers; each is limited to its scopes and to the
        payment methods enabled for it.
      </p>
      <button type="button" class="primary" onClick={() => setCreating(true)}>
        Create an API key…
      </button>
      {creating && (
        <CreateKeyDialog
          onClose={() => setCreating(false)}
          onCreated={(value) => {
            setCreating(false);
            setSecret(value);
            keys.reload();
          }}
        />
      )}
      {secret && <SecretOnce what="API key secret" secret={secret} onDone={() => setSecret(null)} />}
      {revoking && (
        <ConfirmDialog
          title={`Revoke ${revoking.name}?`}
          confirm="Revoke key"
          act={() =>
            ask(
              client.POST('/v1/account/api-keys/{api_key_id}/revoke', {
                params: { path: { api_key_id: revoking.id } },
              }),
            )
          }
          onClose={() => setRevoking(null)}
          onDone={() => {
            setRevoking(null);
            keys.reload();
          }}
        >
          <p>
            Requests with <code>{revoking.prefix}…</code> are refused from now on (within 10 seconds everywhere). This
            cannot be undone.
          </p>
        </ConfirmDialog>
      )}
      <LoadState state={keys}>
        {(page) => (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Prefix</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Status</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((key) => (
                  <tr key={key.id}>
                    <td>{key.name}</td>
                    <td>
                      <code>{key.prefix}…</code>
                    </td>
                    <td>{key.scopes.join(', ')}</td>
                    <td>
                      <StatusBadge status={key.status} />
                    </td>
                    <td>
                      <Time iso={key.created_at} />
                    </td>
                    <td>
                      <Time iso={key.last_used_at} />
                    </td>
                    <td>
                      {key.status === 'active' && (
                        <button type="button" class="danger" onClick={() => setRevoking(key)}>
                          Revoke<span class="visually-hidden"> {key.name}</span>
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            {page.data.length === 0 && <p>No API keys yet.</p>}
            <Pager page={page} cursor={cursor} go={setCursor} />
          </>
        )}
      </LoadState>
    </>
  );
}
