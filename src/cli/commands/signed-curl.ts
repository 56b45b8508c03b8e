/**
 * A shell snippet that signs and sends one request when pasted: the timestamp is taken and the
 * HMAC computed by openssl at run time, so it works whenever it is run (and twice).
 */
export function signedCurl(baseUrl: string, keyId: string, secret: string, method: 'GET' | 'POST', target: string, body = ''): string {
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  return [
    `KEY=${q(keyId)} SECRET=${q(secret)} BODY=${q(body)}`,
    `TS=$(date +%s)`,
    `SIG=$(printf '%s\\n%s\\n%s\\n%s' "$TS" ${method} ${q(target)} "$(printf '%s' "$BODY" | openssl dgst -sha256 -hex | sed 's/^.* //')" | openssl dgst -sha256 -hmac "$SECRET" -hex | sed 's/^.* //')`,
    `curl -s -X ${method} ${q(baseUrl + target)} -H "X-API-Key: $KEY" -H "X-Timestamp: $TS" -H "X-Signature: $SIG"${body ? ` -H 'Content-Type: application/json' --data-binary "$BODY"` : ''}; echo`,
  ].join('\n');
}
