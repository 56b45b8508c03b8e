import test from 'ava';
import { Catalog, COIN_NAMESPACE } from '../../../src/catalog/coins';
import { parseConfig, type Config } from '../../../src/config/schema';

const USDT_ETH = '0xdAC17F958D2ee523a2206206994597C13D831ec7';
const USDT_TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';

const config = (): Config =>
  parseConfig({
    chains: [
      { id: 'bitcoin', kind: 'btc', network: 'regtest', rpc_url: 'http://u:p@127.0.0.1:18443' },
      {
        id: 'ethereum',
        kind: 'evm',
        chain_id: 31337,
        rpc_url: 'http://127.0.0.1:8545',
        tokens: [{ ticker: 'USDT', contract: USDT_ETH, decimals: 6 }],
      },
      {
        id: 'tron',
        kind: 'tron',
        full_node_url: 'http://127.0.0.1:8090',
        tokens: [
          { ticker: 'USDT', contract: USDT_TRON, decimals: 6 },
          { ticker: 'WIN', contract: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7', decimals: 6, invoice_enabled: false },
        ],
      },
    ],
    fiat: { enabled: ['USD', 'EUR', 'JPY'], default: 'EUR' },
  });

const catalogOf = (c: Config): Catalog => new Catalog(c.chains, c.fiat);

test('a coin id is UUIDv5 of <chain id>:<asset> under the fixed namespace, the same on every install', (t) => {
  const a = catalogOf(config());
  const b = catalogOf(config());
  t.is(COIN_NAMESPACE, '589b6e6e-92cb-497a-b694-e1fc9835df50');
  t.deepEqual(
    a.coins().map((c) => c.id),
    b.coins().map((c) => c.id),
  );
  const id = (network: string, ticker: string) => a.coins().find((c) => c.network === network && c.ticker === ticker)!.id;
  // Expected values computed independently (Python uuid.uuid5).
  t.is(id('bitcoin', 'BTC'), '6813f427-45da-598b-ae1f-c6a6238837ad');
  t.is(id('ethereum', 'ETH'), '748108e6-b701-53a2-9672-338263957175');
  t.is(id('ethereum', 'USDT'), 'd76ad230-3f2c-5c69-bacd-728f3a9d1ec8');
  t.is(id('tron', 'USDT'), 'c8cdb9c3-1267-515f-88d5-bbad961abecb');
});

test('one ticker on two networks is two coins with distinct ids', (t) => {
  const catalog = catalogOf(config());
  const usdt = catalog.coinsByTicker('USDT');
  t.deepEqual(
    usdt.map((c) => [c.network, c.chain_id, c.asset, c.family]),
    [
      ['ethereum', 'ethereum', USDT_ETH, 'evm'],
      ['tron', 'tron', USDT_TRON, 'tron'],
    ],
  );
  t.not(usdt[0]!.id, usdt[1]!.id);
  t.is(catalog.coin(usdt[1]!.id), usdt[1]);
  t.deepEqual(catalog.tickers(), ['BTC', 'ETH', 'USDT', 'TRX', 'WIN']);
});

test('coins carry default names, decimals and invoice_enabled from the config', (t) => {
  const catalog = catalogOf(config());
  t.deepEqual(
    catalog.coins().map((c) => [c.ticker, c.name, c.decimals, c.invoice_enabled, c.asset === 'native']),
    [
      ['BTC', 'Bitcoin', 8, true, true],
      ['ETH', 'Ether', 18, true, true],
      ['USDT', 'Tether USD', 6, true, false],
      ['TRX', 'Tron', 6, true, true],
      ['USDT', 'Tether USD', 6, true, false],
      ['WIN', 'WIN', 6, false, false],
    ],
  );
  t.is(catalog.coin('00000000-0000-5000-8000-000000000000'), undefined);
});

test('a configured name replaces the default one', (t) => {
  const c = config();
  c.chains[0]!.native.name = 'Bitcoin (regtest)';
  t.is(catalogOf(c).coinsByTicker('BTC')[0]!.name, 'Bitcoin (regtest)');
});

test('fiats are the enabled ones with their decimals, JPY with 0, and the default fiat', (t) => {
  const catalog = catalogOf(config());
  t.deepEqual(catalog.fiats(), [
    { code: 'USD', decimals: 2, invoice_enabled: true },
    { code: 'EUR', decimals: 2, invoice_enabled: true },
    { code: 'JPY', decimals: 0, invoice_enabled: true },
  ]);
  t.is(catalog.defaultFiat, 'EUR');
  t.true(catalog.isFiat('JPY'));
  t.false(catalog.isFiat('GBP'));
  t.false(catalog.isFiat('usd'));
});

test('the maintenance flag is per coin and counted as a change only when it flips', (t) => {
  const catalog = catalogOf(config());
  const [eth, tron] = catalog.coinsByTicker('USDT');
  const v0 = catalog.maintenanceVersion;
  catalog.setMaintenance(tron!.id, true);
  t.true(catalog.inMaintenance(tron!.id));
  t.false(catalog.inMaintenance(eth!.id));
  const v1 = catalog.maintenanceVersion;
  t.not(v1, v0);
  catalog.setMaintenance(tron!.id, true);
  t.is(catalog.maintenanceVersion, v1);
  catalog.setMaintenance(tron!.id, false);
  t.false(catalog.inMaintenance(tron!.id));
  t.not(catalog.maintenanceVersion, v1);
  t.throws(() => catalog.setMaintenance('not-a-coin', true));
});

test('the same asset twice on one chain is refused', (t) => {
  const c = config();
  c.chains[1]!.tokens.push({ ...c.chains[1]!.tokens[0]!, ticker: 'USDX' });
  t.throws(() => catalogOf(c), { message: /chains\[1\]\.tokens\[1\]\.contract: duplicate asset/ });
});

test("a preset network's coins: USDC and USDT are tokens like any, named, on the chain's network, ids from the issuer's contract", (t) => {
  const c = parseConfig({
    chains: [
      { preset: 'base', rpc_url: 'http://127.0.0.1:8545' },
      { preset: 'bsc', rpc_url: 'http://127.0.0.1:8546' },
    ],
  });
  const coins = catalogOf(c)
    .coins()
    .map((x) => ({ id: x.id, network: x.network, ticker: x.ticker, name: x.name, decimals: x.decimals, asset: x.asset, family: x.family }));
  // Expected ids computed independently (Python uuid.uuid5 of "<chain id>:<asset>").
  t.deepEqual(coins, [
    { id: '6ff28f7e-283c-5771-aa16-982f22b9b627', network: 'base', ticker: 'ETH', name: 'Ether', decimals: 18, asset: 'native', family: 'evm' },
    {
      id: '486f1b51-0c32-575c-9491-6e143d36985c',
      network: 'base',
      ticker: 'USDC',
      name: 'USD Coin',
      decimals: 6,
      asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      family: 'evm',
    },
    { id: coins[2]!.id, network: 'bsc', ticker: 'BNB', name: 'BNB', decimals: 18, asset: 'native', family: 'evm' },
    {
      id: '4e65ad76-6ecf-558b-af16-d31cafc5401d',
      network: 'bsc',
      ticker: 'USDT',
      name: 'Tether USD',
      decimals: 18,
      asset: '0x55d398326f99059fF775485246999027B3197955',
      family: 'evm',
    },
    {
      id: '14612356-bcb1-524c-980f-63527abf25ea',
      network: 'bsc',
      ticker: 'USDC',
      name: 'USD Coin',
      decimals: 18,
      asset: '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d',
      family: 'evm',
    },
  ]);
  t.deepEqual(catalogOf(c).tickers(), ['ETH', 'USDC', 'BNB', 'USDT']);
});

test('a USDC configured without a name is called USD Coin', (t) => {
  const c = parseConfig({
    chains: [{ id: 'ethereum', kind: 'evm', chain_id: 1, rpc_url: 'http://127.0.0.1:8545', tokens: [{ ticker: 'USDC', contract: '0x1', decimals: 6 }] }],
  });
  t.is(catalogOf(c).coinsByTicker('USDC')[0]!.name, 'USD Coin');
});
