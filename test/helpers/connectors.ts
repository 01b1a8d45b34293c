import { expect } from 'vitest';
import { ConnectorError } from '../../src/connectors/types.ts';

/** The ConnectorError an adapter call throws (the test fails if it resolves or throws anything else). */
export async function connectorError(promise: Promise<unknown>): Promise<ConnectorError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ConnectorError);
    return error as ConnectorError;
  }
  throw new Error('expected a ConnectorError');
}
