/**
 * A pruned Bitcoin Core node (`-prune`) deletes old blocks and answers "Block not available (pruned
 * data)" for them. When the scanner needs one (a long catch-up, a deep reorganisation), the chain
 * is in maintenance with a reason naming the block, the node's prune height and what to do, not the
 * node's bare error poll after poll; given a node that has the blocks, the scan goes on.
 */
import test from 'ava';
import { killAllBcoins, startBcoin } from '../../../helpers/bcoin';
import { startBtcRpcProxy } from '../../../helpers/btc-rpc-proxy';
import { startTestDaemon } from '../../../helpers/daemon';
import { btcChain, until } from './btc-fixture';

test.after.always(killAllBcoins);

test("blocks the scanner needs below a pruned node's prune height: maintenance naming the block, the prune height and the fix; unpruned, the scan catches up", async (t) => {
  const node = await startBcoin();
  const proxy = await startBtcRpcProxy(node.rpcUrl);
  t.teardown(() => proxy.close());
  const td = await startTestDaemon({ chains: [btcChain(node, {}, proxy)] });
  t.teardown(() => td.stop());
  const status = () => td.daemon.chains.status()[0]!;
  const start = await node.height();
  await until(() => status().scanned_height === start, 'scanned to the tip');

  // While the daemon was away the node moved on and pruned what the scanner has not read yet.
  proxy.prune(start + 6);
  await node.mine(10);
  await until(() => status().maintenance, 'maintenance');
  t.is(status().scanned_height, start);
  t.is(
    status().last_error,
    `bitcoin node has pruned block ${start + 1}, which the scanner needs (it keeps blocks from ${start + 6}): give the chain a node that has it (add an unpruned node to rpc_urls, or restart this one with a larger -prune and -reindex)`,
  );

  proxy.prune(null);
  await until(() => status().scanned_height === start + 10 && !status().maintenance, 'caught up');
  t.pass();
});
