import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses, jsonContent } from '../../lib/openapi.ts';
import { OpenApiDescriptionSchema } from './docs.schemas.ts';

const ETag = {
  description: 'Strong: the SHA-256 of the exact bytes of the description. Keep it as its checksum.',
  required: true,
  schema: {
    type: 'string' as const,
    pattern: '^"[0-9a-f]{64}"$',
    maxLength: 66,
    example: '"3f5a0c4e9b1d7a2f6c8e0b4d9a7f1c3e5b2d8f0a6c4e1b9d7f3a5c0e8b2d6f4a"',
  },
};

export const getOpenApiDescription = createRoute({
  operationId: 'getOpenApiDescription',
  method: 'get',
  path: '/openapi.json',
  tags: ['API description'],
  summary: 'This description (OpenAPI 3.1)',
  description:
    'The contract this deployment serves: every operation, schema, header, error code and webhook. No credential. `ETag` is the SHA-256 of its bytes; send it back in `If-None-Match` and a description that has not changed answers `304` without a body. `Cache-Control: no-cache`: revalidate before every use.',
  security: [],
  request: {
    headers: z.object({
      'if-none-match': z.string().max(1024).optional().openapi({
        description: 'An `ETag` of this description you kept: `304` while it is still the served one.',
        example: '"3f5a0c4e9b1d7a2f6c8e0b4d9a7f1c3e5b2d8f0a6c4e1b9d7f3a5c0e8b2d6f4a"',
      }),
    }),
  },
  responses: {
    200: { ...jsonContent(OpenApiDescriptionSchema, 'The description.'), headers: { ETag } },
    304: { description: 'Unchanged since the `ETag` sent in `If-None-Match`; no body.', headers: { ETag } },
    ...errorResponses(),
  },
});
