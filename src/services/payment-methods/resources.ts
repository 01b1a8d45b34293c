import type { ApiKeyPaymentMethodRow, PaymentMethodRow } from '../../db/schema/index.ts';
import { toIso } from '../../lib/time.ts';

export type MethodStatus = 'active' | 'inactive' | 'deleted';

export const methodStatus = (row: PaymentMethodRow): MethodStatus =>
  row.deletedAt !== null ? 'deleted' : row.enabled ? 'active' : 'inactive';

/** Deleted methods are never shown, so a shown method is active or inactive. */
const shownStatus = (row: PaymentMethodRow): 'active' | 'inactive' =>
  row.enabled && row.deletedAt === null ? 'active' : 'inactive';

/** The account view (management routes): everything but the sealed secrets. */
export function toAccountPaymentMethod(row: PaymentMethodRow) {
  return {
    id: row.id,
    user_id: row.userId,
    connector_definition_version_id: row.connectorVersionId,
    name: row.name,
    type: row.type,
    provider: row.provider,
    environment: row.environment,
    status: shownStatus(row),
    capabilities: row.capabilities,
    display_configuration: row.displayConfiguration,
    enabled: row.enabled,
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
  };
}

/**
 * The public view (business routes). Its `metadata` is the account view's `display_configuration`: what
 * the merchant set to show about the method (a label, a logo), under the name the business API uses.
 */
export function toPublicPaymentMethod(row: PaymentMethodRow) {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    provider: row.provider,
    environment: row.environment,
    status: shownStatus(row),
    capabilities: row.capabilities,
    metadata: row.displayConfiguration,
    created_at: toIso(row.createdAt),
  };
}

export function toLinkResource(link: ApiKeyPaymentMethodRow) {
  return {
    api_key_id: link.apiKeyId,
    payment_method_id: link.paymentMethodId,
    enabled: link.enabled,
    created_at: toIso(link.createdAt),
  };
}
