/** An EVM address as text: `0x` and 40 hex digits in any case (its EIP-55 checksum not checked here). */
const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

export const isHexAddress = (text: string): boolean => HEX_ADDRESS.test(text);

/** The 40 hex digits of an EVM address, lower-case; throws when `text` is not one. */
export function addressDigits(text: string): string {
  if (!HEX_ADDRESS.test(text)) throw new Error(`not an EVM address: ${text}`);
  return text.slice(2).toLowerCase();
}
