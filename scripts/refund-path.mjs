// `node scripts/refund-path.mjs [--code] [--naive] [--connector sandbox|stripe|mercadopago|adyen] [--why]`: the files
// of src/ a refund (POST /v1/payments/{payment_id}/refunds) passes, so that the counts in docs/architecture.md ("The
// files on a refund's path") can be derived again after any change. Static: TypeScript's parser (and, for `--code`,
// its checker); nothing runs.
//
// - By default, the files loaded: the closure of value imports (`import type`, `export type` and specifiers marked
//   `type` are erased and load nothing). Every file an import names counts, whether or not the refund calls into it.
// - `--code`: the files holding code a refund can run. Every function, class or constant named in a value position is
//   followed to its declaration, a whole top-level statement at a time; types and interfaces are not followed. A file
//   counts when one of its declarations is reached. Slower (a program of all of src/).
//
// Both walk from the route (the payments area, and the idempotency object the route reaches through its binding, not
// an import) and, apart, from the Worker's fetch: files reached only from there are the entry and the middleware every
// request passes ("before the route"). Both take one branch where a refund takes one of many (CUTS: one area of the
// app, one operation of the registry, one connector of the registry, one endpoint of the payments area for `--code`);
// `--naive` keeps only the entry's cuts, without which either walk is the whole Worker (jobs, queues, every route).
// `--why` prints, beside each file, the file that first reached it.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const connector = args.includes('--connector') ? args[args.indexOf('--connector') + 1] : 'sandbox';
const code = args.includes('--code');
const naive = args.includes('--naive');
const why = args.includes('--why');

const CONNECTORS = ['sandbox', 'stripe', 'mercadopago', 'adyen'];
if (!CONNECTORS.includes(connector)) {
  console.error(`--connector: one of ${CONNECTORS.join(', ')}`);
  process.exit(2);
}
const ENTRY = 'src/index.ts';
const ROUTE = 'src/routes/payments/payments.index.ts';
const IDEMPOTENCY_OBJECT = 'src/durable-objects/idempotency-store.ts';

/** From a file on the path (the key), the files it leads to that are followed; a file not named here: all. */
const ENTRY_CUTS = {
  // The fetch handler, and the Durable Object class the refund's operation runs in; the cron, the queue consumer, the
  // rate limiter and the owner-move Workflow are entries of their own.
  [ENTRY]: (to) => ['src/app.ts', IDEMPOTENCY_OBJECT].includes(to),
  // The router and the middleware every request passes, and the payments area; the other areas are registered on the
  // same app once per isolate, and a refund never enters them.
  'src/app.ts': (to) => !to.startsWith('src/routes/') || to.startsWith('src/routes/payments/'),
};
const CUTS = {
  ...ENTRY_CUTS,
  // The idempotency object runs one declared operation by name: the refund's.
  'src/services/operations/registry.ts': (to) => to === 'src/services/payments/create-refund.ts',
  // A payment method names one connector version: a refund asks one processor.
  'src/connectors/registry.ts': (to) =>
    to.startsWith(`src/connectors/${connector}/`) ||
    !CONNECTORS.some((name) => to.startsWith(`src/connectors/${name}/`)),
};
/** `--code` only: one file registers every payment endpoint; the refund's route and handler are followed from it. */
const NAME_CUTS = { [ROUTE]: (name) => name === 'createRefund' };
const cuts = naive ? ENTRY_CUTS : CUTS;
const nameCuts = naive ? {} : NAME_CUTS;
const follows = (from, to, name) =>
  (cuts[from]?.(to) ?? true) && (name === undefined || (nameCuts[from]?.(name) ?? true));

const srcFiles = (dir) =>
  readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? srcFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
const program = code
  ? ts.createProgram(
      srcFiles('src').map((file) => join(ROOT, file)),
      ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), {}, ts.sys).options,
    )
  : null;
const checker = program?.getTypeChecker();
const parsed = new Map();
const sourceOf = (file) => {
  if (program) return program.getSourceFile(join(ROOT, file));
  if (!parsed.has(file))
    parsed.set(file, ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true));
  return parsed.get(file);
};
const fileOf = (node) => relative(ROOT, node.getSourceFile().fileName);

/** The files reached from `roots` (file names), each with the file that first reached it, breadth first. */
function walk(roots) {
  const via = new Map(roots.map((file) => [file, null]));
  const queue = code ? roots.flatMap(rootStatements) : [...roots];
  const walked = new Set(queue);
  while (queue.length > 0) {
    const item = queue.shift();
    const from = code ? fileOf(item) : item;
    const next = code ? reachedStatements(item) : valueImports(sourceOf(item)).map((to) => ({ to, key: to }));
    for (const { to, key, name } of next) {
      if (walked.has(key) || !follows(from, to, name)) continue;
      walked.add(key);
      if (!via.has(to)) via.set(to, from);
      queue.push(key);
    }
  }
  return via;
}

