import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import {
  CredentialDecryptionError,
  decryptJson,
  encryptJson,
  parseKeyRing,
  type EncryptionContext,
} from '../../src/domain/credential-crypto.ts';
import { base64ToBytes, bytesToBase64, bytesToBase64Url } from '../../src/lib/encoding.ts';

const newKey = () => bytesToBase64(crypto.getRandomValues(new Uint8Array(32)));
const A = newKey();
const B = newKey();

const context: EncryptionContext = {
  purpose: 'payment_method.credentials',
  resourceId: '5b0e6a4e-2f5c-4b8e-9a51-3c1f0d7e2a10',
  environment: 'test',
};

const credentials = {
  api_key: 'sk-processor-very-secret-4242',
  nested: { merchant: { id: 'm_123', tokens: ['tok_alpha', 'tok_beta'] }, retries: 3, live: false, note: null },
  unicode: 'ñandú ✓',
};

const fromBase64Url = (text: string) =>
  base64ToBytes(text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4));

/** Flips one bit of byte `index` (negative counts from the end) in part `part` of the envelope. */
function flipBit(envelope: string, part: 2 | 3, index: number): string {
  const parts = envelope.split('.');
  const bytes = fromBase64Url(parts[part]!);
  const at = index < 0 ? bytes.length + index : index;
  bytes[at]! ^= 0x01;
  parts[part] = bytesToBase64Url(bytes);
  return parts.join('.');
}

async function expectDecryptionFailure(promise: Promise<unknown>) {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CredentialDecryptionError);
  expect((error as Error).message).toBe('Stored credentials could not be decrypted');
  return error as Error;
}

