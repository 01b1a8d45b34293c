/**
 * The body of a message on the `WEBHOOKS` queue: one delivery that is due, of event `eventId` to the
 * endpoint `endpointId`, or to the payment's `webhook_url` without one (as every message queued before
 * endpoints existed).
 */
export interface WebhookMessage {
  eventId: string;
  endpointId?: string;
  /**
   * The shard holding the event and its delivery, and the event's owner (the consumer asks the directory whether it
   * moved since). Messages queued before shards have neither: their database became `SHARD_0`.
   */
  shard?: string;
  ownerId?: string;
}

type Deployment = Cloudflare.TestEnv | Cloudflare.LiveEnv;

/**
 * The bindings of one deployment, `test` or `live`, as `npm run types` generates them from wrangler.toml into
 * worker-configuration.d.ts (`npm run lint` fails while that file is stale), with two things the generator cannot
 * know: the queue's message type, and that `.dev.vars` overrides a var locally (a var is typed by its deployed
 * value, but `npm start` runs with `ALLOW_INSECURE_WEBHOOKS=true`).
 */
export type Env = Omit<Deployment, 'WEBHOOKS' | 'ALLOW_INSECURE_WEBHOOKS'> & {
  WEBHOOKS: Queue<WebhookMessage>;
  ALLOW_INSECURE_WEBHOOKS: string;
};
