import { useEffect, useRef, useState } from 'preact/hooks';
import { ask, client, newIdempotencyKey, useAction, useLoad } from '../api.ts';
import type { Schemas } from '../client.ts';
import { FormDialog } from '../components/dialog.tsx';
import { DisputeRows } from '../components/dispute-rows.tsx';
import { Hinted } from '../components/hinted.tsx';
import { LoadState } from '../components/load-state.tsx';
import { PageTitle } from '../components/page-title.tsx';
import { ProblemNotice } from '../components/problem-notice.tsx';
import { TerminalStatus } from '../components/terminal-status.tsx';
import { QrCode } from '../components/qr-code.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { Countdown, Time, viewerTimeZone } from '../components/time.tsx';
import { digitsOf, formatMoney, fromMinor, refundableBalance, toMinor } from '../money.ts';
import type { Answer } from '../problem.ts';
import { readSession } from '../session.ts';
import { walkList } from '../walk-list.ts';

type Payment = Schemas['Payment'];
type Refund = Schemas['Refund'];
type PaymentEvent = Schemas['PaymentEvent'];

/** Statuses a refund or cancel may start from; the API has the last word (409 otherwise, shown as it says). */
const REFUNDABLE = new Set<Payment['status']>(['approved', 'partially_refunded']);
const CANCELABLE = new Set<Payment['status']>(['created', 'pending', 'processing', 'approved']);
/** While something is on its way (a delivery, a refund at the processor), the page reads again this often. */
const WATCH_EVERY_MS = 3000;
const WATCH_FOR_MS = 120_000;

/** Every reason the API declares (a new one fails the typecheck until it has its text here). */
const SETTLEMENT_NULL: Record<NonNullable<Payment['settlement_null_reason']>, string> = {
  not_collected: 'No money moved.',
  pending_at_processor: 'The processor has not booked it yet; it is read again later.',
  not_reported: 'This processor reports no fee for it.',
  unrepresentable_amount:
    'The processor reported it in a form no amount here can show (a currency without a minor unit, or a fraction of one).',
};

const ACTION_TEXT: Record<string, string> = {
  at_terminal: 'Handed to the terminal: waiting for the customer to present a card.',
  check_terminal:
    'The terminal could not settle the payment: check its activity for whether the card was charged. The payment stays pending until the processor reports the outcome.',
};

function Settlement({ of }: { of: Payment | Refund }) {
  if (!of.settlement) {
    const reason = of.settlement_null_reason;
    return <p>{(reason && SETTLEMENT_NULL[reason]) ?? 'Not booked.'}</p>;
  }
  return (
    <dl class="fields">
      <dt>Fee</dt>
      <dd>{formatMoney(of.settlement.fee)}</dd>
      <dt>Net</dt>
      <dd>{formatMoney(of.settlement.net)}</dd>
      <dt>Available on</dt>
      <dd>
        <Time iso={of.settlement.available_on} />
      </dd>
    </dl>
  );
}

