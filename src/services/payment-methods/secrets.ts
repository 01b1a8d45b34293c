import type { PaymentMethodRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { CredentialDecryptionError, decryptJson, encryptJson } from '../../domain/credential-crypto.ts';
import { ServiceError } from '../../lib/errors.ts';
import { log } from '../../lib/log.ts';

/** What is sealed in `secrets_ciphertext`: never returned, never logged, decrypted per operation only. */
export interface MethodSecrets {
  credentials: unknown;
  configuration: Record<string, unknown>;
}

const SECRETS_PURPOSE = 'payment_method_secrets';

export async function sealSecrets(deps: Deps, methodId: string, secrets: MethodSecrets): Promise<string> {
  return encryptJson(deps.keyRing, secrets, {
    purpose: SECRETS_PURPOSE,
    resourceId: methodId,
    environment: deps.environment,
  });
}

/** Opens a method's secrets; call only right before handing them to the connector adapter. */
export async function openSecrets(deps: Deps, row: PaymentMethodRow): Promise<MethodSecrets> {
  if (row.secretsCiphertext === null)
    throw new ServiceError('connector_configuration_invalid', 'The payment method has no credentials.');
  return decryptJson<MethodSecrets>(deps.keyRing, row.secretsCiphertext, {
    purpose: SECRETS_PURPOSE,
    resourceId: row.id,
    environment: row.environment,
  });
}

/**
 * A partial secrets patch merges with what is stored. When that cannot be read, the answer is the
 * administrator's error (not a retryable 500) and says how to repair it; the cause is logged by id only.
 */
export async function openSecretsToMerge(deps: Deps, row: PaymentMethodRow): Promise<MethodSecrets> {
  try {
    return await openSecrets(deps, row);
  } catch (error) {
    if (!(error instanceof CredentialDecryptionError)) throw error;
    log('warn', 'payment_method_secrets_unreadable', { payment_method_id: row.id });
    throw new ServiceError(
      'connector_configuration_invalid',
      'The stored credentials cannot be read; send both `credentials` and `configuration` to replace them.',
    );
  }
}
