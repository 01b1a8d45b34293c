import { adyenPosV1, adyenQrV1 } from './adyen/index.ts';
import { mercadoPagoPosV1, mercadoPagoQrV1 } from './mercadopago/index.ts';
import { sandboxPosV1, sandboxQrV1 } from './sandbox/index.ts';
import { stripePosV1, stripeQrV1 } from './stripe/index.ts';
import type { Environment } from '../domain/environment.ts';
import type { ConnectorDefinition, ConnectorVersion } from './types.ts';
import { isOfferedIn } from './version.ts';

/**
 * Every connector version this build ships. Versions are code, not data: a version is published by
 * releasing it here, and its id never changes meaning. The definitions are built from them, in this
 * order, so a definition's id, provider, name and type are written once, on its versions.
 */
export const CONNECTOR_VERSIONS: readonly ConnectorVersion[] = [
  sandboxPosV1,
  sandboxQrV1,
  stripePosV1,
  stripeQrV1,
  mercadoPagoPosV1,
  mercadoPagoQrV1,
  adyenPosV1,
  adyenQrV1,
];

/**
 * Groups versions into their definitions. Versions of one definition must agree on what the definition
 * is, and a version id must be unique: anything else is a release mistake, refused when the module loads.
 */
export function definitionsOf(versions: readonly ConnectorVersion[]): ConnectorDefinition[] {
  const definitions = new Map<string, ConnectorDefinition>();
  const ids = new Set<string>();
  for (const version of versions) {
    if (ids.has(version.id)) throw new Error(`connector version ${version.id} is listed twice`);
    ids.add(version.id);
    const found = definitions.get(version.definitionId);
    if (!found) {
      definitions.set(version.definitionId, {
        id: version.definitionId,
        provider: version.provider,
        name: version.name,
        type: version.type,
        versions: [version],
      });
    } else if (found.provider !== version.provider || found.name !== version.name || found.type !== version.type) {
      throw new Error(`connector version ${version.id} disagrees with the other versions of ${version.definitionId}`);
    } else {
      found.versions.push(version);
    }
  }
  return [...definitions.values()];
}

export const CONNECTOR_DEFINITIONS: readonly ConnectorDefinition[] = definitionsOf(CONNECTOR_VERSIONS);

const offered = (environment: Environment) =>
  definitionsOf(CONNECTOR_VERSIONS.filter((version) => isOfferedIn(version, environment)));
const definitionsIn: Record<Environment, readonly ConnectorDefinition[]> = {
  test: offered('test'),
  live: offered('live'),
};

/** The definitions a deployment offers, each with the versions it offers (`GET /v1/connectors`). */
export const connectorDefinitionsIn = (environment: Environment) => definitionsIn[environment];

const versionsById = new Map<string, ConnectorVersion>(CONNECTOR_VERSIONS.map((v) => [v.id, v] as const));

export function findConnectorVersion(id: string): ConnectorVersion | undefined {
  return versionsById.get(id);
}
