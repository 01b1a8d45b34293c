import { SANDBOX_TERMINAL_STATUSES, type SandboxTerminalStatus } from '../connectors/sandbox/index.ts';
import type { TerminalState } from '../connectors/types.ts';
import type { PaymentMethodRow } from '../db/schema/index.ts';
import type { Deps } from '../deps.ts';
import type { Caller } from '../domain/caller.ts';
import { ServiceError } from '../lib/errors.ts';
import { IsolateCache } from '../lib/isolate-cache.ts';
import { toIso } from '../lib/time.ts';
import { openSecrets } from './payment-methods/secrets.ts';
import { findUsablePaymentMethod, updatePaymentMethod } from './payment-methods/store.ts';
import { callConnector, connectorApiError, connectorFor } from './payments/processor.ts';

/**
 * The POS terminal behind a payment method, as its processor reports it (`getTerminal` of the connector):
 * for a checkout screen that shows whether the device can take a payment. Visible to whoever may see the
 * method (`findUsablePaymentMethod`); one processor read per method and isolate every `TERMINAL_CACHE_TTL_MS`
 * at most, so a screen that polls costs the processor little.
 */

/** How long one isolate answers a method's terminal from its last read (docs/limits.md). */
export const TERMINAL_CACHE_TTL_MS = 5_000;

export interface TerminalView {
  payment_method: string;
  processor_id: string;
  status: TerminalState['status'];
  busy_with: { kind: NonNullable<TerminalState['busyWith']>['kind']; processor_reference: string | null } | null;
  operating_mode: NonNullable<TerminalState['operatingMode']> | null;
  read_at: string;
}

const cache = new IsolateCache<TerminalView>(TERMINAL_CACHE_TTL_MS, 1_000, (view) => [
  `payment_method:${view.payment_method}`,
]);
const cacheKey = (deps: Deps, methodId: string) => `${deps.environment}:${methodId}`;

/** The method whose terminal the caller may read: visible to it (else 404) and a POS version with terminals (else 422). */
async function terminalMethod(deps: Deps, caller: Caller, methodId: string): Promise<PaymentMethodRow> {
  const method = await findUsablePaymentMethod(deps, caller, methodId);
  if (!method || method.secretsCiphertext === null) throw new ServiceError('payment_method_not_found');
  if (method.type !== 'pos')
    throw new ServiceError('capability_not_supported', 'Only a POS payment method has a terminal.', {
      details: { capability: 'terminal' },
    });
  return method;
}

export async function readTerminal(deps: Deps, caller: Caller, methodId: string): Promise<TerminalView> {
  const method = await terminalMethod(deps, caller, methodId);
  const now = Date.now();
  const cached = cache.get(cacheKey(deps, method.id), now);
  if (cached) return cached;
  const { version, ctx } = await connectorFor(deps, method);
  const getTerminal = version.adapter.getTerminal;
  if (!getTerminal)
    throw new ServiceError('capability_not_supported', 'This processor does not describe its terminals.', {
      details: { capability: 'terminal' },
    });
  const read = await callConnector(() => getTerminal(ctx));
  if (!read.ok) {
    // The processor does not list the configured terminal: the method's configuration is what is wrong.
    if (read.error.kind === 'not_found')
      throw new ServiceError(
        'connector_configuration_invalid',
        'The processor does not know the configured terminal.',
        {
          details: read.error.processorCode ? { processor_code: read.error.processorCode } : {},
        },
      );
    throw connectorApiError(read.error);
  }
  const view = toTerminalView(method.id, read.value, now);
  cache.set(cacheKey(deps, method.id), view, now);
  return view;
}

function toTerminalView(methodId: string, state: TerminalState, now: number): TerminalView {
  return {
    payment_method: methodId,
    processor_id: state.processorId,
    status: state.status,
    busy_with: state.busyWith
      ? { kind: state.busyWith.kind, processor_reference: state.busyWith.processorReference }
      : null,
    operating_mode: state.operatingMode ?? null,
    read_at: toIso(now),
  };
}

/**
 * Test helper (docs/sandbox.md): sets the simulated device of a sandbox POS method to `status`, written into
 * the method's configuration where the sandbox reads it, and answers the terminal as it then reads.
 */
export async function setSandboxTerminal(
  deps: Deps,
  caller: Caller,
  methodId: string,
  status: SandboxTerminalStatus,
): Promise<TerminalView> {
  const method = await terminalMethod(deps, caller, methodId);
  if (method.provider !== 'sandbox' || !SANDBOX_TERMINAL_STATUSES.includes(status))
    throw new ServiceError('capability_not_supported', 'Test helpers drive sandbox payment methods only.');
  const { configuration } = await openSecrets(deps, method);
  // The method's change drops its terminal's cached state too (`changed`).
  await updatePaymentMethod(deps, method, {
    configuration: { ...(configuration as Record<string, unknown>), terminal_status: status },
  });
  return readTerminal(deps, caller, method.id);
}
