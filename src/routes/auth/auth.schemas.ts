import { z } from '@hono/zod-openapi';
import { UserSchema } from '../users/users.schemas.ts';

export const LoginBody = z
  .strictObject({
    email: z.string().min(1).max(254).openapi({ example: 'admin@example.com' }),
    password: z.string().min(1).max(256).openapi({ example: 'admin-password' }),
  })
  .openapi('LoginRequest');

const RefreshToken = z.string().min(1).max(512).openapi({ example: 'rt_Q2hhbmdlIG1lIGluIHlvdXIgY2xpZW50IQ' });

export const RefreshBody = z.strictObject({ refresh_token: RefreshToken }).openapi('RefreshRequest');

export const LogoutBody = z.strictObject({ refresh_token: RefreshToken.optional() }).openapi('LogoutRequest');

export const SessionTokensSchema = z
  .object({
    access_token: z.string().openapi({ description: 'JWT (HS256, `typ` `at+jwt`), sent as `Authorization: Bearer`.' }),
    refresh_token: z.string().openapi({ description: 'Opaque; valid 30 days; exchangeable once.' }),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int().openapi({ description: 'Access token lifetime in seconds.', example: 900 }),
    user: UserSchema,
  })
  .openapi('SessionTokens');
