import { createRoute } from '@hono/zod-openapi';
import { requireAuth } from '../../middleware/auth.ts';
import { bearerSecurity, dataEnvelope, errorResponses, jsonBody, jsonContent } from '../../lib/openapi.ts';
import { UserSchema } from '../users/users.schemas.ts';
import { LoginBody, LogoutBody, RefreshBody, SessionTokensSchema } from './auth.schemas.ts';

const tags = ['Sessions'];

export const login = createRoute({
  operationId: 'login',
  method: 'post',
  path: '/v1/auth/login',
  tags,
  summary: 'Log in',
  description:
    'Exchanges email and password for an access token (15 minutes) and a refresh token (30 days). Rate limited to 10 attempts a minute per client address and per email: `429 rate_limited` with `Retry-After` (seconds).',
  security: [],
  request: { body: jsonBody(LoginBody) },
  responses: {
    201: jsonContent(dataEnvelope(SessionTokensSchema), 'A new session.'),
    ...errorResponses('invalid_credentials', 'rate_limited'),
  },
});

export const refresh = createRoute({
  operationId: 'refreshSession',
  method: 'post',
  path: '/v1/auth/refresh',
  tags,
  summary: 'Rotate the refresh token',
  description:
    'Returns a new access token and a new refresh token; replace both at once. The presented token stops working. Presenting a token that was already exchanged (or exchanging one token twice at once) revokes the whole session: `401 invalid_refresh_token`, not retryable; log in again. Rate limited like login.',
  security: [],
  request: { body: jsonBody(RefreshBody) },
  responses: {
    201: jsonContent(dataEnvelope(SessionTokensSchema), 'The rotated session tokens.'),
    ...errorResponses('invalid_refresh_token', 'rate_limited'),
  },
});

export const logout = createRoute({
  operationId: 'logout',
  method: 'post',
  path: '/v1/auth/logout',
  tags,
  summary: 'Log out',
  description:
    'Ends the session of the given `refresh_token`, or, without one, the session of the bearer access token. Its refresh tokens and access tokens stop working. Answers 204 also for a token that is unknown or already logged out.',
  security: [...bearerSecurity, {}],
  request: { body: { ...jsonBody(LogoutBody), required: false } },
  responses: {
    204: { description: 'The session is ended; discard both tokens.' },
    ...errorResponses('unauthorized'),
  },
});

export const me = createRoute({
  operationId: 'getCurrentUser',
  method: 'get',
  path: '/v1/auth/me',
  tags,
  summary: 'The current user',
  description:
    'The user of the access token, with role and scopes. Needs a user access token (an API key gets `401 unauthorized`).',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'user' })],
  responses: {
    200: jsonContent(dataEnvelope(UserSchema), 'The user of the access token.'),
    ...errorResponses('unauthorized'),
  },
});