/** POST /v1/payments/{id}/refunds, the amount prefilled with the refundable balance, one key per dialog. */
function RefundDialog({
  payment,
  refunds,
  onClose,
  onDone,
  onEarlierAttempt,
}: {
  payment: Payment;
  refunds: Refund[];
  onClose: () => void;
  onDone: (message: string) => void;
  /** The API refused this dialog's key as used with other values: a refund already went through. */
  onEarlierAttempt: () => void;
}) {
  const digits = digitsOf(payment.amount.value);
  const balance = refundableBalance(payment.amount, refunds);
  const latest = refunds.reduce<Refund | undefined>(
    (newest, refund) => (!newest || refund.created_at > newest.created_at ? refund : newest),
    undefined,
  );
  const [amount, setAmount] = useState(balance);
  const [reason, setReason] = useState('');
  const [invalid, setInvalid] = useState('');
  const [earlier, setEarlier] = useState(false);
  // One logical attempt per dialog: a double click or a Retry sends this same key. A definite refusal
  // (not retryable: nothing was refunded) makes the next submit a new attempt.
  const key = useRef(newIdempotencyKey());
  const refund = useAction(
    (body: Schemas['CreateRefundRequest']) =>
      ask(
        client.POST('/v1/payments/{payment_id}/refunds', {
          params: { path: { payment_id: payment.id }, header: { 'idempotency-key': key.current } },
          body,
        }),
      ),
    ({ data }) => onDone(`Refund ${data.id} of ${formatMoney(data.amount)}: ${data.status.replaceAll('_', ' ')}.`),
    (problem) => {
      if (problem.retryable) return;
      // Refused for good, nothing refunded: the next submit is a new attempt. But `idempotency_key_reused` is
      // the one refusal that says an earlier send of this key went through (its answer was lost, then the
      // amount was edited): the payment is read again so the refund it made shows before any other is sent.
      if (problem.code === 'idempotency_key_reused') {
        setEarlier(true);
        onEarlierAttempt();
      }
      key.current = newIdempotencyKey();
    },
  );
  const submit = () => {
    const minor = toMinor(amount, digits);
    if (minor === null || minor <= 0n) {
      setInvalid(`Enter an amount above zero with at most ${digits} decimals, such as ${balance}.`);
      return;
    }
    setInvalid('');
    const body: Schemas['CreateRefundRequest'] = {
      amount: { value: fromMinor(minor, digits), currency: payment.amount.currency },
    };
    if (reason.trim()) body.reason = reason.trim();
    void refund.run(body);
  };
  return (
    <FormDialog title="Refund payment" submit="Refund" action={refund} onSubmit={submit} onClose={onClose}>
      {earlier && (
        <p class="notice" role="status">
          An earlier attempt from this dialog reached the service with other values (its answer was lost), so the
          payment was read again.
          {latest && (
            <>
              {' '}
              Its latest refund: {formatMoney(latest.amount)}, {latest.status.replaceAll('_', ' ')}.
            </>
          )}{' '}
          Refund again only to refund more.
        </p>
      )}
      <p>
        Refundable: <strong>{formatMoney({ value: balance, currency: payment.amount.currency })}</strong>
      </p>
      <Hinted label={`Amount (${payment.amount.currency})`} hint={invalid || `At most ${balance}.`}>
        {(control) => (
          <input
            {...control}
            name="amount"
            inputMode="decimal"
            value={amount}
            aria-invalid={invalid ? 'true' : undefined}
            onInput={(e) => setAmount(e.currentTarget.value)}
          />
        )}
      </Hinted>
      <label>
        Reason (optional)
        <input name="reason" maxLength={500} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
      </label>
    </FormDialog>
  );
}

/** POST /v1/payments/{id}/cancel: 200 is canceled, 202 is a cancel the processor completes later. */
function CancelDialog({
  payment,
  onClose,
  onDone,
}: {
  payment: Payment;
  onClose: () => void;
  onDone: (message: string) => void;
}) {
  const key = useRef(newIdempotencyKey());
  const cancel = useAction(
    () =>
      ask(
        client.POST('/v1/payments/{payment_id}/cancel', {
          params: { path: { payment_id: payment.id }, header: { 'idempotency-key': key.current } },
        }),
      ),
    (_, status) =>
      onDone(
        status === 202
          ? 'Cancel requested: the processor completes it later; the payment keeps its status until then.'
          : 'Canceled.',
      ),
    (problem) => {
      if (!problem.retryable) key.current = newIdempotencyKey();
    },
  );
  return (
    <FormDialog
      title="Cancel payment"
      submit="Cancel payment"
      action={cancel}
      onSubmit={() => void cancel.run()}
      onClose={onClose}
      danger
    >
      <p>
        Cancel {formatMoney(payment.amount)} ({payment.external_reference})? An approved payment is voided at the
        processor.
      </p>
    </FormDialog>
  );
}

function destinationOf(delivery: NonNullable<PaymentEvent['deliveries']>[number]): string {
  return delivery.destination.type === 'payment_url'
    ? "the payment's webhook_url"
    : `endpoint ${delivery.destination.endpoint_id}`;
}

