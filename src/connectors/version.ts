import { z } from 'zod';
import type { Environment } from '../domain/environment.ts';
import {
  CAPABILITIES,
  ConnectorError,
  type ConnectorAdapter,
  type ConnectorContext,
  type ConnectorErrorKind,
  type ConnectorVersion,
} from './types.ts';

/**
 * Credentials are checked against the version's schema when a method is created, then sealed; what is
 * decrypted later may have been written under an older schema, or by hand. Every adapter call therefore
 * parses them again first, so an adapter only ever reads credentials of the shape it declares, and a
 * mismatch is a clear `configuration_invalid` instead of a request sent with a malformed secret.
 */
export function parseCredentials<Credentials>(schema: z.ZodType<Credentials>, value: unknown): Credentials {
  const parsed = schema.safeParse(value);
  // The issues name fields and values of a secret: none of them leaves here.
  if (!parsed.success) {
    throw new ConnectorError(
      'configuration_invalid',
      'The payment method’s stored credentials do not fit its connector version; update them.',
      'credentials_invalid',
    );
  }
  return parsed.data;
}

/** Whether `version` is offered in `environment` (`ConnectorVersion.environments`). */
export const isOfferedIn = (version: Pick<ConnectorVersion, 'environments'>, environment: Environment) =>
  version.environments?.includes(environment) ?? true;

/**
 * A version's adapter in a deployment that does not offer it (a sandbox method left in `live`) refuses before
 * anything else: its operations as misconfigured, its notifications as unverifiable.
 */
function notOfferedIn(version: ConnectorVersion, environment: Environment, kind: ConnectorErrorKind) {
  return new ConnectorError(
    kind,
    `The ${version.provider} connector is not offered in the ${environment} environment.`,
    `${version.provider}_not_offered_in_${environment}`,
  );
}

function withParsedCredentials<Credentials, Configuration>(
  version: ConnectorVersion,
  adapter: ConnectorAdapter<Credentials, Configuration>,
): ConnectorAdapter<Credentials, Configuration> {
  type Ctx = ConnectorContext<Credentials, Configuration>;
  const withCredentials = (ctx: Ctx, refusal: ConnectorErrorKind = 'configuration_invalid'): Ctx => {
    if (!isOfferedIn(version, ctx.environment)) throw notOfferedIn(version, ctx.environment, refusal);
    return { ...ctx, credentials: parseCredentials(version.credentialsSchema, ctx.credentials) as Credentials };
  };
  const parsed =
    <I, O>(call: (ctx: Ctx, input: I) => Promise<O>, refusal?: ConnectorErrorKind) =>
    async (ctx: Ctx, input: I): Promise<O> =>
      call(withCredentials(ctx, refusal), input);
  const getTerminal = adapter.getTerminal?.bind(adapter);
  return {
    createPayment: parsed(adapter.createPayment.bind(adapter)),
    getPayment: parsed(adapter.getPayment.bind(adapter)),
    cancelPayment: parsed(adapter.cancelPayment.bind(adapter)),
    refundPayment: parsed(adapter.refundPayment.bind(adapter)),
    getRefund: parsed(adapter.getRefund.bind(adapter)),
    parseNotification: parsed(adapter.parseNotification.bind(adapter), 'invalid_notification'),
    ...(getTerminal ? { getTerminal: async (ctx: Ctx) => getTerminal(withCredentials(ctx)) } : {}),
    ...(adapter.getVoidRefund ? { getVoidRefund: parsed(adapter.getVoidRefund.bind(adapter)) } : {}),
    ...(adapter.listDisputes ? { listDisputes: parsed(adapter.listDisputes.bind(adapter)) } : {}),
    ...(adapter.getDispute ? { getDispute: parsed(adapter.getDispute.bind(adapter)) } : {}),
  };
}

/**
 * A connector version as published: its adapter refuses every call in a deployment that does not offer it, and
 * parses the decrypted credentials before every call.
 */
export function defineVersion(version: ConnectorVersion): ConnectorVersion {
  return { ...version, adapter: withParsedCredentials(version, version.adapter) };
}

/**
 * What the versions of one provider share: the first published version, with every capability and the
 * provider's credentials. Each connector spreads it into its versions, so it is written here once.
 */
export function firstPublishedVersion(provider: string, credentialsSchema: z.ZodType) {
  return {
    provider,
    version: '1',
    status: 'published' as const,
    capabilities: [...CAPABILITIES],
    credentialsSchema,
  };
}

/**
 * `qr_ttl_seconds` of every QR version's configuration: how long a pending QR payment stays payable before
 * the service expires it (jobs/expire-qr-payments.ts reads it), one range and default for every processor.
 */
export const qrTtlSeconds = (description = 'A pending QR payment expires after this many seconds.') =>
  z.number().int().min(60).max(86_400).default(900).describe(description);
