import test from 'ava';
import { acceptsGzip } from '../../../src/checkout/checkout.routes';

test('acceptsGzip: named or by *, never with q=0, and not when absent', (t) => {
  t.true(acceptsGzip('gzip'));
  t.true(acceptsGzip('gzip, deflate, br'));
  t.true(acceptsGzip('br;q=1.0, GZIP;q=0.5'));
  t.true(acceptsGzip('*'));
  t.false(acceptsGzip(''));
  t.false(acceptsGzip('identity'));
  t.false(acceptsGzip('br, deflate'));
  t.false(acceptsGzip('gzip;q=0'));
  t.false(acceptsGzip('gzip; q=0.000'));
});
