import type { components } from '../../examples/api-types.ts';

/**
 * The API's schemas, from the generated client types. Apart from client.ts (which needs the page's `location`), so
 * the modules without DOM that the Node tests import (vocabulary.ts, report.ts) type-check without it.
 */
export type Schemas = components['schemas'];
