import { useState } from 'preact/hooks';
import { ask, client, useAction, useLoad } from '../api.ts';
import type { Schemas } from '../client.ts';
import { CopyButton } from '../components/copy-button.tsx';
import { FormDialog } from '../components/dialog.tsx';
import { LoadState } from '../components/load-state.tsx';
import { PageTitle } from '../components/page-title.tsx';
import { Pager, type Cursor } from '../components/pager.tsx';
import { ProblemNotice } from '../components/problem-notice.tsx';
import { type FormValues, type JsonSchema, SchemaFields, schemaValue } from '../components/schema-form.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { TerminalStatus } from '../components/terminal-status.tsx';
import { Time } from '../components/time.tsx';
import { readSession } from '../session.ts';

type Method = Schemas['AccountPaymentMethod'];
type Connector = Schemas['Connector'];
type Version = Connector['versions'][number];

const versionLabel = (connector: Connector, version: Version) =>
  `${connector.name} · version ${version.version}${version.status === 'deprecated' ? ' (deprecated)' : ''}`;

/**
 * POST /v1/account/payment-methods from the connector catalogue: the credentials and configuration forms are
 * generated from the chosen version's JSON Schemas (GET /v1/connectors).
 */
function CreateMethodDialog({
  connectors,
  onClose,
  onCreated,
}: {
  connectors: Connector[];
  onClose: () => void;
  onCreated: (method: Method) => void;
}) {
  const versions = connectors.flatMap((connector) => connector.versions.map((version) => ({ connector, version })));
  const [versionId, setVersionId] = useState('');
  const [name, setName] = useState('');
  const [credentials, setCredentials] = useState<FormValues>({});
  const [configuration, setConfiguration] = useState<FormValues>({});
  const [invalid, setInvalid] = useState('');
  const chosen = versions.find(({ version }) => version.id === versionId)?.version;
  const create = useAction(
    (body: Schemas['CreateAccountPaymentMethodRequest']) => ask(client.POST('/v1/account/payment-methods', { body })),
    ({ data }) => onCreated(data),
  );
  const submit = () => {
    if (!chosen) return;
    const secrets = schemaValue(chosen.credentials_schema as JsonSchema, credentials);
    const settings = schemaValue(chosen.configuration_schema as JsonSchema, configuration);
    const problem = secrets.invalid ?? settings.invalid;
    setInvalid(problem ?? '');
    if (problem || !secrets.value || !settings.value) return;
    const body: Schemas['CreateAccountPaymentMethodRequest'] = {
      connector_definition_version_id: chosen.id,
      name: name.trim(),
      credentials: secrets.value,
    };
    if (Object.keys(settings.value).length > 0) body.configuration = settings.value;
    void create.run(body);
  };
  return (
    <FormDialog
      title="New payment method"
      submit="Create payment method"
      action={create}
      onSubmit={submit}
      onClose={onClose}
    >
      <label>
        Connector
        <select
          required
          value={versionId}
          onChange={(event) => {
            setVersionId(event.currentTarget.value);
            setCredentials({});
            setConfiguration({});
          }}
        >
          <option value="">Choose a connector…</option>
          {versions.map(({ connector, version }) => (
            <option key={version.id} value={version.id}>
              {versionLabel(connector, version)}
            </option>
          ))}
        </select>
      </label>
      <label>
        Name
        <input required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      {chosen && (
        <>
          <p class="hint">
            Channel <code>{versions.find((v) => v.version === chosen)?.connector.type}</code>, currencies{' '}
            {chosen.currencies.join(', ')}, capabilities {chosen.capabilities.join(', ')}. Credentials are encrypted and
            never shown again.
          </p>
          <SchemaFields
            legend="Credentials"
            schema={chosen.credentials_schema as JsonSchema}
            values={credentials}
            secret
            onChange={setCredentials}
          />
          <SchemaFields
            legend="Configuration"
            schema={chosen.configuration_schema as JsonSchema}
            values={configuration}
            onChange={setConfiguration}
          />
        </>
      )}
      {invalid && (
        <p class="problem" role="alert">
          {invalid}
        </p>
      )}
    </FormDialog>
  );
}

/** Enable or disable the method for one API key (the API lists no links: the answer says what it is now). */
function KeyLinks({ method, keys }: { method: Method; keys: Schemas['ApiKey'][] }) {
  const active = keys.filter((key) => key.status === 'active');
  const [keyId, setKeyId] = useState('');
  const [outcome, setOutcome] = useState('');
  const path = { payment_method_id: method.id };
  const link = useAction(
    (enable: boolean, apiKeyId: string) =>
      enable
        ? ask(
            client.POST('/v1/account/payment-methods/{payment_method_id}/api-keys', {
              params: { path },
              body: { api_key_id: apiKeyId },
            }),
          )
        : ask(
            client.POST('/v1/account/payment-methods/{payment_method_id}/api-keys/{api_key_id}/disable', {
              params: { path: { ...path, api_key_id: apiKeyId } },
            }),
          ),
    ({ data }) => {
      const name = keys.find((key) => key.id === data.api_key_id)?.name ?? data.api_key_id;
      setOutcome(`${data.enabled ? 'Enabled' : 'Disabled'} for ${name}.`);
    },
  );
  const selectId = `link-${method.id}`;
  return (
    <div class="row">
      <label htmlFor={selectId}>
        API key
        <select id={selectId} value={keyId} onChange={(e) => setKeyId(e.currentTarget.value)}>
          <option value="">Choose a key…</option>
          {active.map((key) => (
            <option key={key.id} value={key.id}>
              {key.name} ({key.prefix}…)
            </option>
          ))}
        </select>
      </label>
      <button type="button" disabled={!keyId || link.busy} onClick={() => void link.run(true, keyId)}>
        Enable for this key
      </button>
      <button type="button" disabled={!keyId || link.busy} onClick={() => void link.run(false, keyId)}>
        Disable for this key
      </button>
      <span role="status">{outcome}</span>
      {link.problem && <ProblemNotice problem={link.problem} onRetry={link.retry} />}
    </div>
  );
}

