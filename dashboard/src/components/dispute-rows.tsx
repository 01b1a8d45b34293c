import type { Schemas } from '../client.ts';
import { formatMoney } from '../money.ts';
import { FINAL_DISPUTE_STATUSES } from '../vocabulary.ts';
import { StatusBadge } from './status-badge.tsx';
import { Countdown, Time } from './time.tsx';

type Dispute = Schemas['Dispute'];

/** A payment's disputes (also the Disputes page's rows), with the evidence due date counting down. */
export function DisputeRows({
  disputes,
  helper,
  showPayment = false,
}: {
  disputes: Dispute[];
  helper?: ((dispute: Dispute, outcome: 'won' | 'lost') => void) | undefined;
  showPayment?: boolean;
}) {
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">Dispute</th>
          {showPayment && <th scope="col">Payment</th>}
          <th scope="col" class="num">
            Amount
          </th>
          <th scope="col">Status</th>
          <th scope="col">Reason</th>
          <th scope="col">Evidence due</th>
          <th scope="col">Opened</th>
          {helper && <th scope="col">Test helpers</th>}
        </tr>
      </thead>
      <tbody>
        {disputes.map((dispute) => {
          const open = !FINAL_DISPUTE_STATUSES.includes(dispute.status);
          return (
            <tr key={dispute.id}>
              <td>
                <code>{dispute.id}</code>
              </td>
              {showPayment && (
                <td>
                  <a href={`/dashboard/payments/${dispute.payment_id}`} class="mono">
                    {dispute.payment_id}
                  </a>
                </td>
              )}
              <td class="num">{formatMoney(dispute.amount)}</td>
              <td>
                <StatusBadge status={dispute.status} />
              </td>
              <td>{dispute.reason.replaceAll('_', ' ')}</td>
              <td>{open ? <Countdown iso={dispute.evidence_due_by} /> : <Time iso={dispute.evidence_due_by} />}</td>
              <td>
                <Time iso={dispute.created_at} />
              </td>
              {helper && (
                <td>
                  {open &&
                    (['won', 'lost'] as const).map((outcome) => (
                      <button type="button" key={outcome} onClick={() => helper(dispute, outcome)}>
                        Close as {outcome}
                        <span class="visually-hidden"> {dispute.id}</span> (test)
                      </button>
                    ))}
                </td>
              )}
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
