import type { Schemas } from './schemas.ts';

/**
 * The API's enumerations as lists for filters and forms. Each is written as a record over the generated
 * type, so the typecheck fails when the API adds or drops a value and this list does not follow.
 */
const keysOf = <K extends string>(record: Record<K, true>) => Object.keys(record) as K[];

export type PaymentStatus = Schemas['Payment']['status'];
export const PAYMENT_STATUSES = keysOf<PaymentStatus>({
  created: true,
  pending: true,
  processing: true,
  approved: true,
  declined: true,
  failed: true,
  expired: true,
  canceled: true,
  partially_refunded: true,
  refunded: true,
});

export type DisputeStatus = Schemas['Dispute']['status'];
export const DISPUTE_STATUSES = keysOf<DisputeStatus>({
  warning_needs_response: true,
  warning_under_review: true,
  warning_closed: true,
  needs_response: true,
  under_review: true,
  won: true,
  lost: true,
});
/** Disputes no longer waiting on anyone. */
export const FINAL_DISPUTE_STATUSES: readonly DisputeStatus[] = ['won', 'lost', 'warning_closed'];

export const SCOPES = keysOf<Schemas['Scope']>({
  'payment_methods:read': true,
  'payments:create': true,
  'payments:read': true,
  'payments:cancel': true,
  'refunds:create': true,
});

export const ROLES = keysOf<Schemas['Role']>({ client: true, admin: true });

export type EventType = Exclude<Schemas['CreateWebhookEndpointRequest']['enabled_events'][number], '*'>;
export const EVENT_TYPES = keysOf<EventType>({
  'payment.pending': true,
  'payment.approved': true,
  'payment.declined': true,
  'payment.failed': true,
  'payment.expired': true,
  'payment.canceled': true,
  'payment.refunded': true,
  'payment.charged_back': true,
  'payment.action_required': true,
  'refund.failed': true,
  'payment.void_failed': true,
  'dispute.created': true,
  'dispute.updated': true,
  'dispute.closed': true,
});
