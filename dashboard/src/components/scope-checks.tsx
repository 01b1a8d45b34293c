import type { Schemas } from '../client.ts';
import { SCOPES } from '../vocabulary.ts';

type Scope = Schemas['Scope'];

/** The business scopes as checkboxes, in a fieldset of its own. */
export function ScopeChecks({ value, onChange }: { value: Scope[]; onChange: (scopes: Scope[]) => void }) {
  return (
    <fieldset>
      <legend>Scopes</legend>
      {SCOPES.map((scope) => (
        <label class="check" key={scope}>
          <input
            type="checkbox"
            checked={value.includes(scope)}
            onChange={(event) =>
              onChange(event.currentTarget.checked ? [...value, scope] : value.filter((s) => s !== scope))
            }
          />
          <code>{scope}</code>
        </label>
      ))}
    </fieldset>
  );
}
