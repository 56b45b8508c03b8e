import test from 'ava';
import {
  nonPublicReason,
  RESOLUTIONS_PER_ACCOUNT,
  TargetGuard,
  TargetRefusedError,
  type ResolvedAddress,
  type Resolver,
} from '../../../src/shared/target-guard';

const REFUSED: Array<[string, RegExp]> = [
  ['0.0.0.0', /unspecified/],
  ['10.1.2.3', /private/],
  ['100.64.0.1', /carrier-grade/],
  ['127.0.0.1', /loopback/],
  ['127.255.255.254', /loopback/],
  ['169.254.1.1', /link-local/],
  ['169.254.169.254', /metadata/],
  ['169.254.170.2', /metadata/],
  ['100.100.100.200', /metadata/],
  ['192.0.0.192', /metadata/],
  ['168.63.129.16', /metadata/],
  ['172.16.0.1', /private/],
  ['172.31.255.255', /private/],
  ['192.0.0.8', /IETF/],
  ['192.0.2.1', /documentation/],
  ['192.88.99.1', /6to4 relay/],
  ['192.168.1.1', /private/],
  ['198.18.0.1', /benchmarking/],
  ['198.19.255.255', /benchmarking/],
  ['198.51.100.7', /documentation/],
  ['203.0.113.9', /documentation/],
  ['224.0.0.1', /multicast/],
  ['239.255.255.250', /multicast/],
  ['240.0.0.1', /reserved/],
  ['255.255.255.255', /reserved/],
  ['::', /unspecified/],
  ['::1', /loopback/],
  ['fe80::1', /link-local/],
  ['febf:ffff::1', /link-local/],
  ['fec0::1', /site-local/],
  ['fc00::1', /unique-local/],
  ['fd12:3456:789a::1', /unique-local/],
  ['fd00:ec2::254', /metadata/],
  ['ff02::1', /multicast/],
  ['::ffff:127.0.0.1', /loopback address \(IPv4-mapped\)/],
  ['::ffff:a00:1', /private address \(IPv4-mapped\)/],
  ['::ffff:169.254.169.254', /metadata address \(IPv4-mapped\)/],
  ['::127.0.0.1', /loopback address \(IPv4-compatible\)/],
  ['::10.0.0.1', /private address \(IPv4-compatible\)/],
  ['64:ff9b::7f00:1', /loopback address \(NAT64\)/],
  ['64:ff9b::192.168.0.1', /private address \(NAT64\)/],
  ['64:ff9b:1::1', /local NAT64/],
  ['2002:7f00:1::1', /loopback address \(6to4\)/],
  ['2001::1', /IETF/],
  ['2001:db8::1', /documentation/],
  ['3fff::1', /documentation/],
  ['100::1', /reserved/],
  ['4000::1', /reserved/],
  ['fe80::1%eth0', /not an IP/],
  ['example.com', /not an IP/],
];

const PUBLIC = [
  '93.184.216.34',
  '8.8.8.8',
  '1.1.1.1',
  '172.32.0.1',
  '100.128.0.1',
  '169.255.0.1',
  '2606:4700:4700::1111',
  '2a00:1450:4001::200e',
  '::ffff:8.8.8.8',
  '64:ff9b::808:808',
  '2002:808:808::1',
];

for (const [ip, why] of REFUSED) {
  test(`${ip} is not a public target address`, (t) => {
    t.regex(nonPublicReason(ip) ?? 'public', why);
  });
}

test('public IPv4 and IPv6 addresses, and mapped forms of public IPv4, are public targets', (t) => {
  for (const ip of PUBLIC) t.is(nonPublicReason(ip), null, ip);
});

const ACCOUNT = 'account-1';

