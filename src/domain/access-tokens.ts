import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import type { Environment } from './environment.ts';
import type { Role, Scope } from './scopes.ts';

/**
 * User access tokens: HS256 JWTs signed with the deployment's own secret. Verification pins the
 * algorithm, the `at+jwt` type (RFC 9068), the issuer, the environment's audience and the expiry, so a
 * token of `test` is refused by `live` twice over (other key, other audience).
 */
export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60;
export const ISSUER = 'payment-service';
const ALGORITHM = 'HS256';
const TYPE = 'at+jwt';

export const audienceFor = (environment: Environment) => `payment-service:${environment}`;

export interface AccessTokenClaims {
  sub: string;
  sid: string;
  role: Role;
  scopes: Scope[];
  env: Environment;
}

function signingKey(secret: string): Uint8Array {
  const key = new TextEncoder().encode(secret);
  // A short key would make HS256 guessable offline; refuse to run rather than sign with it.
  if (key.length < 32) throw new Error('JWT_SIGNING_KEY must be at least 32 bytes');
  return key;
}

export async function signAccessToken(secret: string, claims: AccessTokenClaims, now = Date.now()): Promise<string> {
  const iat = Math.floor(now / 1000);
  return new SignJWT({ role: claims.role, scopes: claims.scopes, env: claims.env, sid: claims.sid })
    .setProtectedHeader({ alg: ALGORITHM, typ: TYPE })
    .setSubject(claims.sub)
    .setIssuer(ISSUER)
    .setAudience(audienceFor(claims.env))
    .setIssuedAt(iat)
    .setExpirationTime(iat + ACCESS_TOKEN_TTL_SECONDS)
    .setJti(crypto.randomUUID())
    .sign(signingKey(secret));
}

/** Returns the claims of a valid token, or null for anything else (forged, expired, wrong audience...). */
export async function verifyAccessToken(
  secret: string,
  token: string,
  environment: Environment,
): Promise<AccessTokenClaims | null> {
  try {
    const { payload } = await jwtVerify(token, signingKey(secret), {
      algorithms: [ALGORITHM],
      issuer: ISSUER,
      audience: audienceFor(environment),
      typ: TYPE,
      requiredClaims: ['sub', 'exp', 'iat', 'jti', 'sid', 'env'],
    });
    if (payload.env !== environment || typeof payload.sub !== 'string' || typeof payload.sid !== 'string') return null;
    return {
      sub: payload.sub,
      sid: payload.sid,
      role: payload.role as Role,
      scopes: (payload.scopes as Scope[]) ?? [],
      env: environment,
    };
  } catch (error) {
    if (error instanceof joseErrors.JOSEError) return null;
    throw error;
  }
}
