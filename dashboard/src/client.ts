import createClient from 'openapi-fetch';
import type { components, paths } from '../../examples/api-types.ts';

/** The generated client types are the only thing the dashboard knows of the API (.dependency-cruiser.cjs). */
export type Schemas = components['schemas'];

/** openapi-fetch over this origin's API: every call the dashboard makes is one an integration can make. */
export const client = createClient<paths>({ baseUrl: location.origin });
