/**
 * `webhook_url` validation against server-side request forgery. The service POSTs to
 * this URL on a merchant's behalf, so a URL that reaches the service's own network (loopback, private
 * ranges, cloud metadata endpoints) would turn it into a proxy into places the merchant cannot reach.
 *
 * Everything is decided on the hostname as the WHATWG URL parser normalizes it, because that is the form
 * `fetch` connects to: `127.1`, `2130706433`, `0x7f000001`, `0177.0.0.1` and full-width digits all come
 * out as `127.0.0.1`, and `[::ffff:127.0.0.1]` as `[::ffff:7f00:1]`. Checking the raw text instead would
 * let any spelling the checker does not know through.
 *
 * What a pure check cannot see: a public name whose DNS answer is a private address (or changes between
 * check and delivery). The delivery path re-runs this check on the stored URL before every attempt, and
 * Workers' `fetch` leaves from Cloudflare's edge, which has no route into the service's private network.
 */

import type { Environment } from './environment.ts';

export type WebhookUrlResult = { ok: true; url: string } | { ok: false; reason: string };

export interface WebhookUrlOptions {
  /** The local-development exception: see `allowsInsecureLocalWebhooks`. */
  allowInsecureLocal: boolean;
}

/**
 * The local-development exception (docs/limits.md): a `test` deployment with `ALLOW_INSECURE_WEBHOOKS=true`
 * may deliver to `http://localhost` and `http://127.0.0.1`, so a developer can run a receiver on their
 * machine. Never in `live`, whatever the flag says.
 */
export const allowsInsecureLocalWebhooks = (environment: Environment, flag: string | undefined) =>
  environment === 'test' && flag === 'true';

export const MAX_WEBHOOK_URL_LENGTH = 2048;

// The exception is matched against the host exactly as written as well as normalized: `127.1` or
// `[::1]` also reach the developer's machine, but nobody needs them, and every extra spelling the
// exception admits is one more to reason about.
const LOCAL_EXCEPTION_HOSTS = new Set(['localhost', '127.0.0.1']);

// Reasons never quote the URL: it is client input, and error bodies and logs should not echo it.
const REASONS = {
  invalid: 'The webhook URL is not a valid absolute URL.',
  tooLong: `The webhook URL is longer than ${MAX_WEBHOOK_URL_LENGTH} characters.`,
  whitespace: 'The webhook URL must not contain spaces or control characters.',
  scheme: 'The webhook URL must use https.',
  userinfo: 'The webhook URL must not contain a username or password.',
  fragment: 'The webhook URL must not contain a fragment.',
  trailingDot: 'The webhook URL host must not end with a dot.',
  blocked: 'The webhook URL must point at a public address, not a loopback, private, link-local or reserved one.',
  singleLabel: 'The webhook URL host must be a fully qualified domain name.',
} as const;

function refuse(reason: string): WebhookUrlResult {
  return { ok: false, reason };
}

export function validateWebhookUrl(input: string, options: WebhookUrlOptions): WebhookUrlResult {
  if (typeof input !== 'string' || input.length === 0) return refuse(REASONS.invalid);
  if (input.length > MAX_WEBHOOK_URL_LENGTH) return refuse(REASONS.tooLong);
  // The parser silently drops tabs and newlines anywhere and trims spaces at the ends; refusing them
  // keeps the raw text and the parsed URL in step for the raw-authority checks below.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point: they are refused.
  if (/[\u0000-\u0020\u007f-\u009f]/.test(input)) return refuse(REASONS.whitespace);

  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return refuse(REASONS.invalid);
  }
  // Percent-encoding can make the stored form longer than what was sent.
  if (url.href.length > MAX_WEBHOOK_URL_LENGTH) return refuse(REASONS.tooLong);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return refuse(REASONS.scheme);

  const rawHost = rawAuthorityHost(input);
  if (rawHost === null) return refuse(REASONS.userinfo);
  // `https://@host` and `https://:@host` parse to an empty username and password, but still say
  // someone meant to put credentials there.
  if (url.username !== '' || url.password !== '') return refuse(REASONS.userinfo);
  // A fragment is never sent, so a URL with one is not the URL that will be called. `href` holds `#`
  // only as the fragment delimiter (elsewhere it is percent-encoded), which also catches an empty one.
  if (url.href.includes('#')) return refuse(REASONS.fragment);

  const hostname = url.hostname.toLowerCase();
  // The IPv4 parser drops one trailing dot (`127.0.0.1.` becomes `127.0.0.1`), so look at both forms.
  if (hostname.endsWith('.') || rawHost.endsWith('.')) return refuse(REASONS.trailingDot);

  const isLocalException =
    options.allowInsecureLocal && LOCAL_EXCEPTION_HOSTS.has(hostname) && rawHost.toLowerCase() === hostname;
  if (isLocalException) return { ok: true, url: url.href };

  if (url.protocol !== 'https:') return refuse(REASONS.scheme);
  if (classifyHost(hostname) !== 'public') return refuse(REASONS.blocked);
  // A single-label name is resolved through search domains, i.e. inside whatever network the resolver
  // sits in. IPv6 literals have no dots and are judged by their address instead.
  if (!hostname.startsWith('[') && !hostname.includes('.')) return refuse(REASONS.singleLabel);
  return { ok: true, url: url.href };
}

