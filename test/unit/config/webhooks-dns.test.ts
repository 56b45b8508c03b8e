import test from 'ava';
import { configFromText } from '../../../src/config/load';
import { ConfigError } from '../../../src/config/schema';

test("webhooks.dns defaults to the system's nameservers and 3 s; servers and timeout_ms are read", (t) => {
  t.deepEqual(configFromText('network: testnet\n').webhooks, { allow_private_targets: false, dns: { servers: [], timeout_ms: 3000 } });
  const c = configFromText('webhooks:\n  dns: { servers: [1.1.1.1, "127.0.0.1:5353", "[::1]:53", "2606:4700:4700::1111"], timeout_ms: 500 }\n');
  t.deepEqual(c.webhooks.dns, { servers: ['1.1.1.1', '127.0.0.1:5353', '[::1]:53', '2606:4700:4700::1111'], timeout_ms: 500 });
});

for (const [yaml, message] of [
  ['webhooks: { dns: { servers: [dns.example.com] } }', /^webhooks\.dns\.servers\[0\]: must be an IP address/],
  ['webhooks: { dns: { servers: ["1.1.1.1:0"] } }', /^webhooks\.dns\.servers\[0\]: /],
  ['webhooks: { dns: { timeout_ms: 10 } }', /^webhooks\.dns\.timeout_ms: must be an integer from 100 to 30000$/],
  ['webhooks: { dns: { tries: 3 } }', /^webhooks\.dns\.tries: unknown key$/],
  ['webhooks: { allow_private: true }', /^webhooks\.allow_private: unknown key$/],
] as const) {
  test(`a bad webhooks setting is refused at load naming its key: ${yaml}`, (t) => {
    t.regex(t.throws(() => configFromText(`${yaml}\n`), { instanceOf: ConfigError }).message, message);
  });
}
