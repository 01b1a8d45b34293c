// One read of a local D1 database, through the binding (`/plain`) or through a session at the primary
// (`/session`, as the service reads and writes: deps.ts), answered with the same body. Only the D1 call differs.
interface Env {
  DB: D1Database;
}

const READ = 'select 1 as one';

export default {
  async fetch(request, env): Promise<Response> {
    const { pathname } = new URL(request.url);
    if (pathname === '/plain') return Response.json(await env.DB.prepare(READ).first());
    if (pathname === '/session') return Response.json(await env.DB.withSession('first-primary').prepare(READ).first());
    return new Response('not found', { status: 404 });
  },
} satisfies ExportedHandler<Env>;
