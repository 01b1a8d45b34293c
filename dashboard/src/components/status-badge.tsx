const GOOD = new Set([
  'approved',
  'done',
  'succeeded',
  'active',
  'enabled',
  'won',
  'online',
  'refunded',
  'partially_refunded',
]);
const BAD = new Set(['declined', 'failed', 'expired', 'dead', 'lost', 'revoked', 'inactive', 'disabled', 'offline']);

/** A status as the API names it; the colour only repeats what the word says. */
export function StatusBadge({ status }: { status: string }) {
  const tone = GOOD.has(status) ? ' good' : BAD.has(status) ? ' bad' : '';
  return <span class={`status${tone}`}>{status.replaceAll('_', ' ')}</span>;
}
