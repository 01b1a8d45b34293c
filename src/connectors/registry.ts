import { mercadoPagoPosV1, mercadoPagoQrV1 } from './mercadopago/index.ts';
import { sandboxPosV1, sandboxQrV1 } from './sandbox/index.ts';
import { stripePosV1, stripeQrV1 } from './stripe/index.ts';
import type { ConnectorDefinition, ConnectorVersion } from './types.ts';

/**
 * Every connector definition this build ships, with its versions. Definitions are code, not data: a
 * version is published by releasing it here, and its id never changes meaning.
 */
export const CONNECTOR_DEFINITIONS: readonly ConnectorDefinition[] = [
  { id: 'cnd_sandbox_pos', provider: 'sandbox', name: 'Sandbox POS', type: 'pos', versions: [sandboxPosV1] },
  { id: 'cnd_sandbox_qr', provider: 'sandbox', name: 'Sandbox QR', type: 'qr', versions: [sandboxQrV1] },
  { id: 'cnd_stripe_pos', provider: 'stripe', name: 'Stripe Terminal', type: 'pos', versions: [stripePosV1] },
  { id: 'cnd_stripe_qr', provider: 'stripe', name: 'Stripe QR (PromptPay, PayNow)', type: 'qr', versions: [stripeQrV1] },
  { id: 'cnd_mercadopago_pos', provider: 'mercadopago', name: 'Mercado Pago Point', type: 'pos', versions: [mercadoPagoPosV1] },
  { id: 'cnd_mercadopago_qr', provider: 'mercadopago', name: 'Mercado Pago QR', type: 'qr', versions: [mercadoPagoQrV1] },
];

const versionsById = new Map<string, ConnectorVersion>(CONNECTOR_DEFINITIONS.flatMap((d) => d.versions.map((v) => [v.id, v] as const)));

export function findConnectorVersion(id: string): ConnectorVersion | undefined {
  return versionsById.get(id);
}