/** A resolver from a table; names not in it do not resolve. */
const table =
  (entries: Record<string, string[]>): Resolver =>
  async (name) => {
    const list = entries[name];
    if (!list) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

const guard = new TargetGuard({
  allowPrivate: false,
  resolve: table({
    'hooks.example.com': ['93.184.216.34', '2606:2800:220:1::1'],
    'mixed.example.com': ['93.184.216.34', '10.0.0.7'],
    'six.example.com': ['2606:2800:220:1::1', 'fd00::5'],
    localhost: ['127.0.0.1', '::1'],
    'empty.example.com': [],
  }),
});

const refusedUrl = async (t: import('ava').ExecutionContext, url: unknown, why: RegExp) => {
  const err = await t.throwsAsync(guard.checkUrl(url, 'url', ACCOUNT));
  t.like((err as unknown as { toBody(): unknown }).toBody(), { error: { code: 'validation_error', details: { field: 'url' } } });
  t.regex(err!.message, why);
};

test('an https URL on a host that resolves only to public addresses is accepted, normalised', async (t) => {
  t.is(await guard.checkUrl('https://HOOKS.example.com/in?x=1', 'url', ACCOUNT), 'https://hooks.example.com/in?x=1');
  t.is(await guard.checkUrl('https://93.184.216.34:8443/h', 'webhook_url', ACCOUNT), 'https://93.184.216.34:8443/h');
  t.is(await guard.checkUrl('https://[2606:4700:4700::1111]/h', 'url', ACCOUNT), 'https://[2606:4700:4700::1111]/h');
});

test('http:// and other schemes are refused without allow_private_targets', async (t) => {
  await refusedUrl(t, 'http://hooks.example.com/in', /https/);
  await refusedUrl(t, 'ftp://hooks.example.com/in', /https/);
  await refusedUrl(t, 'file:///etc/passwd', /https/);
});

test('a URL that is not a string, empty, too long or unparsable is refused on the named field', async (t) => {
  await refusedUrl(t, 42, /URL/);
  await refusedUrl(t, '', /URL/);
  await refusedUrl(t, `https://hooks.example.com/${'a'.repeat(2100)}`, /2048/);
  await refusedUrl(t, 'not a url', /not a valid URL/);
  const err = await t.throwsAsync(guard.checkUrl('nope', 'webhook_url', ACCOUNT));
  t.like((err as unknown as { details: unknown }).details, { field: 'webhook_url' });
});

test('a URL with a user name or password is refused', async (t) => {
  await refusedUrl(t, 'https://user:pass@hooks.example.com/in', /user name or password/);
});

test('private, loopback and metadata literals are refused, in every spelling URL parsing accepts', async (t) => {
  await refusedUrl(t, 'https://127.0.0.1/in', /loopback/);
  await refusedUrl(t, 'https://0x7f.1/in', /loopback/);
  await refusedUrl(t, 'https://2130706433/in', /loopback/);
  await refusedUrl(t, 'https://[::1]/in', /loopback/);
  await refusedUrl(t, 'https://[::ffff:127.0.0.1]/in', /loopback address \(IPv4-mapped\)/);
  await refusedUrl(t, 'https://169.254.169.254/latest/meta-data', /metadata/);
  await refusedUrl(t, 'https://[fd00:ec2::254]/', /metadata/);
  await refusedUrl(t, 'https://[fe80::1]/', /link-local/);
  await refusedUrl(t, 'https://10.0.0.1/', /private/);
});

test('a name that resolves to any non-public address is refused, also among public ones', async (t) => {
  await refusedUrl(t, 'https://localhost/in', /resolves to a loopback/);
  await refusedUrl(t, 'https://mixed.example.com/in', /resolves to a private/);
  await refusedUrl(t, 'https://six.example.com/in', /resolves to a unique-local/);
});

test('a name that does not resolve is refused', async (t) => {
  await refusedUrl(t, 'https://nowhere.example.com/in', /does not resolve/);
  await refusedUrl(t, 'https://empty.example.com/in', /does not resolve/);
});

test('allow_private_targets lifts the address check and allows http://, but not other schemes', async (t) => {
  const open = new TargetGuard({ allowPrivate: true, resolve: table({}) });
  t.is(await open.checkUrl('http://127.0.0.1:8080/hook', 'url', ACCOUNT), 'http://127.0.0.1:8080/hook');
  t.is(await open.checkUrl('https://localhost/hook', 'url', ACCOUNT), 'https://localhost/hook');
  await t.throwsAsync(open.checkUrl('ftp://127.0.0.1/', 'url', ACCOUNT), { message: /https/ });
  t.notThrows(() => open.assertConnectable('127.0.0.1'));
});

test('with allow_private_targets a host name must still resolve; localhost is loopback without asking the resolver', async (t) => {
  const asked: string[] = [];
  const open = new TargetGuard({ allowPrivate: true, resolve: async (name) => (asked.push(name), table({})(name)) });
  await t.throwsAsync(open.checkUrl('http://nowhere.example.com/hook', 'url', ACCOUNT), { message: /does not resolve/ });
  t.is(await open.checkUrl('http://api.localhost:8080/hook', 'url', ACCOUNT), 'http://api.localhost:8080/hook');
  t.deepEqual(asked, ['nowhere.example.com']);
});

test('an account resolves a bounded number of names at once: past it 503 unavailable on the field; a name already resolving is joined; other accounts are not held', async (t) => {
  const pending = new Map<string, (found: ResolvedAddress[]) => void>();
  const held = new TargetGuard({ allowPrivate: false, resolve: (name) => new Promise((resolve) => pending.set(name, resolve)) });
  const names = Array.from({ length: RESOLUTIONS_PER_ACCOUNT }, (_, i) => `n${i}.example.com`);
  const checks = names.map((n) => held.checkUrl(`https://${n}/`, 'webhook_url', ACCOUNT));
  const joined = held.checkUrl(`https://${names[0]}/again`, 'webhook_url', ACCOUNT);
  const err = await t.throwsAsync(held.checkUrl('https://one-more.example.com/', 'webhook_url', ACCOUNT));
  t.like((err as unknown as { toBody(): unknown }).toBody(), { error: { code: 'unavailable', details: { field: 'webhook_url' } } });
  const elsewhere = held.checkUrl('https://other.example.com/', 'url', 'account-2');
  t.is(pending.size, RESOLUTIONS_PER_ACCOUNT + 1, 'one query per name: the repeat joined the first');
  for (const resolve of pending.values()) resolve([{ address: '93.184.216.34', family: 4 }]);
  t.is((await Promise.all(checks)).length, RESOLUTIONS_PER_ACCOUNT);
  t.is(await joined, `https://${names[0]}/again`);
  t.is(await elsewhere, 'https://other.example.com/');
  pending.clear();
  const later = held.checkUrl('https://one-more.example.com/', 'webhook_url', ACCOUNT);
  pending.get('one-more.example.com')!([{ address: '93.184.216.34', family: 4 }]);
  t.is(await later, 'https://one-more.example.com/', 'the bound frees as names resolve');
});

const lookup = (g: TargetGuard, host: string, options: { all?: boolean; family?: number }) =>
  new Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number }>((resolve) =>
    g.lookup(host, options, (err, address, family) => resolve({ err, address, family })),
  );

