import { Hinted } from './hinted.tsx';

/**
 * Form fields generated from a JSON Schema (a connector version's `credentials_schema` or
 * `configuration_schema` from GET /v1/connectors): one field per property, typed and constrained as the schema
 * says (required, lengths, bounds, enum, default as placeholder). Properties that are objects or arrays take
 * JSON. Patterns are checked here with the schema's own (Unicode) regular expression, then the API checks all.
 */
export interface JsonSchema {
  type?: string | string[];
  title?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  pattern?: string;
  format?: string;
}

export type FormValues = Record<string, string | boolean>;

const typeOf = (schema: JsonSchema) => (Array.isArray(schema.type) ? schema.type[0] : schema.type) ?? 'string';
const isScalar = (schema: JsonSchema) => ['string', 'integer', 'number', 'boolean'].includes(typeOf(schema));

function Field({
  name,
  schema,
  required,
  secret,
  value,
  onInput,
}: {
  name: string;
  schema: JsonSchema;
  required: boolean;
  secret: boolean;
  value: string | boolean | undefined;
  onInput: (value: string | boolean) => void;
}) {
  const type = typeOf(schema);
  const hint = [schema.description, schema.default !== undefined && `Default: ${JSON.stringify(schema.default)}.`]
    .filter(Boolean)
    .join(' ');
  const label = (
    <>
      <code>{schema.title ?? name}</code>
      {required ? ' (required)' : ''}
    </>
  );
  const text = typeof value === 'string' ? value : '';
  return (
    <Hinted label={label} hint={hint || undefined}>
      {(control) => {
        if (type === 'boolean')
          return (
            <input
              {...control}
              type="checkbox"
              checked={value === true}
              onChange={(e) => onInput(e.currentTarget.checked)}
            />
          );
        if (Array.isArray(schema.enum))
          return (
            <select {...control} required={required} value={text} onChange={(e) => onInput(e.currentTarget.value)}>
              <option value="">{required ? 'Choose…' : 'Not set'}</option>
              {schema.enum.map((option) => (
                <option key={String(option)} value={String(option)}>
                  {String(option)}
                </option>
              ))}
            </select>
          );
        if (!isScalar(schema))
          return (
            <textarea
              {...control}
              required={required}
              value={text}
              placeholder="JSON"
              onInput={(e) => onInput(e.currentTarget.value)}
            />
          );
        return (
          <input
            {...control}
            // Preact's types split <input> by type; every attribute here is valid for all three.
            type={(secret ? 'password' : type === 'integer' || type === 'number' ? 'number' : 'text') as 'text'}
            autoComplete="off"
            required={required}
            minLength={schema.minLength}
            maxLength={schema.maxLength}
            min={schema.minimum}
            max={schema.maximum}
            step={type === 'integer' ? 1 : type === 'number' ? 'any' : undefined}
            value={text}
            placeholder={schema.default !== undefined ? String(schema.default) : undefined}
            onInput={(e) => onInput(e.currentTarget.value)}
          />
        );
      }}
    </Hinted>
  );
}

/** The fields of an object schema; `secret` makes its text fields password fields (credentials). */
export function SchemaFields({
  legend,
  schema,
  values,
  secret = false,
  onChange,
}: {
  legend: string;
  schema: JsonSchema;
  values: FormValues;
  secret?: boolean;
  onChange: (values: FormValues) => void;
}) {
  const properties = Object.entries(schema.properties ?? {});
  return (
    <fieldset>
      <legend>{legend}</legend>
      {properties.length === 0 && <p class="hint">Nothing to set.</p>}
      {properties.map(([name, property]) => (
        <Field
          key={name}
          name={name}
          schema={property}
          required={schema.required?.includes(name) ?? false}
          secret={secret && typeOf(property) === 'string' && !property.enum}
          value={values[name]}
          onInput={(value) => onChange({ ...values, [name]: value })}
        />
      ))}
    </fieldset>
  );
}

/**
 * The JSON object the fields say (empty fields left out, so the API applies its defaults), or the first
 * field that cannot be read, by name.
 */
export function schemaValue(
  schema: JsonSchema,
  values: FormValues,
): { value: Record<string, unknown>; invalid?: undefined } | { value?: undefined; invalid: string } {
  const value: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const raw = values[name];
    const type = typeOf(property);
    if (typeof raw === 'boolean') {
      value[name] = raw;
      continue;
    }
    if (raw === undefined || raw.trim() === '') continue;
    if (!isScalar(property)) {
      try {
        value[name] = JSON.parse(raw);
      } catch {
        return { invalid: `${name}: not valid JSON` };
      }
    } else if (type === 'integer' || type === 'number') {
      const number = Number(raw);
      if (!Number.isFinite(number) || (type === 'integer' && !Number.isInteger(number)))
        return { invalid: `${name}: not a${type === 'integer' ? 'n integer' : ' number'}` };
      value[name] = number;
    } else {
      if (property.pattern && !matches(property.pattern, raw))
        return { invalid: `${name}: not in the expected format` };
      value[name] = raw;
    }
  }
  return { value };
}

function matches(pattern: string, text: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(text);
  } catch {
    // A pattern this browser cannot compile: the API checks it.
    return true;
  }
}
