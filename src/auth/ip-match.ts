import { BlockList, isIP } from 'node:net';

/** Normalises an IPv4-mapped IPv6 address (::ffff:1.2.3.4) to its IPv4 form. */
export const normalizeIp = (ip: string): string => (ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip);

/** Whether `ip` is inside any entry of a whitelist of IPs and CIDRs. An empty list allows every IP. */
export function ipAllowed(whitelist: readonly string[], ip: string): boolean {
  if (whitelist.length === 0) return true;
  const addr = normalizeIp(ip);
  const family = isIP(addr);
  if (family === 0) return false;
  const list = new BlockList();
  for (const entry of whitelist) {
    const [base, bits] = entry.split('/');
    const fam = isIP(base!);
    if (fam === 0) continue;
    const type = fam === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(base!, type);
    else list.addSubnet(base!, Number(bits), type);
  }
  return list.check(addr, family === 4 ? 'ipv4' : 'ipv6');
}