/**
 * True when `hostOrIp` is, or names, an address the service must not call: an IP literal (any spelling
 * the URL parser accepts, IPv6 with or without brackets) in a blocked range, or a reserved name such as
 * `localhost` or `metadata.google.internal`. A public DNS name answers false. Anything that is not a
 * bare host answers true, so a caller that passes the wrong thing fails closed.
 *
 * This knows nothing of the local exception: before a delivery, re-run `validateWebhookUrl` with the same
 * options as at creation, which uses this for everything but the exception.
 */
export function isBlockedIp(hostOrIp: string): boolean {
  if (typeof hostOrIp !== 'string' || hostOrIp.length === 0) return true;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a host with control characters is refused, whatever it resolves to.
  if (/[\u0000-\u0020\u007f-\u009f/\\?#@]/.test(hostOrIp)) return true;
  const bracketed = hostOrIp.includes(':') && !hostOrIp.startsWith('[') ? `[${hostOrIp}]` : hostOrIp;
  let url: URL;
  try {
    url = new URL(`https://${bracketed}/`);
  } catch {
    return true;
  }
  // A port, or anything else beyond a host, means this was not the bare host the caller claimed.
  if (url.host !== url.hostname || url.pathname !== '/') return true;
  return classifyHost(url.hostname.toLowerCase()) !== 'public';
}

type HostClass = 'public' | 'blocked';

/** `hostname` as `URL.hostname` gives it: dotted-quad IPv4, bracketed compressed IPv6, or an ASCII name. */
function classifyHost(hostname: string): HostClass {
  if (hostname.startsWith('[') && hostname.endsWith(']')) {
    const groups = parseIpv6(hostname.slice(1, -1));
    return groups === null || isBlockedIpv6(groups) ? 'blocked' : 'public';
  }
  // For http(s) the parser turns every host ending in a number into dotted-quad IPv4 or refuses it,
  // so a dotted quad here is an address, and no name can look like one.
  const ipv4 = parseDottedQuad(hostname);
  if (ipv4 !== null) return isBlockedIpv4(ipv4) ? 'blocked' : 'public';
  return isReservedName(hostname) ? 'blocked' : 'public';
}

// Names that resolve, by convention or by standard, to the machine itself or to something inside the
// network the service runs in: RFC 6761 `localhost`, mDNS `.local`, ICANN's private-use `.internal`
// (where GCP puts `metadata.google.internal`), RFC 8375 `home.arpa`, and the bare metadata names of GCP
// and EC2. Single-label names are refused anyway; they are listed so `isBlockedIp` also knows them.
const RESERVED_NAMES = new Set(['localhost', 'metadata', 'instance-data', 'local', 'internal', 'localdomain']);
const RESERVED_SUFFIXES = ['.localhost', '.local', '.internal', '.localdomain', '.home.arpa'];

function isReservedName(hostname: string): boolean {
  const name = hostname.replace(/\.+$/, '');
  return RESERVED_NAMES.has(name) || name === 'home.arpa' || RESERVED_SUFFIXES.some((suffix) => name.endsWith(suffix));
}

/**
 * The host as written in the input, or null when the authority holds userinfo. The parser forgets an
 * empty userinfo (`https://@evil.com`) and a trailing dot on an IPv4 address, and the local exception
 * must match what was written, so these are read from the raw text. Control characters are refused
 * before this runs, so the raw text splits the way the parser splits it: `\` counts as `/` for http(s).
 */
function rawAuthorityHost(input: string): string | null {
  const afterScheme = input.slice(input.indexOf(':') + 1).replace(/^[/\\]+/, '');
  const authority = afterScheme.split(/[/\\?#]/, 1)[0] ?? '';
  if (authority.includes('@')) return null;
  if (authority.startsWith('[')) {
    const close = authority.indexOf(']');
    return close === -1 ? authority : authority.slice(0, close + 1);
  }
  const colon = authority.indexOf(':');
  return colon === -1 ? authority : authority.slice(0, colon);
}

// ---------------------------------------------------------------------------------------------------
// IPv4

function parseDottedQuad(text: string): number | null {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (!match) return null;
  let value = 0;
  for (let i = 1; i <= 4; i++) {
    const octet = Number(match[i]);
    if (octet > 255) return null;
    value = value * 256 + octet;
  }
  return value;
}

function ipv4(a: number, b: number, c: number, d: number): number {
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

// IANA's special-purpose registry, less what is globally reachable and harmless to call. Everything
// else in IPv4 is public unicast.
const BLOCKED_IPV4: ReadonlyArray<readonly [base: number, prefix: number]> = [
  [ipv4(0, 0, 0, 0), 8], // "this network", includes the unspecified 0.0.0.0
  [ipv4(10, 0, 0, 0), 8], // private
  [ipv4(100, 64, 0, 0), 10], // carrier-grade NAT (also Alibaba's metadata 100.100.100.200)
  [ipv4(127, 0, 0, 0), 8], // loopback
  [ipv4(169, 254, 0, 0), 16], // link-local, includes the 169.254.169.254 metadata endpoint
  [ipv4(172, 16, 0, 0), 12], // private
  [ipv4(192, 0, 0, 0), 24], // IETF protocol assignments (Oracle Cloud metadata is 192.0.0.192)
  [ipv4(192, 0, 2, 0), 24], // documentation TEST-NET-1
  [ipv4(192, 88, 99, 0), 24], // deprecated 6to4 relay anycast
  [ipv4(192, 168, 0, 0), 16], // private
  [ipv4(198, 18, 0, 0), 15], // benchmarking
  [ipv4(198, 51, 100, 0), 24], // documentation TEST-NET-2
  [ipv4(203, 0, 113, 0), 24], // documentation TEST-NET-3
  [ipv4(224, 0, 0, 0), 4], // multicast
  [ipv4(240, 0, 0, 0), 4], // reserved, includes the limited broadcast 255.255.255.255
];

function inPrefix(address: number, base: number, prefix: number): boolean {
  const mask = prefix === 0 ? 0 : (~0 << (32 - prefix)) >>> 0;
  return (address & mask) >>> 0 === base;
}

function isBlockedIpv4(address: number): boolean {
  return BLOCKED_IPV4.some(([base, prefix]) => inPrefix(address, base, prefix));
}

// ---------------------------------------------------------------------------------------------------
// IPv6

/** Eight 16-bit groups, or null. Accepts the forms the URL parser serializes to (hex, one `::`). */
function parseIpv6(text: string): number[] | null {
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const parseGroups = (part: string | undefined): number[] | null => {
    if (part === undefined || part === '') return [];
    const groups: number[] = [];
    for (const group of part.split(':')) {
      if (!/^[0-9a-f]{1,4}$/i.test(group)) return null;
      groups.push(parseInt(group, 16));
    }
    return groups;
  };
  const head = parseGroups(halves[0]);
  const tail = parseGroups(halves[1]);
  if (head === null || tail === null) return null;
  if (halves.length === 1) return head.length === 8 ? head : null;
  const missing = 8 - head.length - tail.length;
  if (missing < 1) return null;
  return [...head, ...new Array<number>(missing).fill(0), ...tail];
}

function embeddedIpv4(high: number, low: number): number {
  return ((high << 16) | low) >>> 0;
}

/**
 * Only global unicast (2000::/3) is callable at all; that rules out in one stroke the unspecified and
 * loopback addresses, IPv4-compatible `::a.b.c.d` and IPv4-mapped `::ffff:a.b.c.d` (which only smuggle
 * an IPv4 address through IPv6 syntax), NAT64 `64:ff9b::/96`, unique-local fc00::/7, link-local
 * fe80::/10 and multicast ff00::/8. Inside 2000::/3 the special-purpose blocks are refused too, and 6to4
 * is judged by the IPv4 address it carries.
 */
function isBlockedIpv6(groups: readonly number[]): boolean {
  const [g0 = 0, g1 = 0, g2 = 0] = groups;
  if ((g0 & 0xe000) !== 0x2000) return true;
  // 2001::/23: IETF protocol assignments (Teredo 2001::/32, which hides an IPv4 address, benchmarking
  // 2001:2::/48, ORCHID).
  if (g0 === 0x2001 && g1 < 0x0200) return true;
  if (g0 === 0x2001 && g1 === 0x0db8) return true; // documentation
  if (g0 === 0x3fff && (g1 & 0xf000) === 0) return true; // documentation 3fff::/20 (RFC 9637)
  if (g0 === 0x2002) return isBlockedIpv4(embeddedIpv4(g1, g2)); // 6to4: 2002:AABB:CCDD::/48
  return false;
}
