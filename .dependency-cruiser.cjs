/**
 * The dependency rules of the tree (`npm run lint`, and so CI). Why each: see README, "Project layout".
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'domain-is-pure',
      comment:
        'domain/ holds the rules (money, state machines, idempotency, signing): it imports only domain/ and lib/, never the database, services, HTTP or connectors, so it is testable alone.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/', pathNot: '^src/(domain|lib)/' },
    },
    {
      name: 'connectors-are-stateless',
      comment:
        'A connector maps to and from one processor; persistence is the core’s (services/), so connectors never reach the database or the services.',
      severity: 'error',
      from: { path: '^src/connectors/' },
      to: { path: '^src/(db|services|routes|middleware|durable-objects|queues|jobs)/' },
    },
    {
      name: 'services-speak-the-domain',
      comment:
        'Services, the idempotency runner, jobs, queues, the database layer and connectors return results and throw ServiceErrors; only the HTTP edge (routes/, middleware/, http/, lib/openapi.ts, app.ts) knows statuses, headers and the error envelope.',
      severity: 'error',
      from: { path: '^src/(services|domain|connectors|durable-objects|jobs|queues|db)/' },
      to: { path: '^src/(routes|middleware|http)/|^src/lib/openapi\\.ts$|^src/app\\.ts$' },
    },
    {
      name: 'connectors-speak-zod',
      comment:
        'Connector schemas are plain zod (their JSON Schema is served by GET /v1/connectors through z.toJSONSchema); the OpenAPI flavour of zod and Hono belong to the HTTP layer.',
      severity: 'error',
      from: { path: '^src/connectors/' },
      to: { path: '(^|/)node_modules/(hono|@hono)/' },
    },
    {
      name: 'dashboard-is-an-api-client',
      comment:
        'The dashboard (dashboard/) is a browser client of the public API, as an integration is: it imports its own files, the generated client types (examples/api-types.ts) and its few browser packages, never src/ or anything that runs on the server.',
      severity: 'error',
      from: { path: '^dashboard/' },
      to: {
        pathNot: [
          '^dashboard/',
          '^examples/api-types\\.ts$',
          '(^|/)node_modules/(preact|preact-iso|openapi-fetch|uqr)/',
        ],
      },
    },
    {
      name: 'no-cycles',
      comment:
        'An import cycle makes module initialisation order matter and hides which layer depends on which; type-only imports count too.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'nothing-imports-tests',
      comment: 'Tests, their simulators and helpers stay out of what ships and of the tools.',
      severity: 'error',
      from: { pathNot: '^test' },
      to: { path: '^test' },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true, pathNot: '^cloudflare:' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Packages are cruised as leaves (doNotFollow), not excluded, so that a rule can name a package a layer must not
    // import (connectors-speak-zod).
    exclude: { path: '^(\\.wrangler|public)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.tsx', '.mjs', '.js', '.d.ts', '.json'],
    },
  },
};
