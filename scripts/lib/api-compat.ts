// The compatibility gate of the API description (docs/compatibility.md): the served
// /openapi.json against the last released one (openapi/released.json), and CHANGELOG.md.
//
// Changes are found and classified by api-smart-diff (breaking, non-breaking, deprecated, annotation,
// unclassified; OpenAPI 3.1 schemas read as JSON Schema 2020-12; pure JavaScript, runs offline). This
// module only decides what the classification demands:
//  - the newest CHANGELOG.md entry is the served `info.version`, and entries go newest first;
//  - any change beyond annotations (descriptions, examples) ships in a version above the released one;
//  - every breaking change is announced: a `### Breaking` section of an entry newer than the released
//    version names its subject (`METHOD /path`, the operationId, or the schema), and the major version
//    is raised; but for a bound of a request input tightened to refuse what was unsafe to serve (the
//    policy's exception: it ships in a minor version, announced), which a `### Limits` section names;
//  - every operation added since the released version is named in such an entry;
//  - every error code an existing response gains, and every component schema removed or renamed (a type
//    name of generated clients), is named in such an entry.
// Each error response narrows the envelope's `code` to an enum of its codes, an `allOf` of the envelope's
// `$ref` and that enum, which api-smart-diff cannot read (it reports the response's type as removed): the
// gate compares those codes itself, from each response's examples, and hands api-smart-diff the envelope.
// It has no Node or Workers dependency: the workerd suite runs it (test/contract/compatibility.test.ts).
import { apiCompare, type Diff } from 'api-smart-diff';

export interface ChangelogEntry {
  version: string;
  /** The entry's text below its heading. */
  text: string;
  /** The bullets of its `### Breaking` section (each with its wrapped lines), if any. */
  breaking: string[];
  /** The bullets of its `### Limits` section (bounds on input a minor version may tighten), if any. */
  limits: string[];
}

const ENTRY_HEADING = /^## \[?(\d+\.\d+\.\d+)\]?(?:\s.*)?$/;

