import { FetchRequest, JsonRpcProvider, Network } from 'ethers';

/**
 * An EVM node's JSON-RPC, through ethers' provider (batched requests, a timeout per request).
 * Errors leave as one short line naming the method and the reason, never the node's URL, which may
 * carry credentials or an API key.
 */
export class EvmRpc {
  private readonly provider: JsonRpcProvider;

  constructor(rpcUrl: string, chainId: number, timeoutMs: number) {
    const url = new URL(rpcUrl);
    const user = decodeURIComponent(url.username);
    const password = decodeURIComponent(url.password);
    url.username = '';
    url.password = '';
    const request = new FetchRequest(url.toString());
    request.timeout = timeoutMs;
    if (user || password) {
      // Basic auth over http is the norm for a node on the same host or a private network.
      request.allowInsecureAuthentication = true;
      request.setCredentials(user, password);
    }
    this.provider = new JsonRpcProvider(request, Network.from(chainId), { staticNetwork: true, batchMaxCount: 100 });
  }

  async call<T>(method: string, params: unknown[], signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    try {
      return (await this.provider.send(method, params)) as T;
    } catch (err) {
      throw new Error(`evm node ${method}: ${reasonOf(err)}`);
    }
  }

  close(): void {
    this.provider.destroy();
  }
}

function reasonOf(err: unknown): string {
  const e = err as { code?: string; shortMessage?: string; error?: { message?: string }; info?: { error?: { message?: string } } };
  const rpcMessage = e.error?.message ?? e.info?.error?.message;
  if (rpcMessage) return rpcMessage.slice(0, 200);
  if (e.code === 'TIMEOUT') return 'timed out';
  if (e.code && /^E[A-Z]+$/.test(e.code)) return `unreachable (${e.code})`;
  if (e.code) return `${e.code.toLowerCase().replace(/_/g, ' ')}${e.shortMessage ? ` (${e.shortMessage.slice(0, 120)})` : ''}`;
  return 'request failed';
}