describe('encryptJson / decryptJson', () => {
  const ring = parseKeyRing(`k1:${A}`);

  it('round-trips a nested JSON object', async () => {
    const envelope = await encryptJson(ring, credentials, context);
    expect(await decryptJson(ring, envelope, context)).toEqual(credentials);
  });

  it('round-trips other JSON values', async () => {
    for (const value of ['text', 0, true, null, [1, 'two', { three: 3 }], {}]) {
      expect(await decryptJson(ring, await encryptJson(ring, value, context), context)).toEqual(value);
    }
  });

  it('writes v1.<kid>.<base64url 12-byte nonce>.<base64url ciphertext and 16-byte tag>', async () => {
    const envelope = await encryptJson(ring, credentials, context);
    expect(envelope).toMatch(/^v1\.k1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
    const [, , nonce, sealed] = envelope.split('.');
    expect(fromBase64Url(nonce!)).toHaveLength(12);
    expect(fromBase64Url(sealed!)).toHaveLength(new TextEncoder().encode(JSON.stringify(credentials)).length + 16);
  });

  it('never puts the plaintext in the envelope, in any encoding', async () => {
    const envelope = await encryptJson(ring, credentials, context);
    const secret = credentials.api_key;
    const secretBytes = new TextEncoder().encode(secret);
    for (const form of [
      secret,
      bytesToBase64(secretBytes),
      bytesToBase64Url(secretBytes),
      'tok_alpha',
      JSON.stringify(credentials),
    ]) {
      expect(envelope).not.toContain(form);
    }
    // Byte for byte, too: the sealed bytes read as text do not hold the secret.
    const sealed = String.fromCharCode(...fromBase64Url(envelope.split('.')[3]!));
    expect(sealed).not.toContain(secret);
  });

  it('fails on a flipped bit in the ciphertext body, the nonce or the tag', async () => {
    const envelope = await encryptJson(ring, credentials, context);
    await expectDecryptionFailure(decryptJson(ring, flipBit(envelope, 3, 0), context));
    await expectDecryptionFailure(decryptJson(ring, flipBit(envelope, 3, 10), context));
    await expectDecryptionFailure(decryptJson(ring, flipBit(envelope, 2, 0), context));
    await expectDecryptionFailure(decryptJson(ring, flipBit(envelope, 2, -1), context));
    await expectDecryptionFailure(decryptJson(ring, flipBit(envelope, 3, -1), context));
    await expectDecryptionFailure(decryptJson(ring, flipBit(envelope, 3, -16), context));
    // The untouched envelope still opens: the failures come from the flips alone.
    expect(await decryptJson(ring, envelope, context)).toEqual(credentials);
  });

  it('fails when the additional authenticated data differs in any field', async () => {
    const envelope = await encryptJson(ring, credentials, context);
    await expectDecryptionFailure(
      decryptJson(ring, envelope, { ...context, resourceId: context.resourceId.replace(/0$/, '1') }),
    );
    await expectDecryptionFailure(decryptJson(ring, envelope, { ...context, purpose: 'payment_method.configuration' }));
    await expectDecryptionFailure(decryptJson(ring, envelope, { ...context, environment: 'live' }));
  });

  it('fails for a ciphertext moved to another payment method', async () => {
    const other = { ...context, resourceId: crypto.randomUUID() };
    const mine = await encryptJson(ring, credentials, context);
    const theirs = await encryptJson(ring, { api_key: 'someone-else' }, other);
    await expectDecryptionFailure(decryptJson(ring, mine, other));
    await expectDecryptionFailure(decryptJson(ring, theirs, context));
  });

  it('fails for a ciphertext moved to the other environment, even with the same key', async () => {
    const live = await encryptJson(ring, credentials, { ...context, environment: 'live' });
    await expectDecryptionFailure(decryptJson(ring, live, context));
  });

  it('fails for a ciphertext moved to another purpose', async () => {
    const config = await encryptJson(ring, credentials, { ...context, purpose: 'payment_method.configuration' });
    await expectDecryptionFailure(decryptJson(ring, config, context));
  });

  it('binds the key id: relabelling an envelope with another kid of the same key fails', async () => {
    const twin = parseKeyRing(`k1:${A},k9:${A}`);
    const envelope = await encryptJson(twin, credentials, context);
    expect(await decryptJson(twin, envelope, context)).toEqual(credentials);
    await expectDecryptionFailure(decryptJson(twin, envelope.replace(/^v1\.k1\./, 'v1.k9.'), context));
  });

  it('fails for malformed envelopes with the same generic error', async () => {
    const envelope = await encryptJson(ring, credentials, context);
    const [, kid, nonce, sealed] = envelope.split('.') as [string, string, string, string];
    const malformed = [
      '',
      'not-an-envelope',
      `v2.${kid}.${nonce}.${sealed}`,
      `v1.${kid}.${nonce}`,
      `v1.${kid}.${nonce}.${sealed}.extra`,
      `v1..${nonce}.${sealed}`,
      `v1.${kid}.${nonce.slice(0, -2)}.${sealed}`,
      `v1.${kid}.${nonce}.${sealed.slice(0, 20)}`,
      `v1.${kid}.${nonce}.`,
      `v1.${kid}.${nonce}.${sealed}=`,
      `v1.${kid}.${nonce}.${sealed.replace(/-/g, '+').replace(/_/g, '/')}+`,
      `v1.${kid}.${nonce}.${sealed.slice(0, -1)}`,
    ];
    for (const bad of malformed) {
      const error = await expectDecryptionFailure(decryptJson(ring, bad, context));
      if (bad.length > 10) expect(error.message).not.toContain(bad);
    }
    await expectDecryptionFailure(decryptJson(ring, 42 as unknown as string, context));
  });

  it('fails for an unknown kid and for a ring not made by parseKeyRing', async () => {
    const envelope = await encryptJson(ring, credentials, context);
    await expectDecryptionFailure(decryptJson(parseKeyRing(`k2:${A}`), envelope, context));
    await expectDecryptionFailure(decryptJson({ currentKid: 'k1', kids: ['k1'] }, envelope, context));
  });

  it('does not reveal the plaintext, key or envelope in a decryption error', async () => {
    const envelope = await encryptJson(ring, credentials, context);
    const error = await expectDecryptionFailure(decryptJson(ring, envelope, { ...context, environment: 'live' }));
    const dump = `${error.message} ${error.stack ?? ''} ${JSON.stringify(error)} ${String((error as { cause?: unknown }).cause ?? '')}`;
    for (const secret of [credentials.api_key, A, envelope, envelope.split('.')[3]!])
      expect(dump).not.toContain(secret);
  });

  it('refuses invalid contexts on encryption without quoting the value', async () => {
    const bad: EncryptionContext[] = [
      { ...context, purpose: '' },
      { ...context, resourceId: '' },
      { ...context, purpose: 'a|b' },
      { ...context, resourceId: 'x|test|y' },
      { ...context, environment: 'staging' as never },
    ];
    for (const c of bad) await expect(encryptJson(ring, credentials, c)).rejects.toThrow(/Invalid encryption context/);
    const cyclic: Record<string, unknown> = { api_key: credentials.api_key };
    cyclic.self = cyclic;
    for (const value of [undefined, () => 1, cyclic, 1n]) {
      const error = await encryptJson(ring, value, context).then(
        () => null,
        (e: Error) => e,
      );
      expect(error?.message).toBe('Value to encrypt is not JSON-serialisable');
    }
  });

  it('uses a fresh nonce for every one of 10,000 encryptions', async () => {
    const nonces = new Set<string>();
    const envelopes = new Set<string>();
    for (let i = 0; i < 10_000; i++) {
      const envelope = await encryptJson(ring, credentials, context);
      envelopes.add(envelope);
      nonces.add(envelope.split('.')[2]!);
    }
    expect(nonces.size).toBe(10_000);
    expect(envelopes.size).toBe(10_000);
  });
});

describe('key rotation', () => {
  it('decrypts old kids after rotation, encrypts with the new current key', async () => {
    const before = parseKeyRing(`k1:${A}`);
    const old = await encryptJson(before, credentials, context);
    expect(old.split('.')[1]).toBe('k1');

    const rotated = parseKeyRing(`k2:${B},k1:${A}`);
    expect(rotated.currentKid).toBe('k2');
    expect(await decryptJson(rotated, old, context)).toEqual(credentials);

    const fresh = await encryptJson(rotated, credentials, context);
    expect(fresh.split('.')[1]).toBe('k2');
    expect(await decryptJson(rotated, fresh, context)).toEqual(credentials);
    // The ring before rotation knows nothing of k2.
    await expectDecryptionFailure(decryptJson(before, fresh, context));
  });

  it('fails once the old key is removed from the ring', async () => {
    const old = await encryptJson(parseKeyRing(`k1:${A}`), credentials, context);
    await expectDecryptionFailure(decryptJson(parseKeyRing(`k2:${B}`), old, context));
  });

  it('fails when a kid is reused for different key bytes', async () => {
    const old = await encryptJson(parseKeyRing(`k1:${A}`), credentials, context);
    await expectDecryptionFailure(decryptJson(parseKeyRing(`k1:${B}`), old, context));
  });
});

describe('parseKeyRing', () => {
  it('takes the first entry as current and keeps every kid in order', () => {
    const ring = parseKeyRing(`k2:${B},k1:${A}`);
    expect(ring.currentKid).toBe('k2');
    expect(ring.kids).toEqual(['k2', 'k1']);
  });

  it('tolerates whitespace around entries and URL-safe or unpadded base64', async () => {
    const urlSafe = bytesToBase64Url(base64ToBytes(B));
    const ring = parseKeyRing(`  k_2-x : ${urlSafe} ,\n  k1:${A}  `);
    expect(ring.kids).toEqual(['k_2-x', 'k1']);
    const envelope = await encryptJson(ring, credentials, context);
    expect(await decryptJson(parseKeyRing(`k_2-x:${B}`), envelope, context)).toEqual(credentials);
  });

  it('parses the secret the test deployment is configured with', () => {
    expect(parseKeyRing(env.CREDENTIALS_ENCRYPTION_KEYS).currentKid).toBe('k1');
  });

  it('keeps key material out of the ring object', () => {
    const ring = parseKeyRing(`k2:${B},k1:${A}`);
    const shown = JSON.stringify(ring) + String(Object.values(ring));
    expect(shown).not.toContain(A);
    expect(shown).not.toContain(B);
    expect(Object.isFrozen(ring)).toBe(true);
  });

  const short = bytesToBase64(crypto.getRandomValues(new Uint8Array(31)));
  const long = bytesToBase64(crypto.getRandomValues(new Uint8Array(33)));
  const cases: Array<[string, string]> = [
    ['empty', ''],
    ['only whitespace', '   '],
    ['a 31-byte key', `k1:${short}`],
    ['a 33-byte key', `k1:${long}`],
    ['a 16-byte key', `k1:${bytesToBase64(crypto.getRandomValues(new Uint8Array(16)))}`],
    ['a key that is not base64', `k1:${A.slice(0, 10)}!!${A.slice(12)}`],
    ['a duplicate kid', `k1:${A},k1:${B}`],
    ['a kid with a dot', `k.1:${A}`],
    ['a kid with a space inside', `k 1:${A}`],
    ['a kid of 33 characters', `${'k'.repeat(33)}:${A}`],
    ['an empty kid', `:${A}`],
    ['a missing key', 'k1:'],
    ['an entry without a kid', A],
    ['an empty entry', `k1:${A},,k2:${B}`],
    ['a trailing comma', `k1:${A},`],
    ['a bad second entry', `k1:${A},k2:${short}`],
  ];
  it.each(cases)('rejects %s without quoting key material', (_name, secret) => {
    let error: unknown;
    try {
      parseKeyRing(secret);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    expect(message).toMatch(/^CREDENTIALS_ENCRYPTION_KEYS is invalid: /);
    for (const material of [A, B, short, long, A.slice(0, 10), A.slice(12, 30)])
      expect(message).not.toContain(material);
  });

  it('accepts a 32-byte kid', () => {
    expect(parseKeyRing(`${'k'.repeat(32)}:${A}`).currentKid).toBe('k'.repeat(32));
  });
});
