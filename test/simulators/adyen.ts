import { fromTerminalAmount, hmacPayload, hmacSignature } from '../../src/connectors/adyen/transformers.ts';
import { assertSpec, webhookSchemaOf } from './adyen-spec.ts';

/**
 * A local stand-in for Adyen, written from its OpenAPI descriptions (specs/adyen): Checkout v72 (`POST /payments`
 * for QR methods, `/payments/{psp}/refunds`, `/cancels`, `/reversals`, the `Idempotency-Key` replay, `ServiceError`
 * bodies), the Cloud device API (`/devices/{id}/status`, `/async`, `/sync`) carrying Terminal API messages
 * (PaymentRequest, TransactionStatusRequest, AbortRequest), and standard webhooks signed with HMAC-SHA256.
 * Every request it receives and every body it gives is validated against the schema of its operation
 * (`assertSpec`): a request the connector built away from the spec fails the test that sent it.
 *
 * Amounts drive outcomes like the sandbox (docs/sandbox.md), by the last two digits of our minor units:
 * POS 51 → refused at the terminal (Failure/Refusal); 52 → the first request of a payment is processed but its
 * answer lost (a TimeoutError); 53 → the first request answers 503 and does nothing; 54 → Failure/UnavailableService.
 * QR 51 is pending like any other, declined later by `settleQr`. A refund ending 61 is refused (REFUND success
 * false). Modifications are answered `received`; their webhooks are queued in `deliveries` for the test to send.
 *
 * Terminals complete a payment at once unless `terminalMode` is `manual` (the payment waits, InProgress, until
 * `customerPays` or an AbortRequest); `offlineTerminals` have no cloud connection; `busyTerminals` are doing something
 * else and refuse every PaymentRequest at once (Failure/Busy, its PaymentResponse as TransactionStatus repeats it);
 * `faults.terminalError` makes the terminal answer that ErrorCondition (a late AUTHORISATION can follow:
 * `authorisePos`), `faults.statusError` makes a TransactionStatusRequest itself fail with one. Each completed terminal
 * payment also queues its unsigned event notification (`terminalEvents`).
 */

export const ADYEN_CHECKOUT_ORIGIN = 'https://checkout-test.adyen.com';
export const ADYEN_DEVICE_ORIGIN = 'https://device-api-test.adyen.com';

export interface SignedWebhook {
  rawBody: string;
  headers: Record<string, string>;
  item: Record<string, unknown>;
}

interface TerminalPayment {
  transactionId: string;
  timeStamp: string;
  serviceId: string;
  saleId: string;
  poiid: string;
  currency: string;
  amount: number;
  minor: number;
  psp: string;
  state: 'in_progress' | 'done';
  result: { Result: 'Success' | 'Failure'; ErrorCondition?: string };
  /** No longer reported by the terminal (`forgetTerminalTransactions`). */
  forgotten?: boolean;
}

interface CheckoutPayment {
  psp: string;
  reference: string;
  amount: { currency: string; value: number };
  method: string;
  status: 'pending' | 'authorised' | 'refused' | 'cancelled';
}

const alnum = () =>
  Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789'[b % 32])
    .join('')
    .slice(0, 16);

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

