import test from 'ava';
import YAML from 'yaml';
import { configFromText } from '../../../src/config/load';
import { signerCaps } from '../../../src/daemon/withdrawals.wiring';

const config = (o: Record<string, unknown>) => configFromText(YAML.stringify({ data_dir: '/tmp/x', chains: [], rates: { sources: [] }, ...o }));

test("the review's signer_limit cap is the lower of payouts.max_per_transaction and signer.max_per_hour, per ticker", (t) => {
  t.deepEqual(signerCaps(config({})), {});
  t.deepEqual(
    signerCaps(config({ payouts: { max_per_transaction: { BTC: '10000', ETH: '500' } }, signer: { max_per_hour: { BTC: '2000', ETH: '900', TRX: '50' } } })),
    { BTC: '2000', ETH: '500', TRX: '50' },
  );
});

test('signer config: socket a path or absent, max_per_hour tickers with positive amounts', (t) => {
  t.deepEqual(config({}).signer, { socket: null, max_per_hour: {} });
  t.is(config({ signer: { socket: '/run/s.sock' } }).signer.socket, '/run/s.sock');
  t.throws(() => config({ signer: { socket: '' } }), { message: /signer\.socket/ });
  t.throws(() => config({ signer: { max_per_hour: { btc: '1' } } }), { message: /signer\.max_per_hour\.btc/ });
  t.throws(() => config({ signer: { max_per_hour: { BTC: '-1' } } }), { message: /positive amount/ });
  t.throws(() => config({ signer: { other: 1 } }), { message: /other/ });
});
