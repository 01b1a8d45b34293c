// Contract conformance of the served description: GET /openapi.json is valid OpenAPI 3.1
// (@seriousme/openapi-schema-validator) and passes Spectral's OpenAPI and OWASP rulesets as configured
// in .spectral.mjs: any error or warning that the ruleset does not waive fails the test.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import {
  Document,
  Ruleset,
  Spectral,
  type ISpectralDiagnostic,
  type RulesetDefinition,
} from '@stoplight/spectral-core';
import parsers from '@stoplight/spectral-parsers';
import { beforeAll, describe, expect, inject, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const RULESET_PATH = join(ROOT, '.spectral.mjs');
const SEVERITY = ['error', 'warning', 'info', 'hint'] as const;

let text = '';
let spec: any;

beforeAll(async () => {
  const res = await fetch(`${inject('baseUrl')}/openapi.json`);
  expect(res.status).toBe(200);
  text = await res.text();
  spec = JSON.parse(text);
});

/** Names of the component schemas reachable from `node` through `$ref`s (transitively). */
function referencedSchemas(node: unknown, seen = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) referencedSchemas(item, seen);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')) {
        const name = value.slice('#/components/schemas/'.length);
        if (!seen.has(name)) {
          seen.add(name);
          referencedSchemas(spec.components.schemas[name], seen);
        }
      } else referencedSchemas(value, seen);
    }
  }
  return seen;
}

describe('GET /openapi.json', () => {
  it('validates as OpenAPI 3.1', async () => {
    const validator = new Validator();
    const result = await validator.validate(spec);
    expect(validator.version).toBe('3.1');
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('has no unwaived Spectral finding (OpenAPI recommended + OWASP, .spectral.mjs)', async () => {
    const { default: definition } = (await import(pathToFileURL(RULESET_PATH).href)) as { default: RulesetDefinition };
    const spectral = new Spectral();
    // Sources are needed for the ruleset's per-pointer `overrides`.
    spectral.setRuleset(new Ruleset(definition, { severity: 'recommended', source: RULESET_PATH }));
    const findings: ISpectralDiagnostic[] = await spectral.run(
      new Document(text, parsers.Json, join(ROOT, 'openapi.json')),
    );
    const report = findings
      .filter((finding) => finding.severity <= 1)
      .map(
        (finding) =>
          `${SEVERITY[finding.severity]} ${String(finding.code)} at ${finding.path.join('.')}: ${finding.message}`,
      );
    expect(report).toEqual([]);
  });

  it('keeps the response-only waiver honest: those schemas appear in no request', async () => {
    const { RESPONSE_ONLY_SCHEMAS } = (await import(pathToFileURL(RULESET_PATH).href)) as {
      RESPONSE_ONLY_SCHEMAS: string[];
    };
    const inRequests = new Set<string>();
    for (const item of Object.values<any>(spec.paths)) {
      referencedSchemas(item.parameters, inRequests);
      for (const operation of Object.values<any>(item)) {
        if (!operation || typeof operation !== 'object' || Array.isArray(operation)) continue;
        referencedSchemas(operation.parameters, inRequests);
        referencedSchemas(operation.requestBody, inRequests);
      }
    }
    for (const name of RESPONSE_ONLY_SCHEMAS) expect(spec.components.schemas, name).toHaveProperty(name);
    expect(RESPONSE_ONLY_SCHEMAS.filter((name) => inRequests.has(name))).toEqual([]);
  });
});
