// One read of a local D1 database, through the binding (`/plain`) or through a session at the primary (`/session`,
// as the service reads and the idempotency object writes last: deps.ts), answered with the same body: only the D1
// call differs. `POST /write` adds a row through the binding, so a run can ask whether the difference grows with the
// writes a database has taken.
interface Env {
  DB: D1Database;
}

const READ = 'select 1 as one';

export default {
  async fetch(request, env): Promise<Response> {
    const { pathname } = new URL(request.url);
    if (pathname === '/plain') return Response.json(await env.DB.prepare(READ).first());
    if (pathname === '/session') return Response.json(await env.DB.withSession('first-primary').prepare(READ).first());
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
