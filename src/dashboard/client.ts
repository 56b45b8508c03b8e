import type { DashboardScreen, DashboardSnapshot, DeliveryPage } from '../admin/contract';
import { adminCall } from '../cli/admin-client';

export type LogLevelFilter = 'debug' | 'info' | 'warn' | 'error';

/** What the dashboard asks of the daemon: all of it over the admin socket, as the CLI does. */
export interface DashboardApi {
  snapshot(screen: DashboardScreen, account: string | undefined, level: LogLevelFilter): Promise<DashboardSnapshot>;
  post(path: string, body?: Record<string, unknown>): Promise<Record<string, any>>;
  get<T>(path: string): Promise<T>;
}

export function socketApi(dataDir: string): DashboardApi {
  return {
    snapshot: (screen, account, level) => {
      const q = new URLSearchParams({ screen, level });
      if (account) q.set('account', account);
      return adminCall<DashboardSnapshot>(dataDir, 'GET', `/admin/dashboard?${q}`, undefined, 5000);
    },
    post: (path, body = {}) => adminCall(dataDir, 'POST', path, body),
    get: (path) => adminCall(dataDir, 'GET', path),
  };
}

const enc = encodeURIComponent;
export const accountPath = (accountId: string) => `/admin/accounts/${enc(accountId)}`;

/** Every exhausted delivery of one endpoint, page by page (the replay-all key of the Webhooks screen). */
export async function exhaustedOfEndpoint(api: DashboardApi, accountId: string, endpointId: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const q = new URLSearchParams({ status: 'exhausted', endpoint_id: endpointId, limit: '100' });
    if (cursor) q.set('cursor', cursor);
    const page: DeliveryPage = await api.get<DeliveryPage>(`${accountPath(accountId)}/webhooks/deliveries?${q}`);
    ids.push(...page.items.map((d) => d.id));
    cursor = page.next_cursor;
  } while (cursor);
  return ids;
}
