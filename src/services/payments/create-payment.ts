import { isUniqueViolation } from '../../db/errors.ts';
import { preparedInsert } from '../../db/prepared.ts';
import { payments, type PaymentMethodRow, type PaymentRow } from '../../db/schema/index.ts';
import { callerKey } from '../../domain/caller.ts';
import { isSupportedCurrency, MoneyError, parseAmount } from '../../domain/money.ts';
import { applyTransition, nextUpdatedAt } from '../../domain/payment-state.ts';
import { validateWebhookUrl } from '../../domain/webhook-url.ts';
import { invalidRequest, ServiceError, zodIssuesToFields } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { NO_SETTLEMENT } from '../../domain/settlement.ts';
import { type DisplayConfiguration, displayConfigurationIssues } from '../../connectors/display.ts';
import type { PaymentOutcome } from '../../connectors/types.ts';
import { defineOperation, type Recorded } from '../operations/operation.ts';
import { usableMethod } from '../payment-methods/store.ts';
import { CreatePaymentBody } from './inputs.ts';
import { connectorApiError, connectorFor, type MethodConnector } from './processor.ts';
import { toPaymentResource } from './resources.ts';
import { findPaymentByReference, mutatePayment, processorAccountChange, type MutateOptions } from './store.ts';

interface Plan {
  row: PaymentRow;
  method: PaymentMethodRow;
  /** The method's connector with its secrets, opened while validating. */
  connector: MethodConnector;
  /** The payment's configuration merged over the method's, as validated. */
  configuration: Record<string, unknown>;
}

interface Tracker extends Plan {
  payment: PaymentRow;
  /** The row as this attempt inserted it, for the first compare-and-set (absent when resumed). */
  known?: MutateOptions['known'];
}

/** The payment's first write, built once per isolate. */
const paymentInsert = preparedInsert(payments);

/**
 * Creates a payment: recorded as `created` before the processor is asked, then moved by its answer. A
 * retry of the same attempt finds its payment by the reference (unique per caller) and the attempt key
 * on the row, and resumes it; a payment the processor already answered for is not sent again.
 */
export const createPayment = defineOperation({
  name: 'create_payment',
  body: CreatePaymentBody,
  answers: 'created',

  async validate(deps, ctx, { body }: { body: CreatePaymentBody }): Promise<Plan> {
    const method = await usableMethod(deps, ctx.caller, body.payment_method, 'payments');
    const connector = await connectorFor(deps, method);
    const { version, storedConfiguration } = connector;
    const currency = body.amount.currency;
    if (!isSupportedCurrency(currency) || !version.currencies.includes(currency)) {
      throw new ServiceError('unsupported_currency', undefined, {
        details: { supported_currencies: version.currencies },
      });
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
    if (!merged.success)
      throw invalidRequest('Invalid configuration.', zodIssuesToFields(merged.error, 'configuration'));
    // A cart for the terminal must show what is charged: checked now, not when the processor is asked.
    const display = (merged.data as { display?: DisplayConfiguration }).display;
    const displayIssues = display ? displayConfigurationIssues(display, { minor: amountMinor, currency }) : [];
    if (displayIssues.length > 0)
      throw invalidRequest(
        'Invalid configuration.display.',
        displayIssues.map(({ field, issue }) => ({ field: `configuration.${field}`, issue })),
      );

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
      referenceScope: callerKey(ctx.caller),
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
      ...NO_SETTLEMENT,
      voidedAt: null,
      voidRefundReference: null,
      cancelRequestedAt: null,
      cancelAttemptKey: null,
      cancelAcceptedAt: null,
      atTerminal: false,
      terminalSeenAt: null,
      terminalChecks: 0,
      terminalCheckAt: null,
      disputeCheckAt: null,
      attemptKey: ctx.attempt.key,
      attemptFingerprint: ctx.attempt.fingerprint,
      createdAt: now,
      updatedAt: now,
    };
    return { row, method, connector, configuration: merged.data as Record<string, unknown> };
  },

  async record(deps, ctx, plan): Promise<Recorded<PaymentRow, Tracker>> {
    try {
      await paymentInsert.bind(deps.d1, plan.row).run();
      // Fresh: the first compare-and-set starts from the row just inserted (no refunds can exist yet).
      return { pending: { ...plan, payment: plan.row, known: { payment: plan.row, refunds: [] } } };
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
    const holder = await findPaymentByReference(deps, plan.row);
    // Another attempt holds the reference: a conflict naming its payment, so a client whose first answer
    // was lost can recover it (the reference is unique per caller, so that payment is always its own).
    if (holder?.attemptKey !== ctx.attempt.key) {
      throw new ServiceError(
        'external_reference_conflict',
        'This external_reference was already used; `details.payment_id` is the payment that holds it.',
        { details: holder ? { payment_id: holder.id } : {} },
      );
    }
    // This attempt's own payment, written by an earlier try whose answer was never stored: the same request
    // again goes on with it, another body under the key is refused.
    if (holder.attemptFingerprint !== ctx.attempt.fingerprint) throw new ServiceError('idempotency_key_reused');
    const awaitingProcessor =
      holder.processorReference === null && (holder.status === 'created' || holder.status === 'pending');
    return awaitingProcessor ? { pending: { ...plan, payment: holder } } : { done: holder };
  },

  callProcessor(_deps, { payment, connector, configuration }): Promise<PaymentOutcome> {
    return connector.version.adapter.createPayment(
      { ...connector.ctx, configuration },
      {
        paymentId: payment.id,
        processorIdempotencyKey: payment.processorIdempotencyKey,
        attemptNumber: payment.processorAttempts + 1,
        amount: { minor: payment.amountMinor, currency: payment.currency },
        externalReference: payment.externalReference,
        ...(payment.description ? { description: payment.description } : {}),
      },
    );
  },

  async applyOutcome(deps, _ctx, { payment, configuration, known }, call) {
    const attemptNumber = payment.processorAttempts + 1;
    if (call.ok) {
      const outcome = call.value;
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
        { known },
      );
      return saved;
    }

    const error = call.error;
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
      { known },
    );
    // A decline is an outcome, answered as the payment; the others are errors (retryable or not).
    if (error.kind === 'declined') return saved;
    throw connectorApiError(error);
  },

  present: (payment) => toPaymentResource(payment, { withAction: true }),
});
