import { describe, expect, it } from 'vitest';
import { MAX_WEBHOOK_URL_LENGTH, isBlockedIp, validateWebhookUrl } from '../../src/domain/webhook-url.ts';

const STRICT = { allowInsecureLocal: false };
const LOCAL = { allowInsecureLocal: true };

// The checks rely on the runtime's URL parser turning every IPv4 spelling into one dotted quad and every
// IPv6 literal into compressed hex. If workerd ever parsed differently, these fail first.
describe('the URL parser normalizes the host that fetch would connect to', () => {
  it.each([
    ['https://127.1/', '127.0.0.1'],
    ['https://2130706433/', '127.0.0.1'],
    ['https://0x7f000001/', '127.0.0.1'],
    ['https://0177.0.0.1/', '127.0.0.1'],
    ['https://0x7f.1/', '127.0.0.1'],
    ['https://127.000.000.001/', '127.0.0.1'],
    ['https://0x7F.0.0.1/', '127.0.0.1'],
    ['https://127.0.0.1./', '127.0.0.1'],
    ['https://%31%32%37.0.0.1/', '127.0.0.1'],
    ['https://\uff11\uff12\uff17.\uff10.\uff10.\uff11/', '127.0.0.1'],
    ['https://0/', '0.0.0.0'],
    ['https://0xa9fea9fe/', '169.254.169.254'],
    ['https://2852039166/', '169.254.169.254'],
    ['https://3232235777/', '192.168.1.1'],
    ['https://0xa.1/', '10.0.0.1'],
    ['https://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
    ['https://[0:0:0:0:0:0:0:1]/', '[::1]'],
    ['https://[64:ff9b::127.0.0.1]/', '[64:ff9b::7f00:1]'],
    ['https://LOCALHOST/', 'localhost'],
    ['https://\u24db\u24de\u24d2\u24d0\u24db\u24d7\u24de\u24e2\u24e3/', 'localhost'],
    ['https://example.com\u3002/', 'example.com.'],
  ])('%s has hostname %s', (input, hostname) => {
    expect(new URL(input).hostname).toBe(hostname);
  });
});

type Refused = [input: string, localException?: 'accepted when local'];

// Every spelling of an address the service must not call (docs/limits.md, "Webhook URLs"), and then some. An entry marked 'accepted when local' is the literal
// local exception and passes with allowInsecureLocal; every other entry is refused with either setting.
const REFUSED: Record<string, Refused[]> = {
  'loopback IPv4 in every spelling': [
    ['https://127.0.0.1/hook', 'accepted when local'],
    ['https://127.1/'],
    ['https://2130706433/'],
    ['https://0x7f000001/'],
    ['https://0177.0.0.1/'],
    ['https://0x7f.1/'],
    ['https://127.000.000.001/'],
    ['https://0x7F.0.0.1/'],
    ['https://%31%32%37.0.0.1/'],
    ['https://\uff11\uff12\uff17.\uff10.\uff10.\uff11/'],
    ['https://127.0.0.2/'],
    ['https://127.255.255.254:8443/'],
    ['https://127.0.0.1.:443/'],
  ],
  'loopback names': [
    ['https://localhost/hook', 'accepted when local'],
    ['https://LOCALHOST/', 'accepted when local'],
    ['https://localhost./'],
    ['https://api.localhost/'],
    ['https://a.b.LOCALHOST/'],
    ['https://\u24db\u24de\u24d2\u24d0\u24db\u24d7\u24de\u24e2\u24e3/'],
  ],
  'loopback and unspecified IPv6': [['https://[::1]/'], ['https://[0:0:0:0:0:0:0:1]/'], ['https://[::]/']],
  'unspecified IPv4': [['https://0.0.0.0/'], ['https://0/'], ['https://0.1.2.3/']],
  private: [
    ['https://10.0.0.1/'],
    ['https://10.255.255.255/'],
    ['https://0xa.1/'],
    ['https://172.16.0.1/'],
    ['https://172.31.255.255/'],
    ['https://192.168.1.1/'],
    ['https://3232235777/'],
    ['https://[fc00::1]/'],
    ['https://[fd12:3456:789a::1]/'],
    ['https://[fd00:ec2::254]/'],
  ],
  'link-local and metadata addresses': [
    ['https://169.254.169.254/latest/meta-data/'],
    ['https://169.254.0.1/'],
    ['https://0xa9fea9fe/'],
    ['https://2852039166/'],
    ['https://[fe80::1]/'],
    ['https://[febf:ffff::1]/'],
    ['https://192.0.0.192/'],
  ],
  'carrier-grade NAT': [['https://100.64.0.1/'], ['https://100.127.255.254/'], ['https://100.100.100.200/']],
  'multicast and reserved': [
    ['https://224.0.0.1/'],
    ['https://239.255.255.250/'],
    ['https://240.0.0.1/'],
    ['https://255.255.255.255/'],
    ['https://[ff02::1]/'],
  ],
  'IPv4 inside IPv6': [
    ['https://[::ffff:127.0.0.1]/'],
    ['https://[::ffff:7f00:1]/'],
    ['https://[::FFFF:7F00:0001]/'],
    ['https://[0:0:0:0:0:ffff:127.0.0.1]/'],
    ['https://[::ffff:169.254.169.254]/'],
    ['https://[::ffff:10.0.0.1]/'],
    ['https://[::127.0.0.1]/'],
    ['https://[::7f00:1]/'],
    ['https://[::ffff:0:7f00:1]/'],
    ['https://[64:ff9b::7f00:1]/'],
    ['https://[64:ff9b::127.0.0.1]/'],
    ['https://[64:ff9b::a9fe:a9fe]/'],
    ['https://[64:ff9b:1::a00:1]/'],
    ['https://[2002:7f00:1::]/'],
    ['https://[2002:a9fe:a9fe::1]/'],
    ['https://[2002:c0a8:101::1]/'],
    ['https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/'],
  ],
  'documentation and benchmarking': [
    ['https://192.0.2.1/'],
    ['https://198.18.0.1/'],
    ['https://198.19.255.255/'],
    ['https://198.51.100.7/'],
    ['https://203.0.113.9/'],
    ['https://[2001:db8::1]/'],
    ['https://[3fff::1]/'],
  ],
  'metadata and internal names': [
    ['https://metadata.google.internal/computeMetadata/v1/'],
    ['https://METADATA.GOOGLE.INTERNAL/'],
    ['https://metadata/'],
    ['https://instance-data/'],
    ['https://instance-data.ec2.internal/'],
    ['https://db.internal/'],
    ['https://printer.local/'],
    ['https://router.home.arpa/'],
    ['https://localhost.localdomain/'],
  ],
  userinfo: [
    ['https://good.com@evil.com/'],
    ['https://user:pass@hooks.example.com/'],
    ['https://user@hooks.example.com/'],
    ['https://:pass@hooks.example.com/'],
    ['https://:@hooks.example.com/'],
    ['https://@hooks.example.com/'],
    ['https://hooks.example.com:443@127.0.0.1/'],
    ['https://hooks.example.com%40evil.com/'],
  ],
  'trailing dots': [
    ['https://example.com./'],
    ['https://hooks.example.com.:8443/x'],
    ['https://example.com\u3002/'],
    ['https://93.184.216.34./'],
  ],
  'schemes other than https': [
    ['http://example.com/'],
    ['http://hooks.example.com/webhooks'],
    ['HTTP://hooks.example.com/'],
    ['ftp://hooks.example.com/'],
    ['ws://hooks.example.com/'],
    ['wss://hooks.example.com/'],
    ['file:///etc/passwd'],
    ['javascript:alert(1)'],
    ['data:text/plain,hi'],
  ],
  fragments: [['https://hooks.example.com/x#section'], ['https://hooks.example.com/x#']],
  'single-label names': [['https://intranet/'], ['https://intranet:8443/hook'], ['https://com/']],
  'not an absolute URL': [
    [''],
    ['hooks.example.com/webhooks'],
    ['/webhooks'],
    ['https://'],
    ['https://[::1/'],
    ['https://1.2.3.4.5/'],
    ['https://example.123/'],
    ['https://[fe80::1%25eth0]/'],
  ],
  'whitespace and control characters': [
    [' https://hooks.example.com/'],
    ['https://hooks.example.com/ '],
    ['https://hooks.exa\tmple.com/'],
    ['https://hooks.example.com/\n'],
    ['https://hooks.example.com/a b'],
    ['https://hooks.example.com/\u0000'],
  ],
};

function refusal(input: string, options: { allowInsecureLocal: boolean }): string {
  const result = validateWebhookUrl(input, options);
  if (result.ok) throw new Error(`accepted: ${JSON.stringify(input)} as ${result.url}`);
  return result.reason;
}

function hostOf(input: string): string | null {
  try {
    return new URL(input).hostname;
  } catch {
    return null;
  }
}

describe('refused webhook URLs', () => {
  for (const [group, cases] of Object.entries(REFUSED)) {
    describe(group, () => {
      it.each(cases)('%j', (input, localException) => {
        const reason = refusal(input, STRICT);
        expect(reason).toMatch(/^The webhook URL .+\.$/);
        // The reason is a sentence for a human and never quotes the client's input back.
        if (input.length > 0) expect(reason).not.toContain(input);
        const host = hostOf(input);
        if (host && /[.:]/.test(host)) expect(reason).not.toContain(host);

        if (localException) {
          expect(validateWebhookUrl(input, LOCAL)).toEqual({ ok: true, url: new URL(input).href });
        } else {
          expect(refusal(input, LOCAL)).toBe(reason);
        }
      });
    });
  }

  it('says why, per rule', () => {
    expect(refusal('http://hooks.example.com/', STRICT)).toMatch(/https/);
    expect(refusal('https://user:pass@hooks.example.com/', STRICT)).toMatch(/username or password/);
    expect(refusal('https://hooks.example.com/#x', STRICT)).toMatch(/fragment/);
    expect(refusal('https://example.com./', STRICT)).toMatch(/end with a dot/);
    expect(refusal('https://127.1/', STRICT)).toMatch(/public address/);
    expect(refusal('https://metadata.google.internal/', STRICT)).toMatch(/public address/);
    expect(refusal('https://intranet/', STRICT)).toMatch(/fully qualified/);
    expect(refusal('not-a-url', STRICT)).toMatch(/valid absolute URL/);
  });

  it('limits the length to 2048 characters, before and after normalization', () => {
    const base = 'https://hooks.example.com/';
    const exact = base + 'a'.repeat(MAX_WEBHOOK_URL_LENGTH - base.length);
    expect(validateWebhookUrl(exact, STRICT)).toEqual({ ok: true, url: exact });
    expect(refusal(`${exact}a`, STRICT)).toMatch(/2048/);
    // Each "<" becomes "%3C" in the stored form, which would otherwise pass a check on the input alone.
    const growing = base + '<'.repeat(1000);
    expect(growing.length).toBeLessThanOrEqual(MAX_WEBHOOK_URL_LENGTH);
    expect(refusal(growing, STRICT)).toMatch(/2048/);
  });
});

describe('accepted webhook URLs', () => {
  it.each([
    ['https://hooks.example.com/webhooks?x=1', 'https://hooks.example.com/webhooks?x=1'],
    ['https://93.184.216.34/hook', 'https://93.184.216.34/hook'],
    ['https://[2606:4700::1111]/', 'https://[2606:4700::1111]/'],
    ['https://[2606:4700:0:0:0:0:0:1111]/', 'https://[2606:4700::1111]/'],
    ['https://hooks.example.com:8443/x', 'https://hooks.example.com:8443/x'],
    ['https://hooks.example.com:443/x', 'https://hooks.example.com/x'],
    ['https://HOOKS.Example.COM/Path/To', 'https://hooks.example.com/Path/To'],
    ['https://b\u00fccher.example/hook', 'https://xn--bcher-kva.example/hook'],
    ['https://[2002:5db8:d822::1]/', 'https://[2002:5db8:d822::1]/'],
    // A backslash ends the host for http(s), so this goes to hooks.example.com, and the stored form says so.
    ['https://hooks.example.com\\@evil.com/', 'https://hooks.example.com/@evil.com/'],
    // Just outside the blocked ranges.
    ['https://11.0.0.1/', 'https://11.0.0.1/'],
    ['https://172.32.0.1/', 'https://172.32.0.1/'],
    ['https://100.128.0.1/', 'https://100.128.0.1/'],
    ['https://126.255.255.255/', 'https://126.255.255.255/'],
    ['https://223.255.255.255/', 'https://223.255.255.255/'],
    ['https://local.example.com/', 'https://local.example.com/'],
    ['https://internal.example.com/', 'https://internal.example.com/'],
  ])('%s', (input, url) => {
    expect(validateWebhookUrl(input, STRICT)).toEqual({ ok: true, url });
    expect(validateWebhookUrl(input, LOCAL)).toEqual({ ok: true, url });
  });
});

describe('the local development exception', () => {
  it.each([
    ['http://localhost:3000/hook', 'http://localhost:3000/hook'],
    ['http://127.0.0.1:9999/x', 'http://127.0.0.1:9999/x'],
    ['http://localhost/', 'http://localhost/'],
    ['https://localhost:8443/hook', 'https://localhost:8443/hook'],
    ['https://127.0.0.1/', 'https://127.0.0.1/'],
  ])('accepts %s only when allowed', (input, url) => {
    expect(validateWebhookUrl(input, LOCAL)).toEqual({ ok: true, url });
    expect(refusal(input, STRICT)).toBeTruthy();
  });

  it.each([
    'http://127.0.0.2/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://127.1:9999/',
    'http://2130706433/',
    'http://0x7f000001/',
    'http://127.0.0.1./',
    'http://localhost./',
    'http://api.localhost/',
    'http://0.0.0.0/',
    'http://10.0.0.1/',
    'http://192.168.1.10:3000/',
    'http://example.com/',
    'http://user:pass@localhost/',
    'http://localhost:3000/hook#x',
  ])('refuses %s even when allowed', (input) => {
    expect(refusal(input, LOCAL)).toBeTruthy();
    expect(refusal(input, STRICT)).toBeTruthy();
  });
});

describe('isBlockedIp', () => {
  it.each([
    '127.0.0.1',
    '127.1',
    '2130706433',
    '0x7f000001',
    '0177.0.0.1',
    '::1',
    '[::1]',
    '::ffff:127.0.0.1',
    '[::ffff:7f00:1]',
    '64:ff9b::7f00:1',
    '2002:a9fe:a9fe::',
    '169.254.169.254',
    '10.1.2.3',
    '100.64.0.1',
    'fe80::1',
    'fd00::1',
    '0.0.0.0',
    '::',
    'localhost',
    'LOCALHOST',
    'localhost.',
    'x.localhost',
    'metadata',
    'metadata.google.internal',
    'instance-data',
    'printer.local',
  ])('blocks %s', (host) => {
    expect(isBlockedIp(host)).toBe(true);
  });

  it.each(['', ' ', 'example.com/x', 'user@example.com', 'example.com:8443', 'not a host', '[::1', '1.2.3.4.5'])(
    'fails closed on %j, which is not a bare host',
    (input) => {
      expect(isBlockedIp(input)).toBe(true);
    },
  );

  it.each(['93.184.216.34', 'hooks.example.com', '2606:4700::1111', '[2606:4700::1111]', '8.8.8.8'])(
    'lets %s through',
    (host) => {
      expect(isBlockedIp(host)).toBe(false);
    },
  );

  it('agrees with validateWebhookUrl on the hostname of every refused address', () => {
    const groups = [
      'loopback IPv4 in every spelling',
      'loopback names',
      'loopback and unspecified IPv6',
      'unspecified IPv4',
      'private',
      'link-local and metadata addresses',
      'carrier-grade NAT',
      'multicast and reserved',
      'IPv4 inside IPv6',
      'documentation and benchmarking',
      'metadata and internal names',
    ];
    for (const group of groups) {
      for (const [input] of REFUSED[group] ?? []) {
        const host = hostOf(input);
        expect(host, input).not.toBeNull();
        expect(isBlockedIp(host ?? ''), input).toBe(true);
      }
    }
  });
});
