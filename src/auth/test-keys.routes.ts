import type { Config } from '../config/schema';
import { newRouter, type AppRouter } from '../http/context';

export const TEST_KEYS_DOC_PATH = '/docs/test-keys';

/** Where `auth.test_key` points (`details.docs_url`): a page this install serves itself. */
export const testKeysDocUrl = (config: Config): string => `${config.base_url.replace(/\/+$/, '')}${TEST_KEYS_DOC_PATH}`;

/** The page `details.docs_url` of `auth.test_key` links: plain text, unsigned, naming this install's network. */
export function testKeysDocRoutes(config: Config): AppRouter {
  const text = [
    'Coinkeep API keys: ck_live_ and ck_test_',
    '',
    `This install runs on ${config.network === 'mainnet' ? 'mainnets (network: mainnet)' : 'test networks (network: testnet)'}.`,
    '',
    'Both kinds of key sign requests the same way. The install decides which networks money moves on,',
    'not the prefix of the key:',
    '- on a testnet install both kinds work, and only test coins move;',
    '- on a mainnet install a ck_test_ key is refused on every request, reads too, with 401',
    '  auth.test_key, before the key is looked up, and nothing is done. Test keys cannot be created',
    '  there (400 validation_error on field mode): use a ck_live_ key of this install.',
    '',
    'Installs share no accounts and no keys: a key of another install is 401 auth.invalid_signature.',
    '',
  ].join('\n');
  const r = newRouter();
  r.get(TEST_KEYS_DOC_PATH, (ctx) => {
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = text;
  });
  return r;
}