function MethodCard({
  method,
  versionName,
  keys,
  onChanged,
}: {
  method: Method;
  versionName: string;
  keys: Schemas['ApiKey'][];
  onChanged: () => void;
}) {
  const test = readSession()?.environment === 'test';
  const notificationUrl = `${location.origin}/v1/processor-notifications/${method.id}`;
  const toggle = useAction(
    (enabled: boolean) =>
      ask(
        client.PATCH('/v1/account/payment-methods/{payment_method_id}', {
          params: { path: { payment_method_id: method.id } },
          body: { enabled },
        }),
      ),
    onChanged,
  );
  const titleId = `method-${method.id}`;
  return (
    <section class="card" aria-labelledby={titleId}>
      <h2 id={titleId}>{method.name}</h2>
      <dl class="fields">
        <dt>Status</dt>
        <dd>
          <StatusBadge status={method.status} />
        </dd>
        <dt>Channel</dt>
        <dd>
          {method.type} ({method.provider})
        </dd>
        <dt>Connector</dt>
        <dd>{versionName}</dd>
        <dt>Capabilities</dt>
        <dd>{method.capabilities.join(', ')}</dd>
        <dt>ID</dt>
        <dd>
          <code>{method.id}</code>
        </dd>
        <dt>Processor notification URL</dt>
        <dd>
          <code>{notificationUrl}</code>{' '}
          <CopyButton value={notificationUrl} what={`notification URL of ${method.name}`} />
        </dd>
        <dt>Created</dt>
        <dd>
          <Time iso={method.created_at} />
        </dd>
      </dl>
      <div class="actions">
        <button type="button" disabled={toggle.busy} onClick={() => void toggle.run(!method.enabled)}>
          {method.enabled ? 'Disable' : 'Enable'}
          <span class="visually-hidden"> {method.name}</span>
        </button>
      </div>
      {toggle.problem && <ProblemNotice problem={toggle.problem} onRetry={toggle.retry} />}
      <h3>API keys that may use it</h3>
      <KeyLinks method={method} keys={keys} />
      {method.type === 'pos' && <TerminalStatus methodId={method.id} test={test} />}
    </section>
  );
}

/** GET /v1/account/payment-methods: create from the catalogue, enable, link keys, terminals, notification URLs. */
export function PaymentMethods() {
  const [cursor, setCursor] = useState<Cursor>({});
  const methods = useLoad(
    () => ask(client.GET('/v1/account/payment-methods', { params: { query: { limit: 20, ...cursor } } })),
    [cursor],
  );
  const connectors = useLoad(() => ask(client.GET('/v1/connectors', { params: { query: { limit: 100 } } })), []);
  const keys = useLoad(() => ask(client.GET('/v1/account/api-keys', { params: { query: { limit: 100 } } })), []);
  const [creating, setCreating] = useState(false);
  const [notice, setNotice] = useState('');
  const versionName = (id: string) => {
    for (const connector of connectors.data?.data ?? [])
      for (const version of connector.versions) if (version.id === id) return versionLabel(connector, version);
    return id;
  };
  return (
    <>
      <PageTitle title="Payment methods" />
      <button type="button" class="primary" disabled={!connectors.data} onClick={() => setCreating(true)}>
        New payment method…
      </button>
      {connectors.problem && <ProblemNotice problem={connectors.problem} onRetry={connectors.reload} />}
      {creating && connectors.data && (
        <CreateMethodDialog
          connectors={connectors.data.data}
          onClose={() => setCreating(false)}
          onCreated={(method) => {
            setCreating(false);
            setNotice(`Payment method ${method.name} created.`);
            methods.reload();
          }}
        />
      )}
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <LoadState state={methods}>
        {(page) => (
          <>
            {page.data.length === 0 && <p>No payment methods yet.</p>}
            {page.data.map((method) => (
              <MethodCard
                key={method.id}
                method={method}
                versionName={versionName(method.connector_definition_version_id)}
                keys={keys.data?.data ?? []}
                onChanged={methods.reload}
              />
            ))}
            <Pager page={page} cursor={cursor} go={setCursor} />
          </>
        )}
      </LoadState>
    </>
  );
}
