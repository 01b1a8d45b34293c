import { env } from 'cloudflare:workers';
import { randomBytes, scryptSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  DUMMY_PASSWORD_HASH,
  PBKDF2_ITERATIONS,
  PRODUCTION_PBKDF2_MAX_ITERATIONS,
  SCRYPT_PARAMS,
  hashPassword,
  hashPasswordPbkdf2,
  verifyPassword,
} from '../../src/domain/passwords.ts';
import { newId } from '../../src/lib/ids.ts';
import { call, expectError, login, type TestUser } from '../helpers/api.ts';
import { trackSecret } from '../helpers/leak-scan.ts';

const PASSWORD = 'a-long-enough-test-password';
const B64 = '[A-Za-z0-9+/]';
const CURRENT_SCRYPT_PREFIX = `$scrypt$ln=${SCRYPT_PARAMS.logN},r=${SCRYPT_PARAMS.r},p=${SCRYPT_PARAMS.p}$`;

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64').replace(/=+$/, '');

/** A scrypt PHC string with chosen parameters, made outside the module under test. */
function scryptHash(password: string, ln: number, r: number, p: number, keyLength = 32): string {
  const salt = randomBytes(16);
  const key = scryptSync(password.normalize('NFKC'), salt, keyLength, { N: 2 ** ln, r, p, maxmem: 64 * 1024 * 1024 });
  return `$scrypt$ln=${ln},r=${r},p=${p}$${b64(salt)}$${b64(key)}`;
}

function phcParts(encoded: string) {
  const [, algorithm, params, salt, key] = encoded.split('$') as [string, string, string, string, string];
  return {
    algorithm,
    params: Object.fromEntries(
      params
        .split(',')
        .map((pair) => pair.split('='))
        .map(([k, v]) => [k, Number(v)]),
    ),
    salt: Buffer.from(salt, 'base64'),
    key: Buffer.from(key, 'base64'),
  };
}

