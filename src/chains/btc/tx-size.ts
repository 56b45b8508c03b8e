/**
 * Virtual sizes (vbytes) of the parts of a transaction spending P2WPKH coins, to price a
 * transaction before it is signed. A P2WPKH input: outpoint, empty script, sequence (41 bytes) and a
 * witness of a signature and a key (at most 108 weight units: 27 vbytes, rounded up). The overhead:
 * version and locktime (8 bytes), the input and output counts (3 bytes each, enough for up to
 * 65,535 of either: a batch can exceed the 252 a 1-byte count holds), and the segwit marker and flag
 * (half a vbyte, rounded up). Every figure is an upper bound, so a signed payout never pays under
 * the rate it was priced at.
 */
export const P2WPKH_INPUT_VSIZE = 68;
export const TX_OVERHEAD_VSIZE = 15;

/** An output paying `scriptLength` bytes of script: value (8), script length (1), script. */
export const outputVsize = (scriptLength: number): number => 9 + scriptLength;

/** What a payout was priced at before its coins were known: a payment with two P2WPKH inputs, its output and change, rounded up. */
export const TWO_INPUT_PAYMENT_VSIZE = 250;

/** A P2WPKH output's script: OP_0 and a 20-byte push. */
export const P2WPKH_SCRIPT_LENGTH = 22;

/**
 * The smallest output a node relays (Bitcoin Core's dust rule at its 3 sat/vB dust relay rate): an
 * output worth less than the cost of creating and later spending it. 294 sat for P2WPKH, 546 for
 * P2PKH; a witness program (starting with OP_0..OP_16) is spent cheaper than a legacy script.
 */
export function dustLimit(script: Uint8Array): bigint {
  const witness =
    script.length >= 4 && script.length <= 42 && (script[0] === 0 || (script[0]! >= 0x51 && script[0]! <= 0x60)) && script[1] === script.length - 2;
  const spendVsize = witness ? 67 : 148;
  return BigInt(3 * (outputVsize(script.length) + spendVsize));
}

/** The dust limit of a P2WPKH output (the change): 3 × (31 + 67). */
export const P2WPKH_DUST = 294n;

/** The fee of `vsize` vbytes at `satPerVbyte`, in satoshi, rounded up. */
export const feeFor = (vsize: number, satPerVbyte: number): bigint => BigInt(Math.ceil(vsize * satPerVbyte));