/** `--code`: where a root file's code starts. The entry's fetch handler only; any other file's every statement. */
function rootStatements(file) {
  const source = sourceOf(file);
  if (file !== ENTRY) return [...source.statements];
  const handlers = source.statements.find(ts.isExportAssignment).expression.expression;
  return [handlers.properties.find((property) => property.name.text === 'fetch')];
}

/** `--code`: the top-level statements of src/ that the code of `node` names as values. */
function reachedStatements(node) {
  const found = [];
  const visit = (child) => {
    // Types name no code; an import's names are followed where they are used.
    if (ts.isTypeNode(child) || ts.isInterfaceDeclaration(child) || ts.isTypeAliasDeclaration(child)) return;
    if (ts.isImportDeclaration(child) || ts.isExportDeclaration(child) || ts.isHeritageClause(child)) return;
    if (ts.isIdentifier(child))
      for (const statement of declarationsOf(child))
        found.push({ to: fileOf(statement), key: statement, name: child.text });
    ts.forEachChild(child, visit);
  };
  visit(node);
  return found;
}

/** The top-level statements of src/ declaring, as code, what `identifier` names. */
function declarationsOf(identifier) {
  let symbol = ts.isShorthandPropertyAssignment(identifier.parent)
    ? checker.getShorthandAssignmentValueSymbol(identifier.parent)
    : checker.getSymbolAtLocation(identifier);
  if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  const statements = [];
  for (const declaration of symbol?.declarations ?? []) {
    // A namespace import names its module: what is used of it is named again, member by member.
    if (ts.isSourceFile(declaration) || !fileOf(declaration).startsWith('src/')) continue;
    // A member of a type (a property that a type literal or an interface declares) is no code, wherever it is written.
    let statement = declaration;
    let typed = ts.isPropertySignature(declaration) || ts.isMethodSignature(declaration);
    while (!ts.isSourceFile(statement.parent)) {
      statement = statement.parent;
      typed ||= ts.isTypeNode(statement);
    }
    const declaresType =
      ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement) || ts.isModuleDeclaration(statement);
    if (!typed && !declaresType && !ts.isImportDeclaration(statement)) statements.push(statement);
  }
  return statements;
}

/** The src/ files a source file imports for their values (relative specifiers; packages are not src/ files). */
function valueImports(source) {
  const file = fileOf(source);
  const found = [];
  for (const statement of source.statements) {
    let specifier;
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      const named = clause?.namedBindings;
      const typeOnly =
        clause?.isTypeOnly ||
        (clause &&
          !clause.name &&
          named &&
          ts.isNamedImports(named) &&
          named.elements.length > 0 &&
          named.elements.every((element) => element.isTypeOnly));
      if (!typeOnly) specifier = statement.moduleSpecifier;
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier) {
      const clause = statement.exportClause;
      const typeOnly =
        statement.isTypeOnly ||
        (clause && ts.isNamedExports(clause) && clause.elements.every((element) => element.isTypeOnly));
      if (!typeOnly) specifier = statement.moduleSpecifier;
    }
    if (specifier && ts.isStringLiteral(specifier) && specifier.text.startsWith('.'))
      found.push(relative(ROOT, resolve(ROOT, dirname(file), specifier.text)));
  }
  // `import('...')` loads a module too; src/ has none, and this says so if one appears.
  if (/\bimport\(\s*['"]/.test(source.text)) throw new Error(`${file}: a dynamic import; count it by hand`);
  return found;
}

const whole = walk([ENTRY]);
const fromRoute = walk([ROUTE, IDEMPOTENCY_OBJECT]);
const before = [...whole.keys()].filter((file) => !fromRoute.has(file));
const linesOf = (files) =>
  files.reduce((sum, file) => sum + readFileSync(join(ROOT, file), 'utf8').split('\n').length - 1, 0);
const print = (files, via) => {
  for (const file of files.sort()) console.log(why && via.get(file) ? `${file}  <- ${via.get(file)}` : file);
};

const route = [...fromRoute.keys()];
print(route, fromRoute);
console.log('\nBefore the route (reached only from the Worker fetch):');
print(before, whole);
const counted = code ? 'with code a refund can run' : 'loaded (value imports)';
const branch = naive ? 'entry cuts only' : `one operation, one connector: ${connector}`;
console.log(
  `\n${route.length} files ${counted} from the route to D1 and back, ${linesOf(route)} lines; ` +
    `${before.length} more before the route, ${linesOf(before)} lines (${branch}; method: scripts/refund-path.mjs)`,
);