describe('hashPassword / verifyPassword (scrypt)', () => {
  it('round-trips: the right password verifies and needs no rehash', async () => {
    const hash = await hashPassword(PASSWORD);
    expect(await verifyPassword(PASSWORD, hash)).toEqual({ valid: true, needsRehash: false });
  });

  it('refuses a wrong password', async () => {
    const hash = await hashPassword(PASSWORD);
    expect(await verifyPassword(`${PASSWORD}x`, hash)).toEqual({ valid: false, needsRehash: false });
    expect(await verifyPassword(PASSWORD.toUpperCase(), hash)).toEqual({ valid: false, needsRehash: false });
    expect(await verifyPassword('', hash)).toEqual({ valid: false, needsRehash: false });
  });

  it('stores its parameters in a PHC string, with a fresh salt each time', async () => {
    const hash = await hashPassword(PASSWORD);
    expect(hash).toMatch(new RegExp(`^\\$scrypt\\$ln=14,r=8,p=5\\$${B64}{22}\\$${B64}{43}$`));
    const parts = phcParts(hash);
    expect(parts.params).toEqual({ ln: SCRYPT_PARAMS.logN, r: SCRYPT_PARAMS.r, p: SCRYPT_PARAMS.p });
    expect(parts.salt).toHaveLength(SCRYPT_PARAMS.saltLength);
    expect(parts.key).toHaveLength(SCRYPT_PARAMS.keyLength);
    expect(hash).not.toContain(PASSWORD);

    const again = await hashPassword(PASSWORD);
    expect(again).not.toBe(hash);
    expect(phcParts(again).salt.equals(parts.salt)).toBe(false);
  });

  it('normalizes the password (NFKC), so composed and decomposed forms match', async () => {
    const hash = await hashPassword('caf\u00e9-passphrase-long');
    expect((await verifyPassword('cafe\u0301-passphrase-long', hash)).valid).toBe(true);
  });

  it('verifies a hash made outside the module with the same parameters', async () => {
    const hash = scryptHash(PASSWORD, SCRYPT_PARAMS.logN, SCRYPT_PARAMS.r, SCRYPT_PARAMS.p);
    expect(await verifyPassword(PASSWORD, hash)).toEqual({ valid: true, needsRehash: false });
  });

  it('reports needsRehash for weaker scrypt parameters, only when the password is right', async () => {
    for (const [ln, r, p] of [
      [10, 8, 1],
      [14, 8, 1],
      [13, 8, 5],
      [14, 4, 5],
    ] as const) {
      const weak = scryptHash(PASSWORD, ln, r, p);
      expect(await verifyPassword(PASSWORD, weak)).toEqual({ valid: true, needsRehash: true });
      expect(await verifyPassword('wrong-password', weak)).toEqual({ valid: false, needsRehash: false });
    }
  });

  it('refuses, without throwing, a hash whose scrypt parameters exceed what it will compute', async () => {
    // Memory of scrypt is 128 * N * r bytes: these would need 2 GiB and 1 GiB.
    const salt = b64(randomBytes(16));
    const key = b64(randomBytes(32));
    for (const params of ['ln=20,r=16,p=1', 'ln=20,r=8,p=1', 'ln=21,r=8,p=1', 'ln=14,r=17,p=1', 'ln=14,r=8,p=17']) {
      expect(await verifyPassword(PASSWORD, `$scrypt$${params}$${salt}$${key}`)).toEqual({
        valid: false,
        needsRehash: false,
      });
    }
  });

  it('refuses malformed hashes without throwing', async () => {
    const good = await hashPassword(PASSWORD);
    const [, , params, salt, key] = good.split('$');
    for (const encoded of [
      '',
      PASSWORD,
      `$argon2id$v=19,m=65536,t=3,p=4$${salt}$${key}`,
      `$scrypt$${params}$${salt}`,
      `$scrypt$${params}$${salt}$${key}$extra`,
      `scrypt$${params}$${salt}$${key}`,
      `$scrypt$ln=14,r=8$${salt}$${key}`,
      `$scrypt$ln=0,r=8,p=5$${salt}$${key}`,
      `$scrypt$ln=14,r=0,p=5$${salt}$${key}`,
      `$scrypt$ln=14,r=8,p=x$${salt}$${key}`,
      `$scrypt$ln=-14,r=8,p=5$${salt}$${key}`,
      `$pbkdf2-sha256$i=0$${salt}$${key}`,
      `$pbkdf2-sha256$i=$${salt}$${key}`,
    ]) {
      expect(await verifyPassword(PASSWORD, encoded), encoded).toEqual({ valid: false, needsRehash: false });
    }
  });

  it('refuses a hash with an empty or truncated key, which any password would otherwise match', async () => {
    const good = await hashPassword(PASSWORD);
    const [, , params, salt, key] = good.split('$') as [string, string, string, string, string];
    expect(await verifyPassword('any-password-at-all', `$scrypt$${params}$${salt}$`)).toEqual({
      valid: false,
      needsRehash: false,
    });
    expect(await verifyPassword('any-password-at-all', `$pbkdf2-sha256$i=1000$${salt}$`)).toEqual({
      valid: false,
      needsRehash: false,
    });
    // A key cut short is refused even for the right password: a short key is not a safe comparison.
    const short = b64(Buffer.from(key, 'base64').subarray(0, 4));
    expect((await verifyPassword(PASSWORD, `$scrypt$${params}$${salt}$${short}`)).valid).toBe(false);
  });
});

describe('PBKDF2-SHA256 hashes', () => {
  it('keeps the configured iteration count within the production cap of 100,000', () => {
    // Production Workers' WebCrypto throws above this count (local workerd does not), so a higher
    // setting would pass here and break every such login in production.
    expect(PRODUCTION_PBKDF2_MAX_ITERATIONS).toBe(100_000);
    expect(PBKDF2_ITERATIONS).toBeLessThanOrEqual(PRODUCTION_PBKDF2_MAX_ITERATIONS);
    expect(PBKDF2_ITERATIONS).toBeGreaterThan(0);
  });

  it('verifies a PBKDF2 hash and reports it needs a rehash to scrypt', async () => {
    const hash = await hashPasswordPbkdf2(PASSWORD);
    expect(hash).toMatch(new RegExp(`^\\$pbkdf2-sha256\\$i=${PBKDF2_ITERATIONS}\\$${B64}{22}\\$${B64}{43}$`));
    expect(await verifyPassword(PASSWORD, hash)).toEqual({ valid: true, needsRehash: true });
    expect(await verifyPassword('wrong-password', hash)).toEqual({ valid: false, needsRehash: false });
  });

  it('verifies lower iteration counts too (imported hashes)', async () => {
    const hash = await hashPasswordPbkdf2(PASSWORD, 10_000);
    expect(hash).toContain('$i=10000$');
    expect(await verifyPassword(PASSWORD, hash)).toEqual({ valid: true, needsRehash: true });
  });

  it('refuses a hash claiming more iterations than production can compute, even with the right password', async () => {
    // Local workerd computes it, production would throw: refusing here keeps both the same.
    const hash = await hashPasswordPbkdf2(PASSWORD, PRODUCTION_PBKDF2_MAX_ITERATIONS + 1);
    expect(hash).toContain(`$i=${PRODUCTION_PBKDF2_MAX_ITERATIONS + 1}$`);
    expect(await verifyPassword(PASSWORD, hash)).toEqual({ valid: false, needsRehash: false });
    const huge = hash.replace(/\$i=\d+\$/, '$i=600000$');
    expect(await verifyPassword(PASSWORD, huge)).toEqual({ valid: false, needsRehash: false });
  });
});

