import { findConnectorVersion } from '../../connectors/registry.ts';
import {
  ConnectorError,
  type ConnectorContext,
  type ConnectorVersion,
  type PaymentLookupInput,
  type RefundLookupInput,
  TerminalUnavailableError,
} from '../../connectors/types.ts';
import type { PaymentMethodRow, PaymentRow, RefundRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { cancelAwaitingProcessor, type ReportedSettlement, type VoidEvidence } from '../../domain/ledger/index.ts';
import { ServiceError } from '../../lib/errors.ts';
import { openSecrets } from '../payment-methods/secrets.ts';

/**
 * Builds the connector call for a method: its version's adapter and the freshly decrypted secrets. A call about an
 * existing payment passes it, so that it runs with what the payment kept of its configuration (`forPayment`).
 */
export async function connectorFor(deps: Deps, method: PaymentMethodRow, payment?: KeptConfiguration) {
  const version = findConnectorVersion(method.connectorVersionId);
  if (!version)
    throw new ServiceError(
      'connector_configuration_invalid',
      'The payment method’s connector version is no longer available.',
    );
  const secrets = await openSecrets(deps, method);
  const ctx: ConnectorContext = {
    credentials: secrets.credentials,
    configuration: secrets.configuration,
    environment: deps.environment,
    fetch: globalThis.fetch.bind(globalThis),
  };
  return { version, ctx: payment ? forPayment(ctx, payment) : ctx, storedConfiguration: secrets.configuration };
}

type KeptConfiguration = Pick<PaymentRow, 'keptConfiguration'>;

/**
 * The context of a call about an existing payment: the method's configuration with what the payment kept of the
 * configuration it was created with laid over it (`ConnectorVersion.keptConfiguration`: its terminal stays its own).
 */
export function forPayment(ctx: ConnectorContext, payment: KeptConfiguration): ConnectorContext {
  if (payment.keptConfiguration === null) return ctx;
  return { ...ctx, configuration: { ...(ctx.configuration as object), ...payment.keptConfiguration } };
}

/** What a payment keeps of the configuration it is created with (the method's merged with its own); null: nothing. */
export function keptConfigurationOf(
  version: Pick<ConnectorVersion, 'keptConfiguration'>,
  configuration: Record<string, unknown>,
): Record<string, unknown> | null {
  const kept = Object.fromEntries(
    (version.keptConfiguration ?? []).flatMap((field) =>
      configuration[field] === undefined ? [] : [[field, configuration[field]]],
    ),
  );
  return Object.keys(kept).length > 0 ? kept : null;
}

export type ConnectorCall<T> = { ok: true; value: T } | { ok: false; error: ConnectorError };

/** Runs one adapter call; only `ConnectorError`s are outcomes, anything else is a bug and propagates. */
export async function callConnector<T>(fn: () => Promise<T>): Promise<ConnectorCall<T>> {
  try {
    return { ok: true, value: await fn() };
  } catch (error) {
    if (error instanceof ConnectorError) return { ok: false, error };
    throw error;
  }
}

/**
 * What a connector's `getPayment` (a payment) or `getRefund` (a refund of it) is asked by: one builder for
 * every lookup (notifications, reconciliation, QR expiry), so that the processor is always asked the same
 * way about the same operation.
 */
export function processorLookup(payment: PaymentRow): PaymentLookupInput;
export function processorLookup(payment: PaymentRow, refund: RefundRow): RefundLookupInput;
export function processorLookup(payment: PaymentRow, refund?: RefundRow): PaymentLookupInput | RefundLookupInput {
  if (refund === undefined) {
    return {
      paymentId: payment.id,
      processorReference: payment.processorReference,
      ...(payment.processorPaymentId !== null ? { processorPaymentId: payment.processorPaymentId } : {}),
      processorIdempotencyKey: payment.processorIdempotencyKey,
      amount: { minor: payment.amountMinor, currency: payment.currency },
      ...(cancelAwaitingProcessor(payment, Date.now()) ? { cancelRequested: true } : {}),
    };
  }
  return {
    refundId: refund.id,
    amount: { minor: refund.amountMinor, currency: refund.currency },
    processorReference: refund.processorReference,
    processorIdempotencyKey: refund.processorIdempotencyKey,
    paymentProcessorReference: payment.processorReference ?? '',
  };
}

/** The public error for a processor failure; the processor's own code is kept, its payload never is. */
export function connectorApiError(error: ConnectorError): ServiceError {
  const details = error.processorCode ? { processor_code: error.processorCode } : {};
  // The terminal refused at once: say which state it is in, rather than a generic 503.
  if (error instanceof TerminalUnavailableError)
    return new ServiceError('terminal_unavailable', undefined, {
      details: { terminal_status: error.terminal, ...details },
    });
  switch (error.kind) {
    case 'declined':
      return new ServiceError('processor_declined', undefined, { details });
    case 'timeout':
      return new ServiceError('processor_timeout', undefined, { details });
    case 'unavailable':
      return new ServiceError('processor_unavailable', undefined, { details });
    case 'not_found':
      return new ServiceError('processor_unavailable', 'The processor does not know this operation yet.', { details });
    case 'configuration_invalid':
    case 'invalid_notification':
      return new ServiceError('connector_configuration_invalid', undefined, { details });
  }
}

export type { ConnectorVersion };

/** A method's connector with its secrets open, for one operation. */
export type MethodConnector = Awaited<ReturnType<typeof connectorFor>>;

/** Only the settlement of an answer or a notification (which carries much else). */
export const pickSettlement = (from: ReportedSettlement): ReportedSettlement => ({
  ...(from.settlement !== undefined ? { settlement: from.settlement } : {}),
  ...(from.settlementNullReason !== undefined ? { settlementNullReason: from.settlementNullReason } : {}),
});

/**
 * The service's own read of the refund that carried out a payment's void (`getVoidRefund`, the newest void refund of
 * the payment), as evidence for the ledger (`void_reversal`, which decides whether it shows the void failed); null
 * when there is none to read (its connector's voids are no refunds that can fail) or the read did not answer.
 */
export async function readVoidRefund(
  version: ConnectorVersion,
  ctx: ConnectorContext,
  payment: PaymentRow,
  named?: string,
): Promise<VoidEvidence | null> {
  const getVoidRefund = version.adapter.getVoidRefund;
  if (!getVoidRefund) return null;
  const read = await callConnector(() => getVoidRefund(ctx, processorLookup(payment)));
  if (!read.ok) return null;
  return {
    kind: 'read',
    refundReference: read.value.processorReference,
    status: read.value.status,
    ...(named !== undefined ? { named } : {}),
  };
}
