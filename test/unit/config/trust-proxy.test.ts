import test from 'ava';
import { ConfigError, parseConfig } from '../../../src/config/schema';

test('trust_proxy is a count of proxy hops: true is one, false and absent none', (t) => {
  t.is(parseConfig({}).trust_proxy, 0);
  t.is(parseConfig({ trust_proxy: false }).trust_proxy, 0);
  t.is(parseConfig({ trust_proxy: true }).trust_proxy, 1);
  t.is(parseConfig({ trust_proxy: 2 }).trust_proxy, 2);
});

test('trust_proxy refuses anything but a whole number of hops from 0 to 10 or a boolean', (t) => {
  for (const bad of ['yes', '1', -1, 1.5, 11]) {
    t.throws(() => parseConfig({ trust_proxy: bad }), { instanceOf: ConfigError, message: /^trust_proxy: / }, String(bad));
  }
});
