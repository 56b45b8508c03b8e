import test from 'ava';
import { Coinkeep, verifyWebhook } from 'coinkeep/client';
import * as direct from '../../../src/client/index';

test('the client is importable as coinkeep/client, and it is the module in src/client', (t) => {
  t.is(Coinkeep, direct.Coinkeep);
  t.is(verifyWebhook, direct.verifyWebhook);
  t.is(typeof new Coinkeep({ baseUrl: 'http://127.0.0.1:1', keyId: 'ck_test_x', secret: 's' }).invoices.create, 'function');
});
