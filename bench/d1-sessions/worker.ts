// The Worker of `npm run bench:d1-sessions`: one local D1 database, queried in pairs of ways that differ in one thing
// only, each answered with the same body. `POST /write` adds a row through the binding, so a run can ask whether a
// difference grows with the writes a database has taken.
//   /plain, /session            one read through the binding, or through a session at the primary (as the service
//                               reads and the idempotency object writes last: deps.ts)
//   /round-trips/1, /3          one read, or three in a row (each its own call to D1)
//   /statements/2, /5           one batch of two reads, or of five
//   /columns/narrow, /wide      one batch of two reads of one short column, or of 42 columns named as Drizzle names
//                               them (the service's payment row)
interface Env {
  DB: D1Database;
}

const READ = 'select 1 as one where 1 = ?';
// 42 quoted column names, as long as the service's select of a payment (db/prepared.ts builds it from the schema).
const WIDE = `select ${Array.from({ length: 42 }, (_, i) => `1 as "payments_column_${i}"`).join(', ')} where 1 = ?`;

const reads = (db: D1Database, sql: string, count: number) =>
  Array.from({ length: count }, () => db.prepare(sql).bind(1));

/** The pairs' queries; each answers nothing but that it ran. */
const QUERIES: Record<string, (env: Env) => Promise<unknown>> = {
  '/plain': (env) => env.DB.prepare(READ).bind(1).first(),
  '/session': (env) => env.DB.withSession('first-primary').prepare(READ).bind(1).first(),
  '/round-trips/1': (env) => env.DB.prepare(READ).bind(1).first(),
  '/round-trips/3': async (env) => {
    for (let i = 0; i < 3; i++) await env.DB.prepare(READ).bind(1).first();
  },
  '/statements/2': (env) => env.DB.batch(reads(env.DB, READ, 2)),
  '/statements/5': (env) => env.DB.batch(reads(env.DB, READ, 5)),
  '/columns/narrow': (env) => env.DB.batch(reads(env.DB, READ, 2)),
  '/columns/wide': (env) => env.DB.batch(reads(env.DB, WIDE, 2)),
};

export default {
  async fetch(request, env): Promise<Response> {
    const { pathname } = new URL(request.url);
    const query = QUERIES[pathname];
    if (query) {
      await query(env);
      return Response.json({ ran: true });
    }
    if (pathname === '/write' && request.method === 'POST') {
      await env.DB.batch([
        env.DB.prepare('create table if not exists writes (id integer primary key, at integer not null)'),
        env.DB.prepare('insert into writes (at) values (?)').bind(Date.now()),
      ]);
      return Response.json({ written: true });
    }
    return new Response('not found', { status: 404 });
  },
} satisfies ExportedHandler<Env>;
