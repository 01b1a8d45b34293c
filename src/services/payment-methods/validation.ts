import { z } from 'zod';
import { findConnectorVersion } from '../../connectors/registry.ts';
import type { Capability, ConnectorVersion } from '../../connectors/types.ts';
import { isOfferedIn } from '../../connectors/version.ts';
import type { Environment } from '../../domain/environment.ts';
import { invalidRequest, ServiceError, type FieldIssue } from '../../lib/errors.ts';
import { zodIssuesToFields } from '../../lib/errors.ts';
import type { MethodSecrets } from './secrets.ts';

/** The published version a new method is made on, offered in this deployment (`GET /v1/connectors` lists them). */
export function connectorVersionOrThrow(id: string, environment: Environment): ConnectorVersion {
  const version = findConnectorVersion(id);
  if (version?.status !== 'published') {
    throw invalidRequest('Unknown connector version.', [
      { field: 'connector_definition_version_id', issue: 'No published connector version has this id' },
    ]);
  }
  if (!isOfferedIn(version, environment)) {
    throw invalidRequest('Connector version not offered in this environment.', [
      { field: 'connector_definition_version_id', issue: `Not offered in the ${environment} environment` },
    ]);
  }
  return version;
}

/**
 * The version an existing method is changed on. A method on a version this deployment does not offer (a sandbox
 * method made in `live` before the sandbox was `test` only) takes no change: deleting it is all that is left.
 */
export function existingConnectorVersionOrThrow(id: string, environment: Environment): ConnectorVersion {
  const version = findConnectorVersion(id);
  if (!version || !isOfferedIn(version, environment)) {
    throw new ServiceError(
      'connector_configuration_invalid',
      `The payment method’s connector version is not offered in the ${environment} environment; delete the method.`,
    );
  }
  return version;
}

/**
 * Validates credentials and configuration against the version's schemas together, so one answer names
 * every wrong field (never its value).
 */
export function parseSecrets(version: ConnectorVersion, credentials: unknown, configuration: unknown): MethodSecrets {
  const creds = version.credentialsSchema.safeParse(credentials);
  const config = version.configurationSchema.safeParse(configuration);
  const fields: FieldIssue[] = [
    ...(creds.success ? [] : zodIssuesToFields(creds.error, 'credentials')),
    ...(config.success ? [] : zodIssuesToFields(config.error, 'configuration')),
  ];
  if (!creds.success || !config.success) {
    throw invalidRequest('Invalid credentials or configuration for this connector version.', fields);
  }
  return { credentials: creds.data, configuration: config.data as Record<string, unknown> };
}

/**
 * `display_configuration` is presentation data that the service shows and never reads: a field of the version's
 * configuration put there (`qr_ttl_seconds` on a QR method) would be accepted and have no effect, so it is refused,
 * naming where it belongs.
 */
export function checkDisplayConfiguration(version: ConnectorVersion, display: Record<string, unknown> | undefined) {
  const schema = version.configurationSchema;
  if (!display || !(schema instanceof z.ZodObject)) return;
  const fields: FieldIssue[] = Object.keys(display)
    .filter((key) => Object.hasOwn(schema.shape, key))
    .map((key) => ({
      field: `display_configuration.${key}`,
      issue: 'A field of this connector version’s configuration: send it in `configuration`',
    }));
  if (fields.length > 0) throw invalidRequest('Configuration sent as display configuration.', fields);
}

export function checkCapabilities(version: ConnectorVersion, requested: Capability[] | undefined): Capability[] {
  if (requested === undefined) return [...version.capabilities];
  const unsupported = requested.filter((c) => !version.capabilities.includes(c));
  if (unsupported.length > 0) {
    const fields: FieldIssue[] = unsupported.map((c) => ({
      field: 'capabilities',
      issue: `Not supported by this connector version: ${c}`,
    }));
    throw invalidRequest('Invalid capability.', fields);
  }
  return version.capabilities.filter((c) => requested.includes(c));
}
