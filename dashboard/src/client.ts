import createClient from 'openapi-fetch';
import type { paths } from '../../examples/api-types.ts';

/** The generated client types are the only thing the dashboard knows of the API (.dependency-cruiser.cjs). */
export type { Schemas } from './schemas.ts';

/** openapi-fetch over this origin's API: every call the dashboard makes is one an integration can make. */
export const client = createClient<paths>({ baseUrl: location.origin });
