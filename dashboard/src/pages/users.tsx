import { useEffect, useState } from 'preact/hooks';
import { ask, client, useAction, useLoad } from '../api.ts';
import type { Schemas } from '../client.ts';
import { FormDialog } from '../components/dialog.tsx';
import { Hinted } from '../components/hinted.tsx';
import { LoadState } from '../components/load-state.tsx';
import { PageTitle } from '../components/page-title.tsx';
import { Pager, type Cursor } from '../components/pager.tsx';
import { ScopeChecks } from '../components/scope-checks.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { Time } from '../components/time.tsx';
import { readSession } from '../session.ts';
import { ROLES, SCOPES } from '../vocabulary.ts';

type User = Schemas['User'];

function RoleSelect({ value, onChange }: { value: Schemas['Role']; onChange: (role: Schemas['Role']) => void }) {
  return (
    <label>
      Role
      <select value={value} onChange={(e) => onChange(e.currentTarget.value as Schemas['Role'])}>
        {ROLES.map((role) => (
          <option key={role} value={role}>
            {role}
          </option>
        ))}
      </select>
    </label>
  );
}

/** POST /v1/users (a new user) or PATCH /v1/users/{id} (role and scopes of an existing one). */
function UserDialog({ user, onClose, onSaved }: { user: User | null; onClose: () => void; onSaved: () => void }) {
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState<Schemas['Role']>(user?.role ?? 'client');
  const [scopes, setScopes] = useState<Schemas['Scope'][]>(user?.scopes ?? [...SCOPES]);
  const save = useAction(
    () =>
      user
        ? ask(client.PATCH('/v1/users/{user_id}', { params: { path: { user_id: user.id } }, body: { role, scopes } }))
        : ask(client.POST('/v1/users', { body: { email: email.trim(), name: name.trim(), password, role, scopes } })),
    onSaved,
  );
  return (
    <FormDialog
      title={user ? `Role and scopes of ${user.email}` : 'Add a user'}
      submit={user ? 'Save' : 'Add user'}
      action={save}
      onSubmit={() => void save.run()}
      onClose={onClose}
    >
      {!user && (
        <>
          <label>
            Email
            <input
              type="email"
              required
              autoComplete="off"
              value={email}
              onInput={(e) => setEmail(e.currentTarget.value)}
            />
          </label>
          <label>
            Name
            <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <Hinted label="Password" hint="12 to 256 characters; the user signs in with it.">
            {(control) => (
              <input
                {...control}
                type="password"
                required
                minLength={12}
                maxLength={256}
                autoComplete="new-password"
                value={password}
                onInput={(e) => setPassword(e.currentTarget.value)}
              />
            )}
          </Hinted>
        </>
      )}
      <RoleSelect value={role} onChange={setRole} />
      <ScopeChecks value={scopes} onChange={setScopes} />
    </FormDialog>
  );
}

/** What each step of a move does (the API's `move.step`, docs/SCALE.md "Moves"). */
const MOVE_STEPS: Record<NonNullable<Schemas['OwnerMove']>['step'], string> = {
  mark: "the user's writes paused; waiting for every cached placement to expire",
  copy: 'copying the rows to the new shard',
  verify: 'checking the copy row by row',
  flip: 'pointing the directory at the new shard',
  drain: 'letting readers of the old copy finish',
  delete: 'deleting the old copy',
  done: 'finished',
};
/** While a move runs, the dialog reads the placement again this often. */
const MOVE_POLL_MS = 2000;

function MoveFields({ move }: { move: NonNullable<Schemas['OwnerMove']> }) {
  const copied = move.rows_copied && Object.entries(move.rows_copied);
  return (
    <>
      <dt>Move</dt>
      <dd>
        <code>{move.from}</code> to <code>{move.to}</code> <span class="mono hint">{move.id}</span>
      </dd>
      <dt>Move status</dt>
      <dd>
        <StatusBadge status={move.status} />{' '}
        {move.status === 'running'
          ? `step ${move.step}: ${MOVE_STEPS[move.step]}`
          : move.status !== 'done' && `at step ${move.step}`}
        {move.reason && <p class="hint">{move.reason}</p>}
      </dd>
      {copied && (
        <>
          <dt>Rows copied</dt>
          <dd>{copied.map(([table, rows]) => `${table} ${rows}`).join(', ')}</dd>
        </>
      )}
      <dt>Move updated</dt>
      <dd>
        <Time iso={move.updated_at} />
      </dd>
    </>
  );
}

