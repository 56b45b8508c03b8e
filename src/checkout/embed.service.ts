import { EmbedOriginsEntity } from '../db/entities/embed';
import type { Store } from '../db/store';
import { iso, type Clock } from '../shared/clock';
import { validationError } from '../shared/errors';
import { checkShape } from '../shared/schema';
import { EmbedBody } from './embed.api';

export const MAX_EMBED_ORIGINS = 20;
const ORIGIN_MAX_LENGTH = 200;
/** A DNS name or an IP address: what goes into the page's frame-ancestors can carry no wildcard or separator. */
const HOST = /^(\[[0-9a-f:.]+\]|[a-z0-9-]+(\.[a-z0-9-]+)*)$/;

/**
 * The body of PUT /v1/embed: `allowed_origins`, at most 20 origins exactly as a browser writes one
 * (scheme, host, port only: `https://shop.example`), https only (http too on a test network, for
 * a shop on a developer's machine); repeats are kept once.
 */
export function parseEmbedOrigins(body: Record<string, unknown>, testnet: boolean): string[] {
  checkShape(EmbedBody, body, 'the embed settings');
  const list = body.allowed_origins;
  if (!Array.isArray(list)) throw validationError('allowed_origins', 'allowed_origins must be an array of origins');
  if (list.length > MAX_EMBED_ORIGINS) throw validationError('allowed_origins', `allowed_origins has more than ${MAX_EMBED_ORIGINS} origins`);
  const schemes = testnet ? ['https:', 'http:'] : ['https:'];
  const kept: string[] = [];
  for (const value of list) {
    const bad = () =>
      validationError(
        'allowed_origins',
        `${JSON.stringify(value)} is not an ${testnet ? 'http(s)' : 'https'} origin such as https://shop.example (scheme, host and port, nothing more)`,
      );
    if (typeof value !== 'string' || value.length === 0 || value.length > ORIGIN_MAX_LENGTH) throw bad();
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw bad();
    }
    // The origin a browser would send, character for character: no path, query, user or wildcard.
    if (!schemes.includes(url.protocol) || url.origin !== value || !HOST.test(url.hostname)) throw bad();
    if (!kept.includes(value)) kept.push(value);
  }
  return kept;
}

/** The origins allowed to frame an account's payment pages (PRODUCT §11). */
export class EmbedService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  async get(accountId: string): Promise<string[]> {
    const row = await this.store.read.findOneBy(EmbedOriginsEntity, { account_id: accountId });
    return row ? (JSON.parse(row.allowed_origins) as string[]) : [];
  }

  async set(accountId: string, origins: string[]): Promise<string[]> {
    await this.store.write(async (em) => {
      await em.delete(EmbedOriginsEntity, { account_id: accountId });
      await em.insert(EmbedOriginsEntity, { account_id: accountId, allowed_origins: JSON.stringify(origins), updated_at: iso(this.clock.now()) });
    });
    return origins;
  }
}