/** A payment's events, each with its deliveries' attempts, and Redeliver. */
function Timeline({
  paymentId,
  events,
  onRedelivered,
}: {
  paymentId: string;
  events: PaymentEvent[];
  onRedelivered: (message: string) => void;
}) {
  const redeliver = useAction(
    (eventId: string) =>
      ask(
        client.POST('/v1/payments/{payment_id}/events/{event_id}/redeliver', {
          params: { path: { payment_id: paymentId, event_id: eventId } },
        }),
      ),
    ({ data }) => onRedelivered(`Redelivery of ${data.type} queued.`),
  );
  if (events.length === 0) return <p>No events yet.</p>;
  return (
    <>
      {redeliver.problem && <ProblemNotice problem={redeliver.problem} onRetry={redeliver.retry} />}
      <ol class="timeline" aria-label="Events, newest first">
        {events.map((event) => (
          <li key={event.id}>
            <h3>{event.type}</h3>
            <p>
              <Time iso={event.created_at} /> · <code>{event.id}</code>
            </p>
            {(event.deliveries ?? []).length === 0 && (
              <p class="hint">Not delivered: the payment has no webhook_url and no endpoint was subscribed.</p>
            )}
            {(event.deliveries ?? []).map((delivery) => (
              <div class="delivery" key={`${delivery.destination.type}-${delivery.destination.endpoint_id}`}>
                <p>
                  Delivery to {destinationOf(delivery)} (<code>{delivery.url}</code>):{' '}
                  <StatusBadge status={delivery.status} />, {delivery.attempts}{' '}
                  {delivery.attempts === 1 ? 'attempt' : 'attempts'}
                  {delivery.next_attempt_at && (
                    <>
                      , next attempt <Time iso={delivery.next_attempt_at} />
                    </>
                  )}
                  {delivery.last_error && (
                    <>
                      , last error <code>{delivery.last_error}</code>
                    </>
                  )}
                </p>
                {delivery.attempt_log.length > 0 && (
                  <table>
                    <caption class="visually-hidden">
                      Attempts of {event.type} to {destinationOf(delivery)}
                    </caption>
                    <thead>
                      <tr>
                        <th scope="col">Attempt</th>
                        <th scope="col">Status code</th>
                        <th scope="col">Error</th>
                        <th scope="col" class="num">
                          Latency
                        </th>
                        <th scope="col">Time</th>
                      </tr>
                    </thead>
                    <tbody>
                      {delivery.attempt_log.map((attempt) => (
                        <tr key={attempt.attempt}>
                          <td>{attempt.attempt}</td>
                          <td>{attempt.status_code ?? 'none'}</td>
                          <td>{attempt.error ?? ''}</td>
                          <td class="num">{attempt.latency_ms} ms</td>
                          <td>
                            <Time iso={attempt.attempted_at} />
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                )}
              </div>
            ))}
            {(event.deliveries ?? []).length > 0 && (
              <button type="button" disabled={redeliver.busy} onClick={() => void redeliver.run(event.id)}>
                Redeliver<span class="visually-hidden"> {event.type}</span>
              </button>
            )}
          </li>
        ))}
      </ol>
    </>
  );
}

type HelperCall = () => Promise<Answer<unknown>>;

/** The `test` deployment's helpers (docs/sandbox.md): processor news, disputes and refund failures on demand. */
function useHelper(onDone: (message: string) => void) {
  return useAction(
    (call: HelperCall) => call(),
    () => onDone('Test helper applied.'),
  );
}

export function PaymentPage({ id }: { id: string }) {
  const test = readSession()?.environment === 'test';
  const path = { payment_id: id };
  const payment = useLoad(() => ask(client.GET('/v1/payments/{payment_id}', { params: { path } })), [id]);
  // Every refund, not a first page: the refund dialog's balance is the payment's amount less all of them.
  const refunds = useLoad(async (): Promise<Answer<{ data: Refund[] }>> => {
    const walked = await walkList((window) =>
      ask(client.GET('/v1/payments/{payment_id}/refunds', { params: { path, query: window } })),
    );
    return walked.problem ? { problem: walked.problem } : { data: { data: walked.items }, status: 200 };
  }, [id]);
  const disputes = useLoad(
    () => ask(client.GET('/v1/payments/{payment_id}/disputes', { params: { path, query: { limit: 100 } } })),
    [id],
  );
  const events = useLoad(
    () => ask(client.GET('/v1/payments/{payment_id}/events', { params: { path, query: { limit: 100 } } })),
    [id],
  );
  const methodId = payment.data?.data.payment_method;
  const method = useLoad(
    (): Promise<Answer<{ data: Schemas['AccountPaymentMethod'] } | null>> =>
      methodId
        ? ask(
            client.GET('/v1/account/payment-methods/{payment_method_id}', {
              params: { path: { payment_method_id: methodId } },
            }),
          )
        : Promise.resolve({ data: null, status: 0 }),
    [methodId],
  );
  const [dialog, setDialog] = useState<'refund' | 'cancel' | null>(null);
  const [notice, setNotice] = useState('');
  const [watchUntil, setWatchUntil] = useState(() => Date.now() + WATCH_FOR_MS);

  const reloadAll = () => {
    payment.reload();
    refunds.reload();
    disputes.reload();
    events.reload();
  };
  const changed = (message: string) => {
    setDialog(null);
    setNotice(message);
    setWatchUntil(Date.now() + WATCH_FOR_MS);
    reloadAll();
  };
  const underway =
    (events.data?.data ?? []).some((event) => (event.deliveries ?? []).some((d) => d.status === 'pending')) ||
    (refunds.data?.data ?? []).some((refund) => ['created', 'pending', 'processing'].includes(refund.status));
  // Read again after each answer while something is underway (a delivery, a refund at the processor).
  useEffect(() => {
    if (!underway || Date.now() > watchUntil) return;
    const timer = setTimeout(reloadAll, WATCH_EVERY_MS);
    return () => clearTimeout(timer);
  }, [events.data, refunds.data, watchUntil, underway]);

  const helper = useHelper(changed);
  const news = (action: 'approve' | 'decline' | 'expire' | 'fail' | 'charge_back') =>
    helper.run(() =>
      ask(
        client.POST('/v1/test-helpers/payments/{payment_id}/{action}', {
          params: { path: { payment_id: id, action } },
        }),
      ),
    );

  return (
    <>
      <PageTitle title={`Payment ${id}`} />
      <LoadState state={payment}>
        {({ data: p }) => (
          <>
            <p>
              <StatusBadge status={p.status} /> <strong>{formatMoney(p.amount)}</strong> · {p.external_reference}
              {p.cancel_requested_at && (
                <>
                  {' '}
                  · cancel requested <Time iso={p.cancel_requested_at} />
                </>
              )}
            </p>
            <div class="actions">
              {REFUNDABLE.has(p.status) && !p.charged_back_at && (
                <button type="button" class="primary" onClick={() => setDialog('refund')}>
                  Refund…
                </button>
              )}
              {CANCELABLE.has(p.status) && !p.cancel_requested_at && (
                <button type="button" class="danger" onClick={() => setDialog('cancel')}>
                  Cancel…
                </button>
              )}
              <button type="button" onClick={reloadAll}>
                Refresh
              </button>
            </div>
            {notice && (
              <p class="notice" role="status">
                {notice}
              </p>
            )}
            {dialog === 'refund' && refunds.data && (
              <RefundDialog
                payment={p}
                refunds={refunds.data.data}
                onClose={() => setDialog(null)}
                onDone={changed}
                onEarlierAttempt={reloadAll}
              />
            )}
            {dialog === 'cancel' && <CancelDialog payment={p} onClose={() => setDialog(null)} onDone={changed} />}

            <section class="card" aria-labelledby="fields-title">
              <h2 id="fields-title">Details</h2>
              <dl class="fields">
                <dt>ID</dt>
                <dd>
                  <code>{p.id}</code>
                </dd>
                <dt>Amount</dt>
                <dd>{formatMoney(p.amount)}</dd>
                <dt>External reference</dt>
                <dd>{p.external_reference}</dd>
                <dt>Payment method</dt>
                <dd>
                  {method.data?.data
                    ? `${method.data.data.name} (${method.data.data.type}, ${method.data.data.provider})`
                    : ''}{' '}
                  <code>{p.payment_method}</code>
                </dd>
                <dt>Processor reference</dt>
                <dd>{p.processor_reference ? <code>{p.processor_reference}</code> : 'none'}</dd>
                <dt>Description</dt>
                <dd>{p.description ?? 'none'}</dd>
                <dt>Metadata</dt>
                <dd>{p.metadata ? <code>{JSON.stringify(p.metadata)}</code> : 'none'}</dd>
                <dt>Webhook URL</dt>
                <dd>{p.webhook_url ? <code>{p.webhook_url}</code> : 'none'}</dd>
                <dt>Created</dt>
                <dd>
                  <Time iso={p.created_at} />
                </dd>
                <dt>Updated</dt>
                <dd>
                  <Time iso={p.updated_at} />
                </dd>
                {p.charged_back_at && (
                  <>
                    <dt>Charged back</dt>
                    <dd>
                      <Time iso={p.charged_back_at} />
                    </dd>
                  </>
                )}
              </dl>
              <p class="hint">Times in {viewerTimeZone}; hover a time for UTC.</p>
            </section>

            {p.action && p.action.type !== 'none' && (
              <section class="card" aria-labelledby="action-title">
                <h2 id="action-title">Waiting on</h2>
                {p.action.type === 'display_qr' && p.action.qr_data ? (
                  <div class="qr">
                    <QrCode data={p.action.qr_data} label={`QR code to pay ${formatMoney(p.amount)}`} />
                    <p>
                      Payable until <Countdown iso={p.action.expires_at ?? null} />
                    </p>
                  </div>
                ) : (
                  <p>{ACTION_TEXT[p.action.type] ?? p.action.type}</p>
                )}
              </section>
            )}

            <section class="card" aria-labelledby="settlement-title">
              <h2 id="settlement-title">Settlement</h2>
              <Settlement of={p} />
            </section>

            <section class="card" aria-labelledby="refunds-title">
              <h2 id="refunds-title">Refunds</h2>
              <LoadState state={refunds}>
                {({ data }) =>
                  data.length === 0 ? (
                    <p>No refunds.</p>
                  ) : (
                    <table>
                      <thead>
                        <tr>
                          <th scope="col">Refund</th>
                          <th scope="col" class="num">
                            Amount
                          </th>
                          <th scope="col">Status</th>
                          <th scope="col">Reason</th>
                          <th scope="col">Created</th>
                          {test && <th scope="col">Test helpers</th>}
                        </tr>
                      </thead>
                      <tbody>
                        {data.map((refund) => (
                          <tr key={refund.id}>
                            <td>
                              <code>{refund.id}</code>
                            </td>
                            <td class="num">{formatMoney(refund.amount)}</td>
                            <td>
                              <StatusBadge status={refund.status} />
                              {refund.failure_reason && ` (${refund.failure_reason.replaceAll('_', ' ')})`}
                            </td>
                            <td>{refund.reason ?? ''}</td>
                            <td>
                              <Time iso={refund.created_at} />
                            </td>
                            {test && (
                              <td>
                                {refund.status === 'approved' && (
                                  <button
                                    type="button"
                                    disabled={helper.busy}
                                    onClick={() =>
                                      void helper.run(() =>
                                        ask(
                                          client.POST('/v1/test-helpers/refunds/{refund_id}/fail', {
                                            params: { path: { refund_id: refund.id } },
                                            body: {},
                                          }),
                                        ),
                                      )
                                    }
                                  >
                                    Fail refund<span class="visually-hidden"> {refund.id}</span> (test)
                                  </button>
                                )}
                              </td>
                            )}
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  )
                }
              </LoadState>
            </section>

            <section class="card" aria-labelledby="disputes-title">
              <h2 id="disputes-title">Disputes</h2>
              <LoadState state={disputes}>
                {({ data }) =>
                  data.length === 0 ? (
                    <p>No disputes.</p>
                  ) : (
                    <DisputeRows
                      disputes={data}
                      helper={
                        test
                          ? (dispute, outcome) =>
                              void helper.run(() =>
                                ask(
                                  client.POST('/v1/test-helpers/disputes/{dispute_id}/close', {
                                    params: { path: { dispute_id: dispute.id } },
                                    body: { outcome },
                                  }),
                                ),
                              )
                          : undefined
                      }
                    />
                  )
                }
              </LoadState>
            </section>

            {test && (
              <section class="card" aria-labelledby="helpers-title">
                <h2 id="helpers-title">Test helpers</h2>
                <p class="hint">The sandbox processor's news, on demand (test deployment only).</p>
                <div class="actions">
                  {(['approve', 'decline', 'expire', 'fail', 'charge_back'] as const).map((action) => (
                    <button type="button" key={action} disabled={helper.busy} onClick={() => void news(action)}>
                      {action === 'charge_back' ? 'Charge back' : action[0]!.toUpperCase() + action.slice(1)} (test)
                    </button>
                  ))}
                  <button
                    type="button"
                    disabled={helper.busy}
                    onClick={() =>
                      void helper.run(() =>
                        ask(
                          client.POST('/v1/test-helpers/payments/{payment_id}/dispute', {
                            params: { path: { payment_id: id } },
                            body: {},
                          }),
                        ),
                      )
                    }
                  >
                    Open a dispute (test)
                  </button>
                </div>
                {helper.problem && <ProblemNotice problem={helper.problem} onRetry={helper.retry} />}
              </section>
            )}

            {method.data?.data.type === 'pos' && <TerminalStatus methodId={p.payment_method} test={test} />}

            <section class="card" aria-labelledby="timeline-title">
              <h2 id="timeline-title">Timeline</h2>
              <LoadState state={events}>
                {({ data }) => <Timeline paymentId={id} events={data} onRedelivered={changed} />}
              </LoadState>
            </section>
          </>
        )}
      </LoadState>
    </>
  );
}
