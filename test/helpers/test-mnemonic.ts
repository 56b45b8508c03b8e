/** The tests' wallet seed: the mnemonic of the BIP84/BIP44 test vectors (never for real funds). */
export const TEST_MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
