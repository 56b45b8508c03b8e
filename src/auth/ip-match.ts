import { BlockList, isIP } from 'node:net';

/** Normalises an IPv4-mapped IPv6 address (::ffff:1.2.3.4) to its IPv4 form. */
export const normalizeIp = (ip: string): string => (ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip);

/**
 * A whitelist of IPs and CIDRs compiled once (a key's whitelist is checked on every request it
 * signs): whether an address is inside any entry. An empty list allows every IP.
 */
export function whitelistMatcher(whitelist: readonly string[]): (ip: string) => boolean {
  if (whitelist.length === 0) return () => true;
  const list = new BlockList();
  for (const entry of whitelist) {
    const [base, bits] = entry.split('/');
    const fam = isIP(base!);
    if (fam === 0) continue;
    const type = fam === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(base!, type);
    else list.addSubnet(base!, Number(bits), type);
  }
  return (ip) => {
    const addr = normalizeIp(ip);
    const family = isIP(addr);
    return family !== 0 && list.check(addr, family === 4 ? 'ipv4' : 'ipv6');
  };
}

/** The hextets of an IPv6 address, `::` expanded (an embedded IPv4 tail counts as its two). */
function ipv6Groups(ip: string): number[] {
  const split = (part: string): number[] => (part === '' ? [] : part.split(':').flatMap((g) => (g.includes('.') ? [0, 0] : [parseInt(g, 16)])));
  const [left, right] = ip.split('%')[0]!.split('::');
  const head = split(left!);
  if (right === undefined) return head;
  const tail = split(right);
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

/**
 * What refused authentications are counted against: an IPv4 address, or an IPv6 client's /64 (one
 * host is handed a whole /64 and could otherwise spread its failures over as many entries as it likes).
 */
export function blockKey(ip: string): string {
  if (!ip.includes(':') || isIP(ip) !== 6) return ip;
  return `${ipv6Groups(ip)
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}
