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

  it('names every operation added since the released version in the changelog, and they are not breaking', () => {
    const added = changesBetween(released, served).filter((c) => c.wholeOperation && c.action === 'add');
    const unreleased = parseChangelog(changelog).filter((e) => e.version !== released.info.version);
    for (const change of added) {
      expect(change.type, change.subject).toBe('non-breaking');
      expect(
        unreleased.some((e) => e.text.includes(change.subject) || change.aliases.some((a) => e.text.includes(a))),
        change.subject,
      ).toBe(true);
    }
  });
});

describe('the gate itself', () => {
  // Seeded from the released description under fixed version numbers, with changelogs written here, so
  // these hold whatever the next release is.
  const withVersion = (doc: any, version: string) => ({ ...structuredClone(doc), info: { ...doc.info, version } });
  const base = withVersion(released, '1.0.0');
  const entry = (version: string, body: string) => `## ${version}\n\n${body}\n\n`;
  const changelogOf = (...entries: string[]) =>
    `# Changelog\n\n${entries.join('')}${entry('1.0.0', '- First release.')}`;

  /** Three breaking changes: a response field removed, a request field made required, an operation removed. */
  function seededBreaking(version: string) {
    const doc = withVersion(base, version);
    delete doc.components.schemas.Payment.properties.status;
    doc.components.schemas.Payment.required = doc.components.schemas.Payment.required.filter(
      (name: string) => name !== 'status',
    );
    doc.components.schemas.CreatePaymentRequest.required.push('description');
    delete doc.paths['/v1/users'].get;
    return doc;
  }

  it('passes an unchanged description', () => {
    expect(compatibilityProblems(base, base, changelogOf())).toEqual([]);
  });

  it('fails on breaking changes the changelog does not announce, and on a version that is not a new major', () => {
    const problems = compatibilityProblems(
      base,
      seededBreaking('1.1.0'),
      changelogOf(entry('1.1.0', '### Changed\n- Tidied the payment schema.')),
    );
    const text = problems.join('\n');
    expect(text).toMatch(/breaking change not announced.*GET \/v1\/payments\/\{payment_id\}/);
    expect(text).toMatch(/breaking change not announced.*POST \/v1\/payments\b/);
    expect(text).toMatch(/breaking change not announced.*GET \/v1\/users/);
    expect(text).toMatch(/need a new major version, not 1\.1\.0/);
  });

  it('passes the same changes once announced under a new major version, each naming its operation (or operationId) or schema', () => {
    const doc = seededBreaking('2.0.0');
    const breaking = changesBetween(base, doc).filter((c) => c.type === 'breaking');
    const subjects = [...new Set(breaking.map((c) => c.subject))];
    expect(subjects).toEqual(
      expect.arrayContaining(['POST /v1/payments', 'GET /v1/payments/{payment_id}', 'GET /v1/users']),
    );
    // GET /v1/users announced by its operationId, the others by `METHOD /path` or schema name.
    const lines = subjects.map((s) =>
      s === 'GET /v1/users' ? '- `listUsers` is removed.' : `- ${s}: see the migration notes.`,
    );
    expect(
      compatibilityProblems(base, doc, changelogOf(entry('2.0.0', ['### Breaking', ...lines].join('\n')))),
    ).toEqual([]);
    // One left out is caught.
    const missingOne = compatibilityProblems(
      base,
      doc,
      changelogOf(entry('2.0.0', ['### Breaking', ...lines.filter((l) => !l.includes('listUsers'))].join('\n'))),
    );
    expect(missingOne).toHaveLength(1);
    expect(missingOne[0]).toMatch(/breaking change not announced.*GET \/v1\/users/);
    // An announcement in another section does not count.
    expect(
      compatibilityProblems(base, doc, changelogOf(entry('2.0.0', ['### Changed', ...lines].join('\n')))).join('\n'),
    ).toMatch(/breaking change not announced/);
  });

  it('lets a minor version tighten a bound of a request input announced under `### Limits`, and nothing else', () => {
    const limited = (version: string) => {
      const doc = withVersion(base, version);
      const offset = doc.paths['/v1/users'].get.parameters.find((p: { name: string }) => p.name === 'offset');
      offset.schema = { ...offset.schema, maximum: 10 };
      return doc;
    };
    const tightened = changesBetween(base, limited('1.1.0')).filter((c) => c.type === 'breaking');
    expect(tightened.map((c) => c.subject)).toEqual(['GET /v1/users']);
    // Unannounced, or announced elsewhere than under Limits: a breaking change of a minor version.
    for (const section of ['### Changed', '### Added']) {
      const text = compatibilityProblems(
        base,
        limited('1.1.0'),
        changelogOf(entry('1.1.0', `${section}\n- \`offset\` of \`listUsers\` is at most 10.`)),
      ).join('\n');
      expect(text).toMatch(/breaking change not announced.*GET \/v1\/users/);
      expect(text).toMatch(/need a new major version, not 1\.1\.0/);
    }
    expect(
      compatibilityProblems(
        base,
        limited('1.1.0'),
        changelogOf(entry('1.1.0', '### Limits\n- `offset` of `listUsers` is at most 10.')),
      ),
    ).toEqual([]);
    // A bullet wrapped over lines names what any of its lines names; a paragraph after it is not the bullet.
    const wrapped = (text: string) => compatibilityProblems(base, limited('1.1.0'), changelogOf(entry('1.1.0', text)));
    expect(wrapped('### Limits\n- `offset` is at most 10 on\n  `listUsers`.')).toEqual([]);
    expect(wrapped('### Limits\n- `offset` is at most 10.\n\n`listUsers` is one.').join('\n')).toMatch(
      /breaking change not announced.*GET \/v1\/users/,
    );
    // Limits names only bounds of inputs: an operation removed, or a response field, still needs Breaking and 2.0.0.
    const doc = seededBreaking('1.1.0');
    const limits = changesBetween(base, doc)
      .filter((c) => c.type === 'breaking')
      .map((c) => `- ${c.subject}.`);
    const text = compatibilityProblems(
      base,
      doc,
      changelogOf(entry('1.1.0', ['### Limits', ...limits].join('\n'))),
    ).join('\n');
    expect(text).toMatch(/breaking change not announced.*GET \/v1\/users/);
    expect(text).toMatch(/need a new major version, not 1\.1\.0/);
  });

  it('wants every new operation named in an unreleased entry, and a version above the released one', () => {
    const withReceipt = (version: string) => {
      const doc = withVersion(base, version);
      doc.paths['/v1/payments/{payment_id}/receipt'] = {
        get: { operationId: 'getReceipt', responses: { 200: { description: 'The receipt.' } } },
      };
      return doc;
    };
    const silent = compatibilityProblems(
      base,
      withReceipt('1.1.0'),
      changelogOf(entry('1.1.0', '### Added\n- Nothing worth naming.')),
    );
    expect(silent).toEqual([
      'new operation not named in CHANGELOG.md: GET /v1/payments/{payment_id}/receipt (getReceipt)',
    ]);
    expect(
      compatibilityProblems(
        base,
        withReceipt('1.1.0'),
        changelogOf(entry('1.1.0', '### Added\n- `getReceipt`: a payment’s receipt.')),
      ),
    ).toEqual([]);
    // The same addition without a new version.
    expect(compatibilityProblems(base, withReceipt('1.0.0'), changelogOf()).join('\n')).toMatch(
      /changed since 1\.0\.0 .* but info\.version was not raised/,
    );
  });

  it('judges a component schema by its uses: a new field is not breaking in a response, a new required one is in a request', () => {
    const doc = withVersion(base, '1.1.0');
    doc.components.schemas.Payment.properties.settled_at = { type: ['string', 'null'] };
    doc.components.schemas.Payment.required.push('settled_at');
    doc.components.schemas.CreatePaymentRequest.properties.channel = { type: 'string' };
    doc.components.schemas.CreatePaymentRequest.required.push('channel');
    const breaking = changesBetween(base, doc).filter((c) => c.type === 'breaking');
    expect(breaking.length).toBeGreaterThan(0);
    expect(breaking.every((c) => c.where.includes('/requestBody/') && c.subject === 'POST /v1/payments')).toBe(true);
    // Payment is a response schema only: its new field is reported where it is served, as not breaking.
    expect(
      changesBetween(base, doc)
        .filter((c) => c.where.endsWith('/data/properties/settled_at'))
        .map((c) => c.type),
    ).toEqual(expect.arrayContaining(['non-breaking']));
  });

  it('reads an error response narrowed to its codes as the envelope, and wants each code an operation gains named', () => {
    const narrowed = (version: string, extraCode?: string) => {
      const doc = withVersion(base, version);
      const response = doc.paths['/v1/payments/{payment_id}'].get.responses['404'].content['application/json'];
      if (extraCode) response.examples[extraCode] = { value: { error: { code: extraCode } } };
      const enumOf = { type: 'string', enum: Object.keys(response.examples) };
      response.schema = {
        allOf: [
          response.schema,
          { type: 'object', required: ['error'], properties: { error: { properties: { code: enumOf } } } },
        ],
      };
      return doc;
    };
    // The enum alone narrows a response: not breaking, not even a change of the contract.
    expect(changesBetween(base, narrowed('1.0.0')).filter((c) => c.type !== 'annotation')).toEqual([]);
    const gained = narrowed('1.1.0', 'payment_archived');
    expect(changesBetween(base, gained).filter((c) => c.type === 'breaking')).toEqual([]);
    expect(
      compatibilityProblems(base, gained, changelogOf(entry('1.1.0', '### Added\n- Something.'))).join('\n'),
    ).toMatch(/new error code not named in CHANGELOG\.md: payment_archived \(GET \/v1\/payments\/\{payment_id\} 404\)/);
    expect(
      compatibilityProblems(base, gained, changelogOf(entry('1.1.0', '### Added\n- `404 payment_archived`.'))),
    ).toEqual([]);
  });

  it('wants a component schema removed or renamed named in the changelog: generated clients lose its type', () => {
    const renamed = withVersion(base, '1.1.0');
    renamed.components.schemas.Money = renamed.components.schemas.Amount;
    delete renamed.components.schemas.Amount;
    const text = JSON.stringify(renamed).replaceAll('#/components/schemas/Amount"', '#/components/schemas/Money"');
    const doc = JSON.parse(text);
    expect(changesBetween(base, doc).filter((c) => c.type === 'breaking')).toEqual([]);
    expect(compatibilityProblems(base, doc, changelogOf(entry('1.1.0', '### Changed\n- Tidied.')))).toEqual([
      'schema removed or renamed, not named in CHANGELOG.md (a type of generated clients): Amount',
    ]);
    expect(
      compatibilityProblems(base, doc, changelogOf(entry('1.1.0', '### Changed\n- `Amount` is now `Money`.'))),
    ).toEqual([]);
  });

  it('lets descriptions and examples change without a new version', () => {
    const reworded = withVersion(base, '1.0.0');
    reworded.paths['/v1/payments/{payment_id}'].get.description = 'Reworded.';
    expect(changesBetween(base, reworded).map((c) => c.type)).toEqual(['annotation']);
    expect(compatibilityProblems(base, reworded, changelogOf())).toEqual([]);
  });

  it('wants the newest changelog entry to be the served version, entries newest first, none empty', () => {
    const next = withVersion(base, '1.1.0');
    expect(compatibilityProblems(base, next, changelogOf()).join('\n')).toMatch(
      /newest CHANGELOG\.md entry is 1\.0\.0, but the served info\.version is 1\.1\.0/,
    );
    expect(compatibilityProblems(base, next, `${entry('1.0.0', '- a')}${entry('1.1.0', '- b')}`).join('\n')).toMatch(
      /1\.0\.0 is listed above 1\.1\.0/,
    );
    expect(compatibilityProblems(base, next, changelogOf('## 1.1.0\n\n')).join('\n')).toMatch(
      /the 1\.1\.0 entry is empty/,
    );
    expect(compatibilityProblems(base, base, '# Changelog\n').join('\n')).toMatch(/no `## MAJOR\.MINOR\.PATCH` entry/);
    expect(compatibilityProblems(base, withVersion(base, '0.9.0'), `${entry('0.9.0', '- x')}`).join('\n')).toMatch(
      /below the released 1\.0\.0/,
    );
    expect(compatibilityProblems(base, withVersion(base, 'v1'), changelogOf()).join('\n')).toMatch(
      /not MAJOR\.MINOR\.PATCH/,
    );
  });
});
