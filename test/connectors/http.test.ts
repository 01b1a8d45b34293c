import { describe, expect, it } from 'vitest';
import { fetchFailure, sendRequest, type ProcessorHttp } from '../../src/connectors/http.ts';
import { MERCADOPAGO_HTTP } from '../../src/connectors/mercadopago/transformers.ts';
import { STRIPE_HTTP } from '../../src/connectors/stripe/transformers.ts';
import { connectorError } from '../helpers/connectors.ts';

const HTTP: ProcessorHttp = {
  timeoutMs: 5_000,
  timeout: { code: 'p_timeout', message: 'P did not answer in time.' },
  network: { code: 'p_network', message: 'P is unavailable.' },
};

describe('connectors/http: one request path for every processor', () => {
  it('a fetch aborted by its timeout → timeout; any other fetch failure (or a thrown non-error) → unavailable, in the processor’s words', () => {
    expect(fetchFailure(new DOMException('timed out', 'TimeoutError'), HTTP)).toMatchObject({
      kind: 'timeout',
      processorCode: 'p_timeout',
      message: 'P did not answer in time.',
    });
    expect(fetchFailure(new DOMException('aborted', 'AbortError'), HTTP)).toMatchObject({
      kind: 'timeout',
      processorCode: 'p_timeout',
    });
    expect(fetchFailure(new TypeError('fetch failed'), HTTP)).toMatchObject({
      kind: 'unavailable',
      processorCode: 'p_network',
      message: 'P is unavailable.',
    });
    expect(fetchFailure('weird', HTTP)).toMatchObject({ kind: 'unavailable', processorCode: 'p_network' });
    expect(fetchFailure(null, HTTP).kind).toBe('unavailable');
  });

  it('each processor keeps its own codes and a timeout of its own', () => {
    expect(fetchFailure(new DOMException('t', 'TimeoutError'), STRIPE_HTTP).processorCode).toBe('stripe_timeout');
    expect(fetchFailure(new TypeError('x'), STRIPE_HTTP).processorCode).toBe('stripe_network_error');
    expect(fetchFailure(new DOMException('t', 'TimeoutError'), MERCADOPAGO_HTTP).processorCode).toBe('timeout');
    expect(fetchFailure(new TypeError('x'), MERCADOPAGO_HTTP).processorCode).toBe('network_error');
    expect(STRIPE_HTTP.timeoutMs).toBe(15_000);
    expect(MERCADOPAGO_HTTP.timeoutMs).toBe(15_000);
  });

  it('sends method, headers and body with an abort signal, and returns every answer (2xx or not) with its JSON', async () => {
    const seen: { url: string; init: RequestInit | undefined }[] = [];
    const fake: typeof fetch = async (input, init) => {
      seen.push({ url: String(input), init });
      return new Response(JSON.stringify({ error: { code: 'x' } }), { status: 402, headers: { 'X-Answer': 'yes' } });
    };
    const answer = await sendRequest(fake, HTTP, {
      method: 'POST',
      url: 'https://p.example/v1/things',
      headers: { 'Content-Type': 'application/json' },
      body: '{"a":1}',
    });
    expect(answer).toMatchObject({ status: 402, ok: false, json: { error: { code: 'x' } } });
    expect(answer.headers.get('x-answer')).toBe('yes');
    expect(seen).toHaveLength(1);
    expect(seen[0]!.url).toBe('https://p.example/v1/things');
    expect(seen[0]!.init).toMatchObject({
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"a":1}',
    });
    expect(seen[0]!.init?.signal).toBeInstanceOf(AbortSignal);
    expect(seen[0]!.init?.signal?.aborted).toBe(false);
  });

  it('a GET carries no body; an empty or non-JSON body reads as null', async () => {
    let init: RequestInit | undefined;
    const empty: typeof fetch = async (_input, i) => ((init = i), new Response(null, { status: 204 }));
    expect((await sendRequest(empty, HTTP, { method: 'GET', url: 'https://p.example/', headers: {} })).json).toBeNull();
    expect(init && 'body' in init).toBe(false);
    const html: typeof fetch = async () => new Response('<html>bad gateway</html>', { status: 502 });
    expect(await sendRequest(html, HTTP, { method: 'GET', url: 'https://p.example/', headers: {} })).toMatchObject({
      status: 502,
      ok: false,
      json: null,
    });
  });

  it('a fetch that throws, or a body cut off while reading, is the processor’s timeout or network error', async () => {
    const timingOut: typeof fetch = async () => {
      throw new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    };
    expect(
      await connectorError(sendRequest(timingOut, HTTP, { method: 'GET', url: 'https://p.example/', headers: {} })),
    ).toMatchObject({ kind: 'timeout', processorCode: 'p_timeout' });
    const cut: typeof fetch = async () =>
      new Response(new ReadableStream({ pull: (controller) => controller.error(new TypeError('connection reset')) }), {
        status: 200,
      });
    expect(
      await connectorError(sendRequest(cut, HTTP, { method: 'GET', url: 'https://p.example/', headers: {} })),
    ).toMatchObject({ kind: 'unavailable', processorCode: 'p_network' });
  });
});