test('the connect-time lookup refuses a name that resolves to a private address at that moment', async (t) => {
  let answer = ['93.184.216.34'];
  const rebinding = new TargetGuard({ allowPrivate: false, resolve: async () => answer.map((address) => ({ address, family: 4 })) });
  t.is(await rebinding.checkUrl('https://rebind.example.com/', 'url', ACCOUNT), 'https://rebind.example.com/');
  answer = ['127.0.0.1'];
  const r = await lookup(rebinding, 'rebind.example.com', { all: true });
  t.true(r.err instanceof TargetRefusedError);
  t.is(r.err!.code, 'ETARGETREFUSED');
  t.regex(r.err!.message, /loopback/);
  t.notRegex(r.err!.message, /127\.0\.0\.1/);
});

test('the connect-time lookup hands over public addresses in both callback forms, filtered by family', async (t) => {
  const all = await lookup(guard, 'hooks.example.com', { all: true });
  t.is(all.err, null);
  t.deepEqual(all.address, [
    { address: '93.184.216.34', family: 4 },
    { address: '2606:2800:220:1::1', family: 6 },
  ]);
  const one = await lookup(guard, 'hooks.example.com', { family: 6 });
  t.is(one.address, '2606:2800:220:1::1');
  t.is(one.family, 6);
  const missing = await lookup(guard, 'nowhere.example.com', {});
  t.is(missing.err?.code, 'ENOTFOUND');
});

test('the connect-time check refuses a non-public IP literal, which Node connects to without a lookup', (t) => {
  t.throws(() => guard.assertConnectable('127.0.0.1'), { instanceOf: TargetRefusedError, message: /loopback/ });
  t.throws(() => guard.assertConnectable('[::ffff:10.0.0.1]'), { instanceOf: TargetRefusedError, message: /private/ });
  t.notThrows(() => guard.assertConnectable('93.184.216.34'));
  t.notThrows(() => guard.assertConnectable('hooks.example.com'));
});
