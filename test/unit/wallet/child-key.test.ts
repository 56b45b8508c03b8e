import test from 'ava';
import { BIP32Factory } from 'bip32';
import * as ecc from 'tiny-secp256k1';
import { publicChildKeys } from '../../../src/wallet/child-key';
import { SeededRandom } from '../../helpers/seeded-random';

const bip32 = BIP32Factory(ecc);

test('hardened and out-of-range indexes are refused (an address branch is never hardened)', (t) => {
  const branch = bip32.fromSeed(Buffer.alloc(32, 7)).derivePath("m/84'/0'/0'/0");
  const keyOf = publicChildKeys({ publicKey: branch.publicKey, chainCode: branch.chainCode });
  for (const bad of [0x80000000, -1, 1.5, Number.NaN]) t.throws(() => keyOf(bad, true));
});

test('the public branch alone gives the same child keys (CKDpub), compressed and uncompressed', (t) => {
  const rnd = new SeededRandom(44);
  for (let n = 0; n < 20; n++) {
    const seed = Buffer.from(Array.from({ length: 32 }, () => rnd.int(0, 255)));
    const branch = bip32.fromSeed(seed).derivePath(`m/84'/1'/${n}'/0`);
    const keyOf = publicChildKeys({ publicKey: branch.publicKey, chainCode: branch.chainCode });
    const index = n < 3 ? n : rnd.int(0, 0x7fffffff);
    const expected = branch.derive(index).publicKey;
    t.deepEqual(Buffer.from(keyOf(index, true)), Buffer.from(expected));
    t.deepEqual(Buffer.from(keyOf(index, false)), Buffer.from(ecc.pointCompress(expected, false)));
  }
});
