import test from 'ava';
import path from 'node:path';
import { clientSuite, root, runs } from './suite';

clientSuite(test, {
  name: 'python',
  missing: () => (runs(['python3', '-c', 'import sys; sys.exit(sys.version_info < (3, 8))']) ? null : 'python3 (3.8 or newer) not found'),
  prepare: async () => ({ command: ['python3', path.join(root, 'clients', 'python', 'tests', 'driver.py')], env: { PYTHONDONTWRITEBYTECODE: '1' } }),
});
