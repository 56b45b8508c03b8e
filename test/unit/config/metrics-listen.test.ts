import test from 'ava';
import { parseConfig, ConfigError } from '../../../src/config/schema';

const metricsOf = (metrics: unknown) => parseConfig({ metrics }).metrics;

test('metrics.listen is off by default and when null', (t) => {
  t.deepEqual(parseConfig({}).metrics, { listen: null });
  t.deepEqual(metricsOf({ listen: null }), { listen: null });
});

test('metrics.listen takes host:port, [v6]:port, or a port alone on 127.0.0.1', (t) => {
  t.deepEqual(metricsOf({ listen: '127.0.0.1:9464' }), { listen: { host: '127.0.0.1', port: 9464 } });
  t.deepEqual(metricsOf({ listen: '[::1]:9464' }), { listen: { host: '::1', port: 9464 } });
  t.deepEqual(metricsOf({ listen: 9464 }), { listen: { host: '127.0.0.1', port: 9464 } });
});

test('a bad metrics.listen stops the config with its key named', (t) => {
  for (const listen of ['9464', 'example.com:9464', '127.0.0.1:99999', true, { port: 1 }]) {
    const err = t.throws(() => metricsOf({ listen }), { instanceOf: ConfigError });
    t.is(err!.key, 'metrics.listen', String(listen));
  }
  t.throws(() => metricsOf({ port: 1 }), { instanceOf: ConfigError, message: /metrics/ });
});
