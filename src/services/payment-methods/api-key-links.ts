import { and, eq } from 'drizzle-orm';
import { apiKeyPaymentMethods, apiKeys, type PaymentMethodRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { changed } from '../../lib/isolate-cache.ts';
import { ServiceError } from '../../lib/errors.ts';
import { methodStatus } from './resources.ts';

/** Enables a method for one key of the same owner and environment; both must be active. */
export async function linkApiKey({ control: db }: Deps, method: PaymentMethodRow, apiKeyId: string) {
  const key = await db
    .select()
    .from(apiKeys)
    .where(
      and(eq(apiKeys.id, apiKeyId), eq(apiKeys.userId, method.userId), eq(apiKeys.environment, method.environment)),
    )
    .get();
  if (!key) throw new ServiceError('api_key_not_found');
  if (key.status !== 'active') throw new ServiceError('invalid_state_transition', 'The API key is revoked.');
  if (methodStatus(method) !== 'active')
    throw new ServiceError('invalid_state_transition', 'The payment method is not active.');
  const now = Date.now();
  const link = await db
    .insert(apiKeyPaymentMethods)
    .values({ apiKeyId, paymentMethodId: method.id, enabled: true, createdAt: now, updatedAt: now })
    .onConflictDoUpdate({
      target: [apiKeyPaymentMethods.apiKeyId, apiKeyPaymentMethods.paymentMethodId],
      set: { enabled: true, updatedAt: now },
    })
    .returning()
    .get();
  changed(`payment_method:${method.id}`);
  return link;
}

/** Disables the method for that key only; other keys keep it. */
export async function disableApiKeyLink({ control: db }: Deps, method: PaymentMethodRow, apiKeyId: string) {
  const link = await db
    .update(apiKeyPaymentMethods)
    .set({ enabled: false, updatedAt: Date.now() })
    .where(and(eq(apiKeyPaymentMethods.apiKeyId, apiKeyId), eq(apiKeyPaymentMethods.paymentMethodId, method.id)))
    .returning()
    .get();
  if (!link) throw new ServiceError('api_key_not_found', 'This API key is not linked to the payment method.');
  changed(`payment_method:${method.id}`);
  return link;
}
