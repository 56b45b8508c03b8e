import test from 'ava';
import path from 'node:path';
import { clientSuite, root, runs } from './suite';

clientSuite(test, {
  name: 'php',
  missing: () => {
    if (!runs(['php', '-r', 'exit(PHP_VERSION_ID >= 80100 ? 0 : 1);'])) return 'php (8.1 or newer) not found (Debian: apt-get install php-cli php-curl)';
    if (!runs(['php', '-r', 'exit(extension_loaded("curl") && extension_loaded("hash") ? 0 : 1);']))
      return "php's curl extension not loaded (Debian: apt-get install php-curl)";
    return null;
  },
  prepare: async () => ({ command: ['php', path.join(root, 'clients', 'php', 'tests', 'driver.php')] }),
});
