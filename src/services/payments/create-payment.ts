import type { Capability } from '../../connectors/types.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import { payments, type PaymentMethodRow, type PaymentRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { isSupportedCurrency, MoneyError, parseAmount } from '../../domain/money.ts';
import { validateWebhookUrl } from '../../domain/webhook-url.ts';
import { applyTransition, nextUpdatedAt } from '../../domain/payment-state.ts';
import { ApiError, invalidRequest } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { zodIssuesToFields } from '../../lib/openapi.ts';
import { methodStatus } from '../payment-methods/resources.ts';
import { findUsablePaymentMethod } from '../payment-methods/store.ts';
import type { OperationContext, OperationResult } from './operation.ts';
import { referenceScopeOf } from './operation.ts';
import { callConnector, connectorApiError, connectorFor } from './processor.ts';
import { toPaymentResource } from './resources.ts';
import { findPaymentByReference, mutatePayment, processorAccountChange, type MutateOptions } from './store.ts';

export interface CreatePaymentBody {
  amount: { value: string; currency: string };
  external_reference: string;
  payment_method: string;
  description?: string;
  metadata?: Record<string, unknown>;
  configuration?: Record<string, unknown>;
  webhook_url?: string;
}

/** A method the caller may use for a new operation needing `capability`; 404/422 otherwise. */
export async function usableMethod(
  deps: Deps,
  ctx: OperationContext,
  methodId: string,
  capability: Capability,
): Promise<PaymentMethodRow> {
  const method = await findUsablePaymentMethod(deps, ctx.caller, methodId);
  if (!method || methodStatus(method) !== 'active') throw new ApiError('payment_method_not_found');
  if (!method.capabilities.includes(capability)) {
    throw new ApiError('capability_not_supported', `The payment method does not support ${capability}.`, {
      details: { capability },
    });
  }
  return method;
}

export async function createPayment(
  deps: Deps,
  ctx: OperationContext,
  body: CreatePaymentBody,
): Promise<OperationResult> {
  const recorded = await recordNewPayment(deps, ctx, body);
  if ('resumed' in recorded) {
    // This attempt's own payment, written by an earlier try whose answer was never stored: go on with it.
    ctx.started();
    return callProcessor(deps, recorded.resumed, recorded.method, body);
  }
  const { payment, method, connector, configuration } = recorded;
  // Fresh: the processor call reuses the opened secrets and the configuration validated here, and the
  // first compare-and-set starts from the row just inserted (no refunds can exist yet) instead of reading it back.
  return callProcessor(deps, payment, method, body, { connector, configuration, known: { payment, refunds: [] } });
}

/** Validates the request and records the payment as `created`, before anything reaches the processor. */
async function recordNewPayment(
  deps: Deps,
  ctx: OperationContext,
  body: CreatePaymentBody,
): Promise<
  | { payment: PaymentRow; method: PaymentMethodRow; connector: Connector; configuration: Record<string, unknown> }
  | { resumed: PaymentRow; method: PaymentMethodRow }
> {
  const method = await usableMethod(deps, ctx, body.payment_method, 'payments');
  const connector = await connectorFor(deps, method);
  const { version, storedConfiguration } = connector;
  const currency = body.amount.currency;
  if (!isSupportedCurrency(currency) || !version.currencies.includes(currency)) {
    throw new ApiError('unsupported_currency', undefined, { details: { supported_currencies: version.currencies } });
  }
  let amountMinor: number;
  try {
    amountMinor = parseAmount(body.amount.value, currency);
  } catch (error) {
    if (error instanceof MoneyError)
      throw invalidRequest('Invalid amount.', [{ field: 'amount.value', issue: error.message }]);
    throw error;
  }
  // The payment's configuration is merged over the method's and must still satisfy the version's schema.
  const merged = version.configurationSchema.safeParse({ ...storedConfiguration, ...(body.configuration ?? {}) });
  if (!merged.success) throw invalidRequest('Invalid configuration.', zodIssuesToFields(merged.error, 'configuration'));

  let webhookUrl: string | null = null;
  if (body.webhook_url !== undefined) {
    const checked = validateWebhookUrl(body.webhook_url, { allowInsecureLocal: deps.allowInsecureWebhooks });
    if (!checked.ok) throw invalidRequest('Invalid webhook_url.', [{ field: 'webhook_url', issue: checked.reason }]);
    webhookUrl = checked.url;
  }

  const now = Date.now();
  const id = newId('pay');
  const row: PaymentRow = {
    id,
    ownerId: ctx.caller.ownerId,
    environment: ctx.environment,
    paymentMethodId: method.id,
    apiKeyId: ctx.caller.kind === 'api_key' ? ctx.caller.apiKeyId : null,
    referenceScope: referenceScopeOf(ctx.caller),
    externalReference: body.external_reference,
    amountMinor,
    currency,
    status: 'created',
    version: 1,
    processorReference: null,
    processorIdempotencyKey: id,
    processorAttempts: 0,
    processorStatus: null,
    qrData: null,
    requiredAction: null,
    description: body.description ?? null,
    metadata: body.metadata ?? null,
    webhookUrl,
    expiresAt: null,
    reconciledAt: null,
    chargedBackAt: null,
    cancelRequestedAt: null,
    cancelAttemptKey: null,
    attemptKey: ctx.attempt.key,
    attemptFingerprint: ctx.attempt.fingerprint,
    createdAt: now,
    updatedAt: now,
  };
  try {
    await deps.db.insert(payments).values(row).run();
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const holder = await findPaymentByReference(deps, row);
    if (holder?.attemptKey === ctx.attempt.key) {
      // Same key: the same request again (resume it) or another body under the key (refuse it).
      if (holder.attemptFingerprint !== ctx.attempt.fingerprint) throw new ApiError('idempotency_key_reused');
      return { resumed: holder, method };
    }
    throw referenceConflict(holder);
  }
  ctx.started();
  return { payment: row, method, connector, configuration: merged.data as Record<string, unknown> };
}