/**
 * GET and PUT /v1/users/{id}/placement: the shard holding the user's data; moving it moves the data. A move is a
 * durable job (202): the dialog shows its status and step and reads the placement again until it ends.
 */
function PlacementDialog({ user, onClose }: { user: User; onClose: () => void }) {
  const path = { user_id: user.id };
  const placement = useLoad(() => ask(client.GET('/v1/users/{user_id}/placement', { params: { path } })), [user.id]);
  const [shard, setShard] = useState('');
  const [notice, setNotice] = useState('');
  const move = useAction(
    () => ask(client.PUT('/v1/users/{user_id}/placement', { params: { path }, body: { shard: shard.trim() } })),
    ({ data }, status) => {
      setNotice(
        status === 202 && data.move
          ? `Moving to ${data.move.to}: the move runs in the background, and this dialog follows it.`
          : data.move?.status === 'canceled'
            ? `The move to ${data.move.to} was canceled: the data stays on ${data.shard}.`
            : `Placed on ${data.shard}: nothing to move.`,
      );
      placement.reload();
    },
  );
  const running = placement.data?.data.move?.status === 'running';
  // Each answer schedules the next read while the move runs; closing the dialog stops it.
  useEffect(() => {
    if (!running) return;
    const timer = setTimeout(placement.reload, MOVE_POLL_MS);
    return () => clearTimeout(timer);
  }, [placement.data, running]);
  return (
    <FormDialog
      title={`Placement of ${user.email}`}
      submit="Move data"
      action={move}
      onSubmit={() => void move.run()}
      onClose={onClose}
      danger
    >
      <p role="status">{notice}</p>
      <LoadState state={placement}>
        {({ data }) => (
          <dl class="fields">
            <dt>Shard</dt>
            <dd>
              <code>{data.shard}</code>
            </dd>
            <dt>Moving to</dt>
            <dd>{data.moving_to ? <code>{data.moving_to}</code> : 'not moving'}</dd>
            <dt>Placed</dt>
            <dd>
              <Time iso={data.placed_at} />
            </dd>
            {data.move && <MoveFields move={data.move} />}
          </dl>
        )}
      </LoadState>
      <Hinted
        label="Move to shard"
        hint="A shard of this deployment, e.g. SHARD_1. Its writes answer 503 owner_moving until the move ends."
      >
        {(control) => (
          <input
            {...control}
            required
            pattern="SHARD_[0-9]+"
            value={shard}
            onInput={(e) => setShard(e.currentTarget.value)}
          />
        )}
      </Hinted>
    </FormDialog>
  );
}

/** GET /v1/users (admins): add users, change their role and scopes, see and move their placement. */
export function Users() {
  if (readSession()?.user.role !== 'admin')
    return (
      <>
        <PageTitle title="Users" />
        <p>Only admins manage users.</p>
      </>
    );
  return <UserList />;
}

function UserList() {
  const [cursor, setCursor] = useState<Cursor>({});
  const users = useLoad(() => ask(client.GET('/v1/users', { params: { query: { limit: 50, ...cursor } } })), [cursor]);
  const [editing, setEditing] = useState<User | 'new' | null>(null);
  const [placing, setPlacing] = useState<User | null>(null);
  return (
    <>
      <PageTitle title="Users" />
      <button type="button" class="primary" onClick={() => setEditing('new')}>
        Add a user…
      </button>
      {editing && (
        <UserDialog
          user={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            users.reload();
          }}
        />
      )}
      {placing && <PlacementDialog user={placing} onClose={() => setPlacing(null)} />}
      <LoadState state={users}>
        {(page) => (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">Email</th>
                  <th scope="col">Name</th>
                  <th scope="col">Role</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Created</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((user) => (
                  <tr key={user.id}>
                    <td>{user.email}</td>
                    <td>{user.name}</td>
                    <td>{user.role}</td>
                    <td>{user.scopes.join(', ')}</td>
                    <td>
                      <Time iso={user.created_at} />
                    </td>
                    <td>
                      <div class="actions">
                        <button type="button" onClick={() => setEditing(user)}>
                          Role and scopes<span class="visually-hidden"> of {user.email}</span>
                        </button>
                        <button type="button" onClick={() => setPlacing(user)}>
                          Placement<span class="visually-hidden"> of {user.email}</span>
                        </button>
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Pager page={page} cursor={cursor} go={setCursor} />
          </>
        )}
      </LoadState>
    </>
  );
}
