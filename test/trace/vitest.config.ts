import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { defineConfig } from 'vitest/config';
import suites from '../../vitest.config.ts';

/**
 * `npx vitest run --config test/trace/vitest.config.ts`: the files of src/ whose functions a refund runs, measured
 * (docs/architecture.md, "The files on a refund's path"; scripts/refund-path.mjs counts them statically). The suites'
 * own configuration (workerd, real D1, Durable Objects, the test deployment), with every function of src/ made to
 * report its file as it starts, for the one run in refund-path.trace.ts. Not part of `npm test`: it measures (it fails
 * only if the refund does). The request path itself is not touched: the instrumentation exists only in this run.
 */
const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** `code` with a call reporting `file` at the start of each function body (a constructor's: after `super`). */
function instrument(code: string, file: string): string {
  const source = ts.createSourceFile(file, code, ts.ScriptTarget.Latest, true);
  const report = `globalThis.__refundPathTrace?.(${JSON.stringify(file)})`;
  const inserts: { at: number; text: string }[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const body = node.body as ts.Node;
      if (ts.isBlock(body)) {
        const first = body.statements[0];
        const callsSuper =
          ts.isConstructorDeclaration(node) &&
          first !== undefined &&
          ts.isExpressionStatement(first) &&
          ts.isCallExpression(first.expression) &&
          first.expression.expression.kind === ts.SyntaxKind.SuperKeyword;
        inserts.push(
          callsSuper ? { at: first.end, text: `${report};` } : { at: body.getStart() + 1, text: `${report};` },
        );
      } else {
        // An arrow's expression body: the report, then the expression as it was (an object literal keeps its parens).
        inserts.push({ at: body.getStart(), text: `(${report}, (` }, { at: body.end, text: '))' });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  let out = code;
  for (const { at, text } of inserts.sort((a, b) => b.at - a.at)) out = out.slice(0, at) + text + out.slice(at);
  return out;
}

export default defineConfig(async (env) => {
  const config = await suites(env);
  return {
    ...config,
    plugins: [
      {
        name: 'refund-path-trace',
        // Before TypeScript is stripped, so that positions are the source's.
        enforce: 'pre' as const,
        transform(code: string, id: string) {
          const path = id.split('?')[0]!;
          if (!path.startsWith(SRC) || !path.endsWith('.ts')) return null;
          return { code: instrument(code, `src/${path.slice(SRC.length)}`), map: null };
        },
      },
      ...(config.plugins ?? []),
    ],
    test: { ...config.test, include: ['test/trace/refund-path.trace.ts'] },
  };
});