export class AdyenSimulator {
  readonly apiKey = `AQE${alnum()}${alnum()}`;
  readonly merchantAccount = 'PaymentServiceECOM';
  readonly hmacKey = Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, '0'))
    .join('')
    .toUpperCase();
  terminalMode: 'auto' | 'manual' = 'auto';
  readonly offlineTerminals = new Set<string>();
  readonly busyTerminals = new Set<string>();
  readonly terminals = new Set<string>();
  /**
   * `terminalError`: the terminal answers a PaymentRequest with this ErrorCondition; `statusError`: it answers a
   * TransactionStatusRequest with this one; `syncFailsOnce`: the next `/sync` answers 500.
   */
  faults: { terminalError?: string; statusError?: string; syncFailsOnce?: boolean } = {};
  /** `on_demand`: an AbortRequest reaches the terminal only at `landAborts` (the customer may pay first). */
  abortsLand: 'at_once' | 'on_demand' = 'at_once';
  private readonly pendingAborts: string[] = [];
  /** Standard webhooks produced, oldest first: the test sends them to the notification route. */
  readonly deliveries: SignedWebhook[] = [];
  /** Terminal API event notifications (unsigned), oldest first. */
  readonly terminalEvents: string[] = [];
  /** Every Checkout request and Terminal API message received, in order (path and parsed body). */
  readonly requests: { path: string; body: unknown }[] = [];

  private readonly terminalPayments = new Map<string, TerminalPayment>();
  private readonly checkoutPayments = new Map<string, CheckoutPayment>();
  private readonly refunds = new Map<
    string,
    { payment: string; amount: { currency: string; value: number }; reference: string }
  >();
  private readonly idempotent = new Map<string, { status: number; body: unknown }>();
  private readonly seenKeys = new Set<string>();

  addTerminal(poiid: string) {
    this.terminals.add(poiid);
  }

  terminalPaymentCount(transactionId: string): number {
    return [...this.terminalPayments.values()].filter((p) => p.transactionId === transactionId).length;
  }

  /** The outcomes the terminal gave a payment's PaymentRequests, in the order they were sent (`Failure/Busy`, ...). */
  terminalResults(transactionId: string): string[] {
    return [...this.terminalPayments.values()]
      .filter((p) => p.transactionId === transactionId)
      .map((p) => [p.result.Result, p.result.ErrorCondition].filter(Boolean).join('/'));
  }

  fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (request.headers.get('x-api-key') !== this.apiKey)
      return json(401, {
        status: 401,
        errorCode: '000',
        message: 'HTTP Status Response - Unauthorized',
        errorType: 'security',
      });
    const text = request.method === 'POST' ? await request.text() : '';
    const body = text ? JSON.parse(text) : undefined;
    this.requests.push({ path: url.pathname, body });
    if (url.origin === ADYEN_CHECKOUT_ORIGIN)
      return this.checkout(url.pathname, body, request.headers.get('idempotency-key'));
    if (url.origin === ADYEN_DEVICE_ORIGIN) return this.cloudDevice(request.method, url.pathname, body);
    return json(404, { status: 404, errorCode: '000', message: 'Not found', errorType: 'validation' });
  };

  // -------------------------------------------------------------------------------------------------------
  // Checkout

  private async checkout(path: string, body: unknown, key: string | null): Promise<Response> {
    const replay = key ? this.idempotent.get(key) : undefined;
    if (replay) return json(replay.status, replay.body);
    const answer = this.checkoutAnswer(path, body);
    if (answer.status < 300) assertSpec('checkout', answer.schema, answer.body);
    else assertSpec('checkout', 'ServiceError', answer.body);
    if (key && answer.status < 500) this.idempotent.set(key, { status: answer.status, body: answer.body });
    const minor = (body as { amount?: { value?: number } } | undefined)?.amount?.value;
    if (typeof minor === 'number' && key && !this.seenKeys.has(key)) {
      this.seenKeys.add(key);
      if (minor % 100 === 52) throw new DOMException('The operation timed out.', 'TimeoutError');
    }
    return json(answer.status, answer.body);
  }

  private checkoutAnswer(path: string, body: unknown): { status: number; schema: string; body: unknown } {
    if (path === '/v72/payments') {
      assertSpec('checkout', 'PaymentRequest', body);
      const request = body as {
        amount: { currency: string; value: number };
        reference: string;
        paymentMethod: { type: string };
      };
      const payment: CheckoutPayment = {
        psp: alnum(),
        reference: request.reference,
        amount: request.amount,
        method: request.paymentMethod.type,
        status: 'pending',
      };
      this.checkoutPayments.set(payment.psp, payment);
      return {
        status: 200,
        schema: 'PaymentResponse',
        body: {
          pspReference: payment.psp,
          resultCode: 'Pending',
          merchantReference: request.reference,
          action: {
            type: 'qrCode',
            paymentMethodType: request.paymentMethod.type,
            qrCodeData: `00020101021226${payment.psp}5204000053039865802BR6304ABCD`,
            expiresAt: new Date(Date.now() + 15 * 60_000).toISOString(),
          },
        },
      };
    }
    const match = /^\/v72\/payments\/([A-Za-z0-9]+)\/(refunds|cancels|reversals)$/.exec(path);
    if (!match)
      return {
        status: 404,
        schema: 'ServiceError',
        body: { status: 404, errorCode: '000', message: 'Not found', errorType: 'validation' },
      };
    const [, psp, modification] = match as unknown as [string, string, 'refunds' | 'cancels' | 'reversals'];
    const schema = {
      refunds: 'PaymentRefundRequest',
      cancels: 'PaymentCancelRequest',
      reversals: 'PaymentReversalRequest',
    }[modification];
    assertSpec('checkout', schema, body);
    const request = body as { amount?: { currency: string; value: number }; reference?: string };
    const target = this.checkoutPayments.get(psp) ?? this.terminalPaymentByPsp(psp);
    if (!target)
      return {
        status: 422,
        schema: 'ServiceError',
        body: {
          status: 422,
          errorCode: '167',
          message: 'Original pspReference required for this operation',
          errorType: 'validation',
        },
      };
    const modificationPsp = alnum();
    const common = {
      merchantAccount: this.merchantAccount,
      paymentPspReference: psp,
      pspReference: modificationPsp,
      status: 'received' as const,
    };
    const original = { psp, reference: target.reference, amount: target.amount };
    if (modification === 'refunds') {
      this.refunds.set(modificationPsp, { payment: psp, amount: request.amount!, reference: request.reference ?? '' });
      const refused = request.amount!.value % 100 === 61;
      void this.queue(
        'REFUND',
        { ...original, pspReference: modificationPsp, amount: request.amount! },
        !refused,
        refused ? 'Refund Refused' : undefined,
      );
      return {
        status: 201,
        schema: 'PaymentRefundResponse',
        body: { ...common, amount: request.amount!, reference: request.reference },
      };
    }
    if (modification === 'cancels') {
      const cancelable = 'status' in target ? target.status === 'pending' : false;
      if (cancelable) (target as CheckoutPayment).status = 'cancelled';
      void this.queue('CANCELLATION', { ...original, pspReference: modificationPsp }, cancelable);
      return { status: 201, schema: 'PaymentCancelResponse', body: { ...common, reference: request.reference } };
    }
    void this.queue('CANCEL_OR_REFUND', { ...original, pspReference: modificationPsp }, true);
    return { status: 201, schema: 'PaymentReversalResponse', body: { ...common, reference: request.reference } };
  }

  private terminalPaymentByPsp(psp: string) {
    const payment = [...this.terminalPayments.values()].find((p) => p.psp === psp && p.result.Result === 'Success');
    return payment
      ? { reference: payment.transactionId, amount: { currency: payment.currency, value: payment.minor } }
      : undefined;
  }

  /** The buyer scanned and paid (AUTHORISATION success) or the bank declined (success false). */
  async settleQr(psp: string, outcome: 'paid' | 'declined'): Promise<SignedWebhook> {
    const payment = this.checkoutPayments.get(psp)!;
    payment.status = outcome === 'paid' ? 'authorised' : 'refused';
    return this.queue(
      'AUTHORISATION',
      { psp, reference: payment.reference, amount: payment.amount },
      outcome === 'paid',
      outcome === 'paid' ? undefined : 'Refused',
    );
  }

  /**
   * A payment event of a QR payment: `OFFER_CLOSED` (Adyen closed the offer of a QR nobody paid, "The offer
   * expired"), `PENDING`, or any other.
   */
  async paymentEvent(psp: string, eventCode: string, success = true): Promise<SignedWebhook> {
    const payment = this.checkoutPayments.get(psp)!;
    return this.queue(eventCode, { psp, reference: payment.reference, amount: payment.amount }, success);
  }

  /** A refund that succeeded fails later: REFUND_FAILED (a scheme rejected it) or REFUNDED_REVERSED. */
  async failRefund(refundPsp: string, eventCode: 'REFUND_FAILED' | 'REFUNDED_REVERSED'): Promise<SignedWebhook> {
    const refund = this.refunds.get(refundPsp)!;
    return this.queue(
      eventCode,
      { psp: refund.payment, pspReference: refundPsp, reference: refund.reference, amount: refund.amount },
      true,
    );
  }

  /** A dispute webhook of a payment (its pspReference), with the reason code and defence deadline Adyen adds. */
  async disputeEvent(
    paymentPsp: string,
    eventCode: string,
    options: { reasonCode?: string } = {},
  ): Promise<SignedWebhook> {
    const target = this.checkoutPayments.get(paymentPsp) ?? this.terminalPaymentByPsp(paymentPsp);
    if (!target) throw new Error(`no payment ${paymentPsp}`);
    return this.queue(
      eventCode,
      { psp: paymentPsp, pspReference: alnum(), reference: target.reference, amount: target.amount },
      true,
      undefined,
      {
        chargebackReasonCode: options.reasonCode ?? '10.4',
        chargebackSchemeCode: 'visa',
        defensePeriodEndsAt: new Date(Date.now() + 14 * 86_400_000).toISOString(),
        disputeStatus: 'Unresponded',
      },
    );
  }

  /**
   * The terminals no longer report their transactions (Adyen, "Verify transaction status": a ServiceID is unique
   * within the last 48 hours, and the terminal reports its recent transactions only): TransactionStatus answers
   * NotFound for every earlier payment, while Checkout still knows them by their PSP reference.
   */
  forgetTerminalTransactions() {
    for (const payment of this.terminalPayments.values()) payment.forgotten = true;
  }

  /** The PSP reference of a terminal payment (known to Adyen once the terminal processed it). */
  pspOfTerminalPayment(transactionId: string): string {
    return [...this.terminalPayments.values()].find((p) => p.transactionId === transactionId)!.psp;
  }

  /** A late AUTHORISATION of a terminal payment (after the terminal reported an error), as Adyen sends it. */
  async authorisePos(transactionId: string): Promise<SignedWebhook> {
    const payment = [...this.terminalPayments.values()].find((p) => p.transactionId === transactionId)!;
    payment.result = { Result: 'Success' };
    return this.queue(
      'AUTHORISATION',
      { psp: payment.psp, reference: transactionId, amount: { currency: payment.currency, value: payment.minor } },
      true,
    );
  }

  private async queue(
    eventCode: string,
    target: { psp: string; pspReference?: string; reference: string; amount: { currency: string; value: number } },
    success: boolean,
    reason?: string,
    additionalData: Record<string, string> = {},
  ): Promise<SignedWebhook> {
    const modification = target.pspReference !== undefined;
    const item: Record<string, unknown> = {
      pspReference: modification ? target.pspReference : target.psp,
      ...(modification ? { originalReference: target.psp } : {}),
      merchantAccountCode: this.merchantAccount,
      merchantReference: target.reference,
      amount: target.amount,
      eventCode,
      eventDate: new Date().toISOString().replace(/\.\d+Z$/, '+00:00'),
      success: success ? 'true' : 'false',
      paymentMethod: 'visa',
      ...(reason ? { reason } : {}),
    };
    item.additionalData = {
      ...additionalData,
      hmacSignature: await hmacSignature(this.hmacKey, hmacPayload(item as never)),
    };
    const body = { live: 'false', notificationItems: [{ NotificationRequestItem: item }] };
    const schema = webhookSchemaOf(eventCode);
    // The generic `NotificationAdditionalData` (additionalProperties: false) lacks `hmacSignature`, which every
    // signed webhook carries (the specific schemas have it): the generic ones are checked without it.
    const { hmacSignature: _signature, ...unsigned } = item.additionalData as Record<string, string>;
    const checked =
      schema === 'NotificationRequest'
        ? { ...body, notificationItems: [{ NotificationRequestItem: { ...item, additionalData: unsigned } }] }
        : body;
    assertSpec('webhooks', schema, checked);
    const delivery = { rawBody: JSON.stringify(body), headers: { 'Content-Type': 'application/json' }, item };
    this.deliveries.push(delivery);
    return delivery;
  }

  /** The last webhook queued for a payment or modification (by any of its references). */
  lastDelivery(eventCode: string): SignedWebhook {
    const found = [...this.deliveries].reverse().find((d) => d.item.eventCode === eventCode);
    if (!found) throw new Error(`no ${eventCode} webhook was queued`);
    return found;
  }

  // -------------------------------------------------------------------------------------------------------
  // Cloud device API and the Terminal API

  private cloudDevice(method: string, path: string, body: unknown): Response {
    const match = /^\/v1\/merchants\/([^/]+)\/devices\/([^/]+)\/(status|async|sync)$/.exec(path);
    if (!match || decodeURIComponent(match[1]!) !== this.merchantAccount)
      return json(404, {
        type: 'https://docs.adyen.com/errors/not-found',
        title: 'Not found',
        status: 404,
        errorCode: '00_404',
      });
    const poiid = decodeURIComponent(match[2]!);
    const endpoint = match[3]!;
    if (endpoint === 'status' && method === 'GET') {
      const answer = {
        deviceId: poiid,
        status: this.offlineTerminals.has(poiid) || !this.terminals.has(poiid) ? 'OFFLINE' : 'ONLINE',
      };
      assertSpec('cloudDevice', 'DeviceStatusResponse', answer);
      return json(200, answer);
    }
    assertSpec('terminal', 'TerminalAPIRequest', body);
    const message = (body as { SaleToPOIRequest: Record<string, any> }).SaleToPOIRequest;
    if (message.MessageHeader.POIID !== poiid) throw new Error('POIID of the path and of the MessageHeader differ');
    if (endpoint === 'async') return this.asyncMessage(poiid, message);
    if (this.faults.syncFailsOnce) {
      this.faults.syncFailsOnce = false;
      return json(500, {
        type: 'https://docs.adyen.com/errors/general',
        title: 'Internal error',
        status: 500,
        errorCode: '00_500',
      });
    }
    const answer = this.transactionStatus(poiid, message);
    assertSpec('terminal', 'TerminalAPIResponse', answer);
    return json(200, answer);
  }

  private asyncMessage(poiid: string, message: Record<string, any>): Response {
    if (this.offlineTerminals.has(poiid))
      return json(404, {
        type: 'https://docs.adyen.com/errors/not-found',
        title: 'Device not connected',
        status: 404,
        errorCode: '00_404',
      });
    const header = message.MessageHeader;
    if (message.PaymentRequest) {
      const request = message.PaymentRequest;
      const currency = request.PaymentTransaction.AmountsReq.Currency as string;
      const amount = request.PaymentTransaction.AmountsReq.RequestedAmount as number;
      const minor = fromTerminalAmount(amount, currency)!.minor;
      const key = `${header.SaleID}/${header.ServiceID}`;
      if (!this.seenKeys.has(key)) {
        this.seenKeys.add(key);
        if (minor % 100 === 53)
          return json(503, {
            type: 'https://docs.adyen.com/errors/general',
            title: 'Service unavailable',
            status: 503,
            errorCode: '00_500',
          });
      }
      if (this.terminalPayments.has(key)) throw new Error(`ServiceID ${header.ServiceID} sent twice for one payment`);
      const payment: TerminalPayment = {
        transactionId: request.SaleData.SaleTransactionID.TransactionID,
        timeStamp: request.SaleData.SaleTransactionID.TimeStamp,
        serviceId: header.ServiceID,
        saleId: header.SaleID,
        poiid,
        currency,
        amount,
        minor,
        psp: alnum(),
        state: 'in_progress',
        result: { Result: 'Failure', ErrorCondition: 'InProgress' },
      };
      this.terminalPayments.set(key, payment);
      if (this.busyTerminals.has(poiid)) this.complete(payment, { Result: 'Failure', ErrorCondition: 'Busy' });
      else if (this.faults.terminalError)
        this.complete(payment, { Result: 'Failure', ErrorCondition: this.faults.terminalError });
      else if (minor % 100 === 51) this.complete(payment, { Result: 'Failure', ErrorCondition: 'Refusal' });
      else if (minor % 100 === 54) this.complete(payment, { Result: 'Failure', ErrorCondition: 'UnavailableService' });
      else if (this.terminalMode === 'auto') this.complete(payment, { Result: 'Success' });
      if (minor % 100 === 52 && !this.seenKeys.has(`${key}:answered`)) {
        this.seenKeys.add(`${key}:answered`);
        throw new DOMException('The operation timed out.', 'TimeoutError');
      }
      return json(200, 'ok');
    }
    if (message.AbortRequest) {
      const reference = message.AbortRequest.MessageReference;
      this.pendingAborts.push(`${reference.SaleID}/${reference.ServiceID}`);
      if (this.abortsLand === 'at_once') this.landAborts();
      return json(200, 'ok');
    }
    throw new Error('the simulator answers PaymentRequest and AbortRequest only on /async');
  }

  /** The AbortRequests sent reach their terminal: a payment still waiting there is aborted. */
  landAborts() {
    for (const key of this.pendingAborts.splice(0)) {
      const payment = this.terminalPayments.get(key);
      if (payment?.state === 'in_progress') this.complete(payment, { Result: 'Failure', ErrorCondition: 'Aborted' });
    }
  }

  /** The customer presented a card at the terminal: the waiting payment is approved. */
  customerPays(transactionId: string) {
    const payment = [...this.terminalPayments.values()].find(
      (p) => p.transactionId === transactionId && p.state === 'in_progress',
    );
    if (payment) this.complete(payment, { Result: 'Success' });
  }

  private complete(payment: TerminalPayment, result: TerminalPayment['result']) {
    payment.state = 'done';
    payment.result = result;
    const event = {
      SaleToPOIResponse: {
        MessageHeader: this.responseHeader(payment, 'Payment'),
        PaymentResponse: this.paymentResponse(payment),
      },
    };
    assertSpec('terminal', 'TerminalAPIResponse', event);
    this.terminalEvents.push(JSON.stringify(event));
  }

  private responseHeader(payment: TerminalPayment, category: string, serviceId = payment.serviceId) {
    return {
      ProtocolVersion: '3.0',
      MessageClass: 'Service',
      MessageCategory: category,
      MessageType: 'Response',
      ServiceID: serviceId,
      SaleID: payment.saleId,
      POIID: payment.poiid,
    };
  }

  private paymentResponse(payment: TerminalPayment) {
    const success = payment.result.Result === 'Success';
    return {
      Response: {
        ...payment.result,
        ...(success ? { AdditionalResponse: `pspReference=${payment.psp}&tid=47069832` } : {}),
      },
      SaleData: { SaleTransactionID: { TransactionID: payment.transactionId, TimeStamp: payment.timeStamp } },
      POIData: {
        POITransactionID: { TransactionID: `${alnum().slice(0, 12)}.${payment.psp}`, TimeStamp: payment.timeStamp },
      },
      ...(success
        ? { PaymentResult: { AmountsResp: { Currency: payment.currency, AuthorizedAmount: payment.amount } } }
        : {}),
    };
  }

  private transactionStatus(poiid: string, message: Record<string, any>) {
    if (!message.TransactionStatusRequest)
      throw new Error('the simulator answers TransactionStatusRequest only on /sync');
    const header = { ...message.MessageHeader, MessageType: 'Response' };
    if (this.offlineTerminals.has(poiid))
      return {
        SaleToPOIResponse: {
          MessageHeader: header,
          TransactionStatusResponse: { Response: { Result: 'Failure', ErrorCondition: 'DeviceOut' } },
        },
      };
    const reference = message.TransactionStatusRequest.MessageReference;
    const payment = this.terminalPayments.get(`${reference.SaleID}/${reference.ServiceID}`);
    const failure = (condition: string) => ({
      SaleToPOIResponse: {
        MessageHeader: header,
        TransactionStatusResponse: { Response: { Result: 'Failure', ErrorCondition: condition } },
      },
    });
    if (this.faults.statusError) return failure(this.faults.statusError);
    if (!payment || payment.forgotten) return failure('NotFound');
    if (payment.state === 'in_progress') return failure('InProgress');
    return {
      SaleToPOIResponse: {
        MessageHeader: header,
        TransactionStatusResponse: {
          Response: { Result: 'Success' },
          MessageReference: {
            MessageCategory: 'Payment',
            ServiceID: payment.serviceId,
            SaleID: payment.saleId,
            POIID: poiid,
          },
          RepeatedMessageResponse: {
            MessageHeader: this.responseHeader(payment, 'Payment'),
            RepeatedResponseMessageBody: { PaymentResponse: this.paymentResponse(payment) },
          },
        },
      },
    };
  }
}
