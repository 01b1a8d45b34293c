import { Validator, type Schema } from '@cfworker/json-schema';
import checkout from '../../specs/adyen/CheckoutService-v72.json';
import cloudDevice from '../../specs/adyen/CloudDeviceService-v1.json';
import terminal from '../../specs/adyen/TerminalAPI-v1.json';
import webhooks from '../../specs/adyen/Webhooks-v1.json';

/**
 * Adyen's own descriptions (specs/adyen) as validators: every request the connector builds and every answer the
 * simulator gives is checked against the schema of its operation. The `example(s)` and `x-*` keys are stripped
 * first (they are no JSON Schema, and @cfworker/json-schema refuses some of them). ISO 4217 codes are upper case
 * (each `currency` description: "The three-character ISO currency code"; the Terminal API's pattern says so), which
 * Checkout's `Amount` schema does not enforce, so that is checked here too.
 */

type Spec = 'checkout' | 'terminal' | 'cloudDevice' | 'webhooks';
const SPECS: Record<Spec, { components: Record<string, unknown>; webhooks?: Record<string, unknown> }> = {
  checkout,
  terminal,
  cloudDevice,
  webhooks,
} as never;

function strip(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strip);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key]) => key !== 'example' && key !== 'examples' && !key.startsWith('x-'))
      .map(([key, value]) => [key, strip(value)]),
  );
}

const stripped = new Map<Spec, Record<string, unknown>>();
const validators = new Map<string, Validator>();

function validatorFor(spec: Spec, schemaName: string): Validator {
  const key = `${spec}#${schemaName}`;
  let validator = validators.get(key);
  if (!validator) {
    let components = stripped.get(spec);
    if (!components) {
      components = strip(SPECS[spec].components) as Record<string, unknown>;
      stripped.set(spec, components);
    }
    const root = { $id: `https://specs.test/adyen/${spec}`, $ref: `#/components/schemas/${schemaName}`, components };
    validator = new Validator(root as Schema, '2020-12', false);
    validators.set(key, validator);
  }
  return validator;
}

function currencyProblems(instance: unknown, path = ''): string[] {
  if (Array.isArray(instance)) return instance.flatMap((item, i) => currencyProblems(item, `${path}/${i}`));
  if (!instance || typeof instance !== 'object') return [];
  return Object.entries(instance).flatMap(([key, value]) =>
    (key === 'currency' || key === 'Currency') && typeof value === 'string' && !/^[A-Z]{3}$/.test(value)
      ? [`${path}/${key}: not an ISO 4217 code (upper case)`]
      : currencyProblems(value, `${path}/${key}`),
  );
}

/** The problems of `instance` against `schemaName` of the spec; empty when it conforms. */
export function specProblems(spec: Spec, schemaName: string, instance: unknown): string[] {
  const result = validatorFor(spec, schemaName).validate(instance);
  const problems = result.valid ? [] : result.errors.slice(0, 5).map((e) => `${e.instanceLocation}: ${e.error}`);
  return [...problems, ...currencyProblems(instance)];
}

/** The request schema of a standard webhook (`webhooks["/EVENT_CODE"]`), or the generic item's envelope. */
export function webhookSchemaOf(eventCode: string): string {
  const hook = (
    webhooks.webhooks as Record<
      string,
      { post: { requestBody: { content: Record<string, { schema: { $ref: string } }> } } }
    >
  )[`/${eventCode}`];
  return hook
    ? hook.post.requestBody.content['application/json']!.schema.$ref.split('/').pop()!
    : 'NotificationRequest';
}

/** Throws with the problems when `instance` does not conform: the simulator's guard on what it receives and gives. */
export function assertSpec(spec: Spec, schemaName: string, instance: unknown): void {
  const problems = specProblems(spec, schemaName, instance);
  if (problems.length > 0) throw new Error(`not a ${spec} ${schemaName}: ${problems.join('; ')}`);
}

/** Every eventCode of the description: `NotificationRequestItem.eventCode`'s enumeration and its webhooks' names. */
export function specEventCodes(): string[] {
  const item = (webhooks.components.schemas as Record<string, { properties?: { eventCode?: { enum?: string[] } } }>)
    .NotificationRequestItem;
  const names = Object.keys(webhooks.webhooks).map((name) => name.slice(1));
  return [...new Set([...(item?.properties?.eventCode?.enum ?? []), ...names])].sort();
}