export function parseChangelog(markdown: string): ChangelogEntry[] {
  const entries: ChangelogEntry[] = [];
  let current: { version: string; lines: string[] } | null = null;
  const close = () => {
    if (!current) return;
    const text = current.lines.join('\n').trim();
    const sections: Record<'breaking' | 'limits', string[]> = { breaking: [], limits: [] };
    let section: keyof typeof sections | null = null;
    for (const line of current.lines) {
      if (/^###\s/.test(line))
        section = /^###\s+Breaking\b/i.test(line) ? 'breaking' : /^###\s+Limits\b/i.test(line) ? 'limits' : null;
      else if (section === null) continue;
      else if (/^\s*[-*]\s+\S/.test(line)) sections[section].push(line.trim());
      // A bullet's wrapped lines are part of it: what it names may come on any of them.
      else if (/^\s+\S/.test(line) && sections[section].length > 0)
        sections[section].push(`${sections[section].pop()} ${line.trim()}`);
    }
    entries.push({ version: current.version, text, ...sections });
  };
  for (const line of markdown.split('\n')) {
    const heading = ENTRY_HEADING.exec(line);
    if (heading) {
      close();
      current = { version: heading[1]!, lines: [] };
    } else if (/^## /.test(line)) {
      close();
      current = null;
    } else current?.lines.push(line);
  }
  close();
  return entries;
}

type Version = [number, number, number];
const parseVersion = (v: string): Version | null => {
  const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(v);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
};
export function compareVersions(a: string, b: string): number {
  const [x, y] = [parseVersion(a), parseVersion(b)];
  if (!x || !y) throw new Error(`not a version: ${x ? b : a}`);
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return 0;
}

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace']);

export interface Change {
  type: Diff['type'];
  action: Diff['action'];
  /** The change adds or removes a whole operation (or path), not a part of one. */
  wholeOperation: boolean;
  /** What an announcement must name: `GET /v1/users`, a path, or a schema name. */
  subject: string;
  /** Further names that also count (the operationId). */
  aliases: string[];
  where: string;
  description: string;
}

type Described = { paths?: Record<string, Record<string, { operationId?: string }>>; info?: { version?: string } };

function subjectOf(diff: Diff, released: Described, served: Described): Pick<Change, 'subject' | 'aliases'> {
  const [root, a, b] = diff.path.map(String);
  if (root === 'paths' && a !== undefined) {
    if (b !== undefined && HTTP_METHODS.has(b)) {
      const operationId = served.paths?.[a]?.[b]?.operationId ?? released.paths?.[a]?.[b]?.operationId;
      return { subject: `${b.toUpperCase()} ${a}`, aliases: operationId ? [operationId] : [] };
    }
    return { subject: a, aliases: [] };
  }
  if (root === 'components' && b !== undefined) return { subject: b, aliases: [] };
  return { subject: diff.path.join('/'), aliases: [] };
}

/** The description as compared: `servers` names the origin it was served from, not the contract. */
function comparable(description: unknown): Described {
  const { servers: _servers, ...rest } = description as Described & { servers?: unknown };
  return withoutCodeEnums(rest);
}

// biome-ignore lint/suspicious/noExplicitAny: descriptions are JSON read by shape (an OpenAPI document of any version).
type Json = Record<string, any>;

/** Each operation's responses, as `[label, status, response]`, e.g. `GET /v1/users`, `404`. */
function* responsesOf(description: Described): Generator<[string, string, Json]> {
  for (const [path, item] of Object.entries(description.paths ?? {})) {
    for (const [method, operation] of Object.entries<Json>(item ?? {})) {
      if (!HTTP_METHODS.has(method)) continue;
      for (const [status, response] of Object.entries<Json>(operation?.responses ?? {}))
        yield [`${method.toUpperCase()} ${path}`, status, response];
    }
  }
}

/** An `allOf` part that only narrows `error.code` to an enum (routes/docs/docs.description.ts). */
function isCodeEnum(part: Json | undefined): boolean {
  const error = part?.properties?.error;
  return (
    Object.keys(part?.properties ?? {}).join() === 'error' &&
    Object.keys(error?.properties ?? {}).join() === 'code' &&
    Array.isArray(error.properties.code.enum)
  );
}

/** The description with each error response's code enum taken out: the envelope's `$ref` alone. */
function withoutCodeEnums(description: Described): Described {
  const copy = structuredClone(description);
  for (const [, , response] of responsesOf(copy)) {
    const json = response.content?.['application/json'];
    const [envelope, narrowing, ...more] = json?.schema?.allOf ?? [];
    if (more.length === 0 && typeof envelope?.$ref === 'string' && isCodeEnum(narrowing)) json.schema = envelope;
  }
  return copy;
}

/** The error codes each error response lists (its examples, one per code), by `METHOD path status`. */
function errorCodes(description: Described): Map<string, Set<string>> {
  const codes = new Map<string, Set<string>>();
  for (const [label, status, response] of responsesOf(description)) {
    if (Number(status) < 400) continue;
    const examples = Object.values<Json>(response.content?.['application/json']?.examples ?? {});
    codes.set(
      `${label} ${status}`,
      new Set(examples.map((example) => example.value?.error?.code).filter((c) => typeof c === 'string')),
    );
  }
  return codes;
}

/**
 * Error codes an operation of both descriptions answers only in `served` (at a status it had or a new one):
 * `{ response, code }`. A new operation's codes come with it.
 */
export function addedErrorCodes(released: unknown, served: unknown): Array<{ response: string; code: string }> {
  const operations = new Set([...responsesOf(comparable(released))].map(([label]) => label));
  const before = errorCodes(comparable(released));
  const added: Array<{ response: string; code: string }> = [];
  for (const [response, codes] of errorCodes(comparable(served))) {
    if (!operations.has(response.slice(0, response.lastIndexOf(' ')))) continue;
    const known = before.get(response) ?? new Set<string>();
    for (const code of codes) if (!known.has(code)) added.push({ response, code });
  }
  return added;
}

/** The component schemas the operations use, directly or through other schemas. */
function schemasInUse(description: Described): Set<string> {
  const schemas = ((description as { components?: { schemas?: Record<string, unknown> } }).components?.schemas ??
    {}) as Record<string, unknown>;
  const inUse = new Set<string>();
  const refsOf = (value: unknown) =>
    [...JSON.stringify(value ?? null).matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
  const queue = refsOf((description as { paths?: unknown }).paths);
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (inUse.has(name)) continue;
    inUse.add(name);
    queue.push(...refsOf(schemas[name]));
  }
  return inUse;
}

/**
 * Every change from `released` to `served`, but the version number itself. api-smart-diff reports a
 * change of a component schema twice: once where an operation uses it, classified for that use (a new
 * field in a response is not breaking, in a request body it may be), and once at the component, where it
 * cannot know the use and classifies as if it were a request. For a schema the operations use, the uses
 * decide; a schema no operation uses keeps the conservative verdict.
 */
export function changesBetween(released: unknown, served: unknown): Change[] {
  const before = comparable(released);
  const after = comparable(served);
  const inUse = new Set([...schemasInUse(before), ...schemasInUse(after)]);
  return (
    apiCompare(before, after)
      .diffs.filter((diff) => !(diff.path[0] === 'info' && diff.path[1] === 'version'))
      // A whole schema in use added or removed (renamed) is judged at its uses too.
      .filter(
        (diff) =>
          !(
            diff.path[0] === 'components' &&
            diff.path[1] === 'schemas' &&
            diff.path.length >= 3 &&
            inUse.has(String(diff.path[2]))
          ),
      )
      .map((diff) => ({
        type: diff.type,
        action: diff.action,
        wholeOperation:
          diff.path[0] === 'paths' &&
          (diff.path.length === 2 || (diff.path.length === 3 && HTTP_METHODS.has(String(diff.path[2])))),
        ...subjectOf(diff, before, after),
        where: diff.path.join('/'),
        description: diff.description ?? `${diff.action} ${diff.path.join('/')}`,
      }))
  );
}

/** A bound (maximum, length, count) of an operation's request parameter or body: what `### Limits` may tighten. */
function isInputBound(change: Change): boolean {
  return /^paths\/.+\/(parameters|requestBody)\/.*\/(exclusiveMaximum|exclusiveMinimum|maximum|minimum|maxLength|minLength|maxItems|minItems|maxProperties)$/.test(
    change.where,
  );
}

/** Problems with the served description, its version and the changelog; empty when the gate passes. */
export function compatibilityProblems(released: unknown, served: unknown, changelogMarkdown: string): string[] {
  const problems: string[] = [];
  const releasedVersion = comparable(released).info?.version ?? '';
  const servedVersion = comparable(served).info?.version ?? '';
  for (const [label, v] of [
    ['released', releasedVersion],
    ['served', servedVersion],
  ] as const) {
    if (!parseVersion(v)) problems.push(`the ${label} description's info.version "${v}" is not MAJOR.MINOR.PATCH`);
  }
  if (problems.length > 0) return problems;

  const entries = parseChangelog(changelogMarkdown);
  if (entries.length === 0) problems.push('CHANGELOG.md has no `## MAJOR.MINOR.PATCH` entry');
  else if (entries[0]!.version !== servedVersion)
    problems.push(
      `the newest CHANGELOG.md entry is ${entries[0]!.version}, but the served info.version is ${servedVersion}`,
    );
  for (let i = 1; i < entries.length; i++) {
    if (compareVersions(entries[i - 1]!.version, entries[i]!.version) <= 0)
      problems.push(
        `CHANGELOG.md: ${entries[i - 1]!.version} is listed above ${entries[i]!.version}; newest first, one entry per version`,
      );
  }
  for (const entry of entries)
    if (entry.text === '') problems.push(`CHANGELOG.md: the ${entry.version} entry is empty`);

  const order = compareVersions(servedVersion, releasedVersion);
  if (order < 0) problems.push(`the served info.version ${servedVersion} is below the released ${releasedVersion}`);
  const changes = changesBetween(released, served);
  const contractChanges = changes.filter((c) => c.type !== 'annotation');
  if (contractChanges.length > 0 && order <= 0) {
    problems.push(
      `the description changed since ${releasedVersion} (${contractChanges.length} changes, e.g. ${contractChanges[0]!.description} at ${contractChanges[0]!.where}) but info.version was not raised`,
    );
  }

  const unreleased = entries.filter((e) => compareVersions(e.version, releasedVersion) > 0);
  const names = (change: Change) => [change.subject, ...change.aliases];
  for (const change of changes.filter((c) => c.wholeOperation && c.action === 'add')) {
    if (!unreleased.some((entry) => names(change).some((name) => entry.text.includes(name)))) {
      problems.push(
        `new operation not named in CHANGELOG.md: ${change.subject} (${change.aliases.join(', ') || 'no operationId'})`,
      );
    }
  }

  const named = (name: string) => unreleased.some((entry) => entry.text.includes(name));
  for (const { response, code } of addedErrorCodes(released, served)) {
    if (!named(code)) problems.push(`new error code not named in CHANGELOG.md: ${code} (${response})`);
  }
  const schemasOf = (description: unknown) =>
    Object.keys((comparable(description) as { components?: { schemas?: object } }).components?.schemas ?? {});
  const servedSchemas = new Set(schemasOf(served));
  for (const name of schemasOf(released).filter((name) => !servedSchemas.has(name))) {
    if (!named(name))
      problems.push(`schema removed or renamed, not named in CHANGELOG.md (a type of generated clients): ${name}`);
  }

  const announcements = unreleased.flatMap((e) => e.breaking);
  const limits = unreleased.flatMap((e) => e.limits);
  const limited = (change: Change) =>
    isInputBound(change) && limits.some((line) => names(change).some((name) => line.includes(name)));
  const breaking = changes.filter((c) => c.type === 'breaking' && !limited(c));
  for (const change of breaking) {
    if (!announcements.some((line) => names(change).some((name) => line.includes(name)))) {
      problems.push(
        `breaking change not announced in a \`### Breaking\` section of CHANGELOG.md: ${change.description} (${change.subject}; ${change.where})`,
      );
    }
  }
  if (breaking.length > 0 && parseVersion(servedVersion)![0] <= parseVersion(releasedVersion)![0]) {
    problems.push(
      `${breaking.length} breaking changes since ${releasedVersion} need a new major version, not ${servedVersion}`,
    );
  }
  return problems;
}
