import type { WebhookEndpointRow } from '../../../db/schema/index.ts';
import type { Deps } from '../../../deps.ts';
import { newId } from '../../../lib/ids.ts';
import { toIso } from '../../../lib/time.ts';
import { postSignedWebhook } from '../send.ts';
import { signingList } from '../secrets.ts';
import { endpointSecrets } from './secrets.ts';

/**
 * `POST /{id}/test`: a signed `ping` sent now, through the same URL checks, timeout and signing as a
 * delivery. Not an event: nothing is stored, and the endpoint's health (auto-disable) is not touched.
 */
export async function pingEndpoint(deps: Deps, row: WebhookEndpointRow, now = Date.now()) {
  const id = newId('evt');
  const payload = JSON.stringify({
    id,
    type: 'ping',
    created_at: toIso(now),
    data: { webhook_endpoint: { id: row.id } },
  });
  const attempt = await postSignedWebhook(
    deps,
    row.url,
    signingList(await endpointSecrets(deps, row, now)),
    id,
    payload,
    now,
  );
  return { id, attempt };
}
