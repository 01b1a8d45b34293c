import { isUniqueViolation } from '../../db/errors.ts';
import type { PaymentMethodRow, PaymentRow } from '../../db/schema/index.ts';
import { callerKey } from '../../domain/caller.ts';
import { isSupportedCurrency, MoneyError, parseAmount } from '../../domain/money.ts';
import { validateWebhookUrl } from '../../domain/webhook-url.ts';
import { invalidRequest, ServiceError, zodIssuesToFields } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { type DisplayConfiguration, displayConfigurationIssues } from '../../connectors/display.ts';
import type { PaymentOutcome } from '../../connectors/types.ts';
import { defineOperation, type Recorded } from '../operations/operation.ts';
import { usableMethod } from '../payment-methods/store.ts';
import type { CreatePaymentBody } from './inputs.ts';
import { connectorApiError, connectorFor, forPayment, keptConfigurationOf, type MethodConnector } from './processor.ts';
import { toPaymentResource } from './resources.ts';
import { type LedgerState, openPayment } from '../../domain/ledger/index.ts';
import { findPaymentByReference, mutate, recordPayment } from './store.ts';

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
  known?: LedgerState;
}

/**
 * Creates a payment: recorded as `created` before the processor is asked, then moved by its answer. A
 * retry of the same attempt finds its payment by the reference (unique per caller) and the attempt key
 * on the row, and resumes it; a payment the processor already answered for is not sent again.
 */
export const createPayment = defineOperation({
  name: 'create_payment',
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

    const row = openPayment(
      {
        id: newId('pay'),
        ownerId: ctx.caller.ownerId,
        environment: ctx.environment,
        paymentMethodId: method.id,
        apiKeyId: ctx.caller.kind === 'api_key' ? ctx.caller.apiKeyId : null,
        referenceScope: callerKey(ctx.caller),
        externalReference: body.external_reference,
        amountMinor,
        currency,
        description: body.description ?? null,
        metadata: body.metadata ?? null,
        keptConfiguration: keptConfigurationOf(version, merged.data as Record<string, unknown>),
        webhookUrl,
        attemptKey: ctx.attempt.key,
        attemptFingerprint: ctx.attempt.fingerprint,
      },
      Date.now(),
    );
    return { row, method, connector, configuration: merged.data as Record<string, unknown> };
  },

  async record(deps, ctx, plan): Promise<Recorded<PaymentRow, Tracker>> {
    try {
      await recordPayment(deps, plan.row);
      // Fresh: the first compare-and-set starts from the row just inserted.
      return { pending: { ...plan, payment: plan.row, known: { payment: plan.row } } };
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
    // A retry goes on where the first attempt went (its terminal), whatever the method says now.
    return connector.version.adapter.createPayment(forPayment({ ...connector.ctx, configuration }, payment), {
      paymentId: payment.id,
      processorIdempotencyKey: payment.processorIdempotencyKey,
      attemptNumber: payment.processorAttempts + 1,
      amount: { minor: payment.amountMinor, currency: payment.currency },
      externalReference: payment.externalReference,
      ...(payment.description ? { description: payment.description } : {}),
    });
  },

  async applyOutcome(deps, _ctx, { configuration, payment, known }, call) {
    const options = known ? { known } : {};
    if (call.ok) {
      const outcome = call.value;
      const ttl = typeof configuration.qr_ttl_seconds === 'number' ? configuration.qr_ttl_seconds : null;
      const { payment: saved } = await mutate(
        deps,
        payment.id,
        {
          type: 'create_answered',
          account: outcome,
          processorReference: outcome.processorReference,
          processorStatus: outcome.processorStatus,
          qrData: outcome.action.type === 'display_qr' ? outcome.action.qrData : null,
          qrTtlMs: ttl === null ? null : ttl * 1000,
        },
        options,
      );
      return saved;
    }
    const error = call.error;
    const { payment: saved } = await mutate(deps, payment.id, { type: 'create_failed', error: error.kind }, options);
    // A decline is an outcome, answered as the payment; the others are errors (retryable or not).
    if (error.kind === 'declined') return saved;
    throw connectorApiError(error);
  },

  present: (payment) => toPaymentResource(payment, { withAction: true }),
});