describe('DUMMY_PASSWORD_HASH', () => {
  it('is a well-formed hash with the current scrypt parameters, so an unknown email costs the same', async () => {
    expect(DUMMY_PASSWORD_HASH.startsWith(CURRENT_SCRYPT_PREFIX)).toBe(true);
    const parts = phcParts(DUMMY_PASSWORD_HASH);
    expect(parts.algorithm).toBe('scrypt');
    expect(parts.params).toEqual({ ln: SCRYPT_PARAMS.logN, r: SCRYPT_PARAMS.r, p: SCRYPT_PARAMS.p });
    expect(parts.salt).toHaveLength(SCRYPT_PARAMS.saltLength);
    expect(parts.key).toHaveLength(SCRYPT_PARAMS.keyLength);
    // Nobody's password: it never verifies.
    for (const guess of ['', 'admin-password', PASSWORD, 'password']) {
      expect(await verifyPassword(guess, DUMMY_PASSWORD_HASH)).toEqual({ valid: false, needsRehash: false });
    }
  });
});

describe('rehash on login (through the API)', () => {
  async function seedUserWithHash(passwordHash: string): Promise<TestUser> {
    trackSecret('password', PASSWORD);
    const now = Date.now();
    const user: TestUser = {
      id: newId('usr'),
      email: `${newId('u')}@example.com`,
      password: PASSWORD,
      role: 'client',
      scopes: ['payments:read'],
    };
    await env.DB.prepare(
      'INSERT INTO users (id, email, name, role, scopes, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    )
      .bind(user.id, user.email, 'Imported User', user.role, JSON.stringify(user.scopes), passwordHash, now, now)
      .run();
    return user;
  }

  const storedHash = async (userId: string) =>
    (await env.DB.prepare('SELECT password_hash FROM users WHERE id = ?')
      .bind(userId)
      .first<{ password_hash: string }>())!.password_hash;

  it('logs in a user with a PBKDF2 hash and upgrades the stored hash to scrypt', async () => {
    const original = await hashPasswordPbkdf2(PASSWORD);
    const user = await seedUserWithHash(original);

    const wrong = await call('POST', '/v1/auth/login', { body: { email: user.email, password: 'not-the-password' } });
    expectError(wrong, 401, 'invalid_credentials');
    expect(await storedHash(user.id)).toBe(original);

    const session = await login(user);
    expect((await call('GET', '/v1/auth/me', { token: session.accessToken })).status).toBe(200);

    const upgraded = await storedHash(user.id);
    expect(upgraded).not.toBe(original);
    expect(upgraded.startsWith(CURRENT_SCRYPT_PREFIX)).toBe(true);
    expect(await verifyPassword(PASSWORD, upgraded)).toEqual({ valid: true, needsRehash: false });

    // The upgraded hash keeps working, and is not rewritten again.
    await login(user);
    expect(await storedHash(user.id)).toBe(upgraded);
  });

  it('upgrades a weaker scrypt hash on login', async () => {
    const original = scryptHash(PASSWORD, 10, 8, 1);
    const user = await seedUserWithHash(original);
    await login(user);
    const upgraded = await storedHash(user.id);
    expect(upgraded.startsWith(CURRENT_SCRYPT_PREFIX)).toBe(true);
    expect((await verifyPassword(PASSWORD, upgraded)).valid).toBe(true);
  });

  it('refuses the login of a user whose stored PBKDF2 hash exceeds the production cap', async () => {
    const user = await seedUserWithHash(await hashPasswordPbkdf2(PASSWORD, PRODUCTION_PBKDF2_MAX_ITERATIONS + 1));
    const res = await call('POST', '/v1/auth/login', { body: { email: user.email, password: PASSWORD } });
    expectError(res, 401, 'invalid_credentials');
  });
});