/**
 * The conflict names the payment holding the reference, so a client whose first answer was lost can
 * recover it. The reference is unique per API key or user (the reference scope), so that payment is
 * always the caller's own.
 */
function referenceConflict(holder: PaymentRow | undefined | null): ApiError {
  return new ApiError(
    'external_reference_conflict',
    'This external_reference was already used; `details.payment_id` is the payment that holds it.',
    {
      details: holder ? { payment_id: holder.id } : {},
    },
  );
}

type Connector = Awaited<ReturnType<typeof connectorFor>>;

interface FreshPayment {
  /** The method's connector with its secrets, as opened while validating. */
  connector: Connector;
  /** The payment's configuration merged over the method's, as validated while recording it. */
  configuration: Record<string, unknown>;
  /** The row as inserted, for the first compare-and-set. */
  known: MutateOptions['known'];
}

/**
 * Asks the processor (again, when resuming) and records its answer. A payment the processor already
 * answered for is not sent again: its current state is the result.
 */
async function callProcessor(
  deps: Deps,
  payment: PaymentRow,
  method: PaymentMethodRow | undefined,
  body: CreatePaymentBody,
  fresh?: FreshPayment,
): Promise<OperationResult> {
  const awaitingProcessor =
    payment.processorReference === null && (payment.status === 'created' || payment.status === 'pending');
  if (!awaitingProcessor) return { status: 201, body: { data: toPaymentResource(payment, { withAction: true }) } };
  // Deleted since the first attempt: its credentials are gone, so the processor cannot be asked again.
  if (!method || method.secretsCiphertext === null) throw new ApiError('payment_method_not_found');

  const { version, ctx: base, storedConfiguration } = fresh?.connector ?? (await connectorFor(deps, method));
  const configuration =
    fresh?.configuration ??
    (version.configurationSchema.parse({ ...storedConfiguration, ...(body.configuration ?? {}) }) as Record<
      string,
      unknown
    >);
  const attemptNumber = payment.processorAttempts + 1;
  const result = await callConnector(() =>
    version.adapter.createPayment(
      { ...base, configuration },
      {
        paymentId: payment.id,
        processorIdempotencyKey: payment.processorIdempotencyKey,
        attemptNumber,
        amount: { minor: payment.amountMinor, currency: payment.currency },
        externalReference: payment.externalReference,
        ...(payment.description ? { description: payment.description } : {}),
      },
    ),
  );

  if (result.ok) {
    const outcome = result.value;
    const ttl = typeof configuration.qr_ttl_seconds === 'number' ? configuration.qr_ttl_seconds : null;
    const { payment: saved } = await mutatePayment(
      deps,
      payment.id,
      (current) => {
        const now = Date.now();
        const account = processorAccountChange(current, outcome, now, { hasRefunds: false });
        const qrData = outcome.action.type === 'display_qr' ? outcome.action.qrData : null;
        // A reference or QR appearing without a status change (a timed-out QR payment, resumed) is still an
        // update clients see, so `updated_at` moves too.
        const visible = current.processorReference !== outcome.processorReference || current.qrData !== qrData;
        return {
          change: {
            processorReference: outcome.processorReference,
            processorStatus: outcome.processorStatus,
            processorAttempts: attemptNumber,
            qrData,
            expiresAt: qrData !== null && ttl !== null ? now + ttl * 1000 : null,
            ...(account ?? (visible ? { updatedAt: nextUpdatedAt(current.updatedAt, now) } : {})),
          },
          result: null,
        };
      },
      { known: fresh?.known },
    );
    return { status: 201, body: { data: toPaymentResource(saved, { withAction: true }) } };
  }

  const error = result.error;
  // A timeout leaves the outcome unknown: the payment waits as `pending` for a retry or reconciliation.
  // Unavailable means the processor took nothing: it stays `created`. A rejected configuration fails it.
  const target =
    error.kind === 'timeout'
      ? 'pending'
      : error.kind === 'configuration_invalid'
        ? 'failed'
        : error.kind === 'declined'
          ? 'declined'
          : null;
  const { payment: saved } = await mutatePayment(
    deps,
    payment.id,
    (current) => {
      const move = target ? applyTransition(current, target, Date.now(), { hasRefunds: false }) : null;
      return {
        change: {
          processorAttempts: attemptNumber,
          processorStatus: error.kind,
          ...(move?.ok ? { status: move.status, updatedAt: move.updatedAt } : {}),
        },
        result: null,
      };
    },
    { known: fresh?.known },
  );
  if (error.kind === 'declined') return { status: 201, body: { data: toPaymentResource(saved, { withAction: true }) } };
  throw connectorApiError(error);
}
