import { z } from '@hono/zod-openapi';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../../domain/accounts.ts';
import { BUSINESS_SCOPES, ROLES } from '../../domain/scopes.ts';
import { Timestamp } from '../../lib/openapi.ts';

export const ScopeSchema = z.enum(BUSINESS_SCOPES).openapi('Scope');
export const RoleSchema = z.enum(ROLES).openapi('Role');

export const UserSchema = z
  .object({
    id: z.string().openapi({ example: 'usr_4n8d2k7q1x9m3v5b0c6z' }),
    email: z.string().openapi({ example: 'merchant@example.com' }),
    name: z.string().openapi({ example: 'Corner Shop' }),
    role: RoleSchema,
    scopes: z.array(ScopeSchema),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('User');

const Email = z.email().max(254).openapi({ example: 'merchant@example.com' });
const Name = z.string().trim().min(1).max(200).openapi({ example: 'Corner Shop' });
export const Password = z
  .string()
  .min(MIN_PASSWORD_LENGTH)
  .max(MAX_PASSWORD_LENGTH)
  .openapi({
    example: 'correct-horse-battery',
    description: `${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters.`,
  });

export const CreateUserBody = z
  .strictObject({
    email: Email,
    name: Name,
    password: Password,
    role: RoleSchema.optional().openapi({ description: 'Default `client`.' }),
    scopes: z
      .array(ScopeSchema)
      .max(BUSINESS_SCOPES.length * 2)
      .optional()
      .openapi({ description: 'Default: all five business scopes.' }),
  })
  .openapi('CreateUserRequest');

export const UpdateUserBody = z
  .strictObject({
    email: Email.optional(),
    name: Name.optional(),
    role: RoleSchema.optional().openapi({ description: 'Admins only.' }),
    scopes: z
      .array(ScopeSchema)
      .max(BUSINESS_SCOPES.length * 2)
      .optional()
      .openapi({ description: 'Admins only.' }),
  })
  .openapi('UpdateUserRequest');
