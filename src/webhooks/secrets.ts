import type { Sealer } from '../db/seal';
import { cells } from '../db/sealed-values';
import { randomSecret } from '../shared/ids';

/** Generated secrets: a recognisable prefix, then 256 random bits. */
export const newWebhookSecret = (): string => `whsec_${randomSecret()}`;

export const last4 = (secret: string): string => secret.slice(-4);

/**
 * Webhook secrets at rest (PRODUCT §13): sealed under the master key, the associated data binding
 * each to its own row, so a sealed value copied to another endpoint or account does not open.
 */
export class WebhookSecrets {
  /** Opened endpoint secrets by sealed value, so a busy endpoint is not decrypted per attempt. */
  private readonly opened = new Map<string, string>();

  constructor(private readonly sealer: Sealer) {}

  sealEndpoint(endpointId: string, secret: string): string {
    return this.sealer.seal(secret, cells.endpointSecret(endpointId));
  }
  openEndpoint(endpointId: string, sealed: string): string {
    const key = `${endpointId}:${sealed}`;
    let secret = this.opened.get(key);
    if (secret === undefined) {
      secret = this.sealer.open(sealed, cells.endpointSecret(endpointId));
      if (this.opened.size >= 1000) this.opened.clear();
      this.opened.set(key, secret);
    }
    return secret;
  }
  sealCallback(accountId: string, secret: string): string {
    return this.sealer.seal(secret, cells.callbackSecret(accountId));
  }
  openCallback(accountId: string, sealed: string): string {
    return this.sealer.open(sealed, cells.callbackSecret(accountId));
  }
}
