import { beforeAll, describe, expect, it } from 'vitest';
import released from '../../openapi/released.json';
import changelog from '../../CHANGELOG.md?raw';
import { changesBetween, compatibilityProblems, parseChangelog } from '../../scripts/lib/api-compat.ts';
import { call } from '../helpers/api.ts';

/**
 * The compatibility gate (scripts/lib/api-compat.ts): the served /openapi.json against the last released
 * description kept in openapi/released.json, and CHANGELOG.md. Then the gate itself, fed seeded changes,
 * so that it cannot pass by checking nothing.
 */

let served: any;
beforeAll(async () => {
  const res = await call('GET', '/openapi.json');
  expect(res.status).toBe(200);
  served = res.body;
});

describe('the served description against openapi/released.json and CHANGELOG.md', () => {
  it('passes the gate: versions agree, every change ships in a new version, no breaking change is unannounced', () => {
    expect(compatibilityProblems(released, served, changelog)).toEqual([]);
  });

  it('this release is additive: a minor version above the released one, with no breaking change', () => {
    expect(released.info.version).toBe('1.0.0');
    expect(served.info.version).toBe('1.1.0');
    expect(parseChangelog(changelog).map((e) => e.version)).toEqual(['1.1.0', '1.0.0']);
    const changes = changesBetween(released, served);
    expect(changes.filter((c) => c.type === 'breaking')).toEqual([]);
    expect(changes.filter((c) => c.type === 'non-breaking').map((c) => c.subject)).toEqual(
      expect.arrayContaining(['GET /v1/payments', 'GET /v1/payments/{payment_id}/refunds', 'GET /v1/payments/{payment_id}/refunds/{refund_id}', 'GET /v1/events']),
    );
  });
});

describe('the gate itself', () => {
  const withVersion = (doc: any, version: string) => ({ ...doc, info: { ...doc.info, version } });
  const entry = (version: string, body: string) => `## ${version}\n\n${body}\n\n`;
  /** The real changelog with a newer entry on top. */
  const changelogWith = (top: string) => changelog.replace(/^## /m, `${top}## `);

  /** Three breaking changes: a response field removed, a request field made required, an operation removed. */
  function seededBreaking(version: string) {
    const doc = withVersion(structuredClone(served), version);
    delete doc.components.schemas.Payment.properties.status;
    doc.components.schemas.Payment.required = doc.components.schemas.Payment.required.filter((name: string) => name !== 'status');
    doc.components.schemas.CreatePaymentRequest.required.push('description');
    delete doc.paths['/v1/users'].get;
    return doc;
  }

  it('fails on breaking changes the changelog does not announce, and on a version that is not a new major', () => {
    const problems = compatibilityProblems(released, seededBreaking('1.2.0'), changelogWith(entry('1.2.0', '### Changed\n- Tidied the payment schema.')));
    const text = problems.join('\n');
    expect(text).toMatch(/breaking change not announced.*GET \/v1\/payments\/\{payment_id\}/);
    expect(text).toMatch(/breaking change not announced.*POST \/v1\/payments\b/);
    expect(text).toMatch(/breaking change not announced.*GET \/v1\/users/);
    expect(text).toMatch(/need a new major version, not 1\.2\.0/);
  });

  it('passes the same changes once announced under a new major version, each naming its operation (or operationId) or schema', () => {
    const doc = seededBreaking('2.0.0');
    const breaking = changesBetween(released, doc).filter((c) => c.type === 'breaking');
    const subjects = [...new Set(breaking.map((c) => c.subject))];
    expect(subjects).toEqual(expect.arrayContaining(['POST /v1/payments', 'GET /v1/payments/{payment_id}', 'GET /v1/users']));
    // GET /v1/users announced by its operationId, the others by `METHOD /path` or schema name.
    const lines = subjects.map((s) => (s === 'GET /v1/users' ? '- `listUsers` is removed.' : `- ${s}: see the migration notes.`));
    expect(compatibilityProblems(released, doc, changelogWith(entry('2.0.0', ['### Breaking', ...lines].join('\n'))))).toEqual([]);
    // One left out is caught.
    const missingOne = compatibilityProblems(released, doc, changelogWith(entry('2.0.0', ['### Breaking', ...lines.filter((l) => !l.includes('listUsers'))].join('\n'))));
    expect(missingOne).toHaveLength(1);
    expect(missingOne[0]).toMatch(/breaking change not announced.*GET \/v1\/users/);
    // An announcement in another section does not count.
    const notBreaking = entry('2.0.0', ['### Changed', ...lines].join('\n'));
    expect(compatibilityProblems(released, doc, changelogWith(notBreaking)).join('\n')).toMatch(/breaking change not announced/);
  });

  it('wants a version above the released one for any change beyond descriptions and examples', () => {
    const doc = withVersion(structuredClone(served), '1.0.0');
    const problems = compatibilityProblems(released, doc, changelog.replace('## 1.1.0', '## 1.0.1').replace(/## 1\.0\.1[\s\S]*?(?=## 1\.0\.0)/, ''));
    expect(problems.join('\n')).toMatch(/info\.version was not raised/);
    // Descriptions alone may change in place.
    const reworded = structuredClone(released) as any;
    reworded.paths['/v1/payments/{payment_id}'].get.description = 'Reworded.';
    expect(changesBetween(released, reworded).map((c) => c.type)).toEqual(['annotation']);
    expect(compatibilityProblems(released, reworded, changelog.replace(/## 1\.1\.0[\s\S]*?(?=## 1\.0\.0)/, ''))).toEqual([]);
  });

  it('wants the newest changelog entry to be the served version, entries newest first, none empty', () => {
    expect(compatibilityProblems(released, withVersion(served, '1.2.0'), changelog).join('\n')).toMatch(/newest CHANGELOG\.md entry is 1\.1\.0, but the served info\.version is 1\.2\.0/);
    expect(compatibilityProblems(released, served, `${entry('1.0.0', '- a')}${entry('1.1.0', '- b')}`).join('\n')).toMatch(/1\.0\.0 is listed above 1\.1\.0/);
    expect(compatibilityProblems(released, served, `## 1.1.0\n\n## 1.0.0\n- first\n`).join('\n')).toMatch(/the 1\.1\.0 entry is empty/);
    expect(compatibilityProblems(released, served, '# Changelog\n').join('\n')).toMatch(/no `## MAJOR\.MINOR\.PATCH` entry/);
    expect(compatibilityProblems(released, withVersion(served, '0.9.0'), changelogWith(entry('0.9.0', '- x'))).join('\n')).toMatch(/below the released 1\.0\.0/);
    expect(compatibilityProblems(released, withVersion(served, 'v1'), changelog).join('\n')).toMatch(/not MAJOR\.MINOR\.PATCH/);
  });
});
