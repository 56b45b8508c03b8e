/**
 * Configured token `decimals` are checked against the contract at start (PRODUCT §14): a mismatch
 * stops the daemon with one line naming the key, the chain, the token and both values; the right
 * figure starts it. On a real anvil with the test USDT and on the Tron stand-in.
 */
import test from 'ava';
import { getAddress } from 'ethers';
import { randomBytes } from 'node:crypto';
import { anvilChainEntry } from '../../../src/dev/anvil';
import { tronChainEntry } from '../../../src/dev/tron';
import { killAllAnvils, startAnvil } from '../../helpers/anvil';
import { startTestDaemon } from '../../helpers/daemon';
import { TronNode } from '../../helpers/tron-node';
import { FAST_WATCH } from './evm/evm-fixture';

test.after.always(killAllAnvils);

test('an EVM token configured with decimals its contract does not say stops the daemon with one line naming the chain, the token and both values', async (t) => {
  const { node, usdt } = await startAnvil();
  const usdtEntry = (decimals: number, contract = usdt) =>
    anvilChainEntry(node.rpcUrl, usdt, { options: FAST_WATCH, tokens: [{ ticker: 'USDT', contract, decimals }] });
  await t.throwsAsync(startTestDaemon({ chains: [usdtEntry(18)] }), {
    message: `chains[0].tokens[0].decimals: ethereum USDT is configured with 18 decimals, its contract ${usdt} says 6`,
  });
  const nowhere = getAddress('0x' + randomBytes(20).toString('hex'));
  await t.throwsAsync(startTestDaemon({ chains: [usdtEntry(6, nowhere)] }), {
    message: `chains[0].tokens[0].decimals: ethereum USDT is configured with 6 decimals, its contract ${nowhere} answers no decimals()`,
  });
  const td = await startTestDaemon({ chains: [usdtEntry(6)] });
  await td.stop();
  t.pass();
});

test('a Tron token configured with decimals its contract does not say stops the daemon the same way', async (t) => {
  const node = await TronNode.start();
  t.teardown(() => node.stop());
  await t.throwsAsync(startTestDaemon({ chains: [tronChainEntry(node, { tokens: [{ ticker: 'USDT', contract: node.usdt, decimals: 8 }] })] }), {
    message: `chains[0].tokens[0].decimals: tron USDT is configured with 8 decimals, its contract ${node.usdt} says 6`,
  });
  const td = await startTestDaemon({ chains: [tronChainEntry(node)] });
  await td.stop();
  t.pass();
});
