import { approxForPeople } from './approx';
import type { PayerCoin, PayerView } from './checkout.service';
import { fill, type MessageKey, type Messages } from './messages';
import { PAGE_SCRIPT, PAGE_STYLE, SCRIPT_HASH, STYLE_HASH } from './page-assets';

/** The messages the page's script needs (the rest are rendered here). */
const SCRIPT_MESSAGES: MessageKey[] = [
  'status_new',
  'status_pending',
  'status_paid',
  'status_underpaid',
  'status_expired',
  'status_cancelled',
  'confirmations',
  'expired_received',
  'copied',
];

export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The network a coin is sent on, for people: "Tron (TRC-20)", "Base", "Bitcoin". */
export const networkText = (c: Pick<PayerCoin, 'network_name' | 'token_standard'>): string =>
  c.token_standard === null ? c.network_name : `${c.network_name} (${c.token_standard})`;

/** A payment URI a wallet app opens from a link (BIP21, EIP-681); a bare address (Tron's) is none. */
const openable = (uri: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(uri);

/** JSON inside a `<script type="application/json">`: no `<` can end the element early. */
export const jsonBlock = (id: string, value: unknown): string =>
  `<script type="application/json" id="${id}">${JSON.stringify(value).replace(/</g, '\\u003c')}</script>`;

/**
 * The Content-Security-Policy of the page: nothing from another origin, only our own inline style
 * and script (by hash: the payment page's unless `hashes` names another page's), requests to our
 * own origin, framing only by `frameAncestors`.
 */
export function pageCsp(frameAncestors: readonly string[], hashes: { script: string; style: string } = { script: SCRIPT_HASH, style: STYLE_HASH }): string {
  const ancestors = frameAncestors.length === 0 ? "'none'" : frameAncestors.join(' ');
  return `default-src 'none'; script-src ${hashes.script}; style-src ${hashes.style}; connect-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors ${ancestors}`;
}

/** A page around `body`, with the payment page's style unless given another (whose hash its policy names). */
export function shell(lang: string, title: string, body: string, style: string = PAGE_STYLE): string {
  return `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="referrer" content="no-referrer"><link rel="icon" href="data:,"><title>${escapeHtml(title)}</title><style>${style}</style></head><body>${body}</body></html>`;
}

export interface PageInput {
  view: PayerView;
  lang: string;
  m: Messages;
  /** The QR code of `view.payment_uri` as SVG, when the coin is fixed. */
  qr: string | null;
  /** Origins the page posts its status changes to when framed. */
  parents: readonly string[];
}

/** The payment page of one invoice. */
export function renderPage({ view, lang, m, qr, parents }: PageInput): string {
  const e = escapeHtml;
  const coinLabel = (c: PayerCoin) => fill(m.on_network, { ticker: c.ticker, network: networkText(c) });
  const parts: string[] = [];
  parts.push(`<h1>${e(fill(m.pay_to, { merchant: view.merchant }))}</h1>`);
  parts.push(`<section aria-labelledby="amount-h"><h2 id="amount-h">${e(m.amount)}</h2><p class="total">${e(view.amount)} ${e(view.currency)}</p></section>`);
  if (view.coin === null && view.status === 'new') {
    const items = view.choices.map((c) => {
      const approx = c.approx_amount === null ? '' : `<span>${e(fill(m.about, { amount: `${approxForPeople(c.approx_amount)} ${c.ticker}` }))}</span>`;
      return `<li><button type="submit" name="coin_id" value="${e(c.coin_id)}" class="choice" data-coin="${e(c.coin_id)}">${e(fill(m.choose, { coin: coinLabel(c) }))}${approx}</button></li>`;
    });
    // A form as well as the script: without JavaScript the choice posts the form and comes back here.
    const list =
      items.length > 0
        ? `<form method="post" action="${e(view.id)}/coin"><ul>${items.join('')}</ul></form><p class="note">${e(m.exact_after_choice)}</p>`
        : `<p>${e(m.no_coins)}</p>`;
    parts.push(
      `<section aria-labelledby="choose-h"><h2 id="choose-h">${e(m.choose_coin)}</h2>${list}<p id="choice-error" role="alert" hidden>${e(m.choice_failed)}</p></section>`,
    );
  }
  if (view.coin && view.address && view.payer_amount) {
    const due = view.status === 'underpaid' ? view.remaining_amount : view.payer_amount;
    parts.push(
      `<section id="pay-box" aria-labelledby="coin-h"><h2 id="coin-h">${e(coinLabel(view.coin))}</h2>` +
        `<p class="network" id="network-only">${e(fill(m.network_only, { coin: coinLabel(view.coin) }))}</p>` +
        (qr ? `<div class="qr" role="img" aria-label="${e(m.qr_label)}">${qr}</div>` : '') +
        (view.payment_uri && openable(view.payment_uri)
          ? `<p><a id="open-wallet" class="button" href="${e(view.payment_uri)}">${e(m.open_wallet)}</a></p>`
          : '') +
        `<p class="label" id="amount-l">${e(m.send_exactly)}</p><div class="row"><code id="pay-amount" data-value="${e(due)}" aria-labelledby="amount-l">${e(due)} ${e(view.coin.ticker)}</code>` +
        `<button type="button" class="copy" data-copy="pay-amount">${e(m.copy_amount)}</button></div>` +
        `<p class="label" id="address-l">${e(m.to_address)}</p><div class="row"><code id="pay-address" data-value="${e(view.address)}" aria-labelledby="address-l">${e(view.address)}</code>` +
        `<button type="button" class="copy" data-copy="pay-address">${e(m.copy_address)}</button></div>` +
        `<p class="label">${e(m.time_left)}: <time id="countdown" datetime="${e(view.ttl_expires_at)}"></time></p></section>`,
    );
  }
  const back = view.return_url ? `<p><a id="return" class="button" href="${e(view.return_url)}" hidden>${e(m.return)}</a></p>` : '';
  parts.push(
    `<section id="status" aria-labelledby="status-h" aria-live="polite"><h2 id="status-h">${e(m.status)}</h2><p id="status-text"></p><p id="status-detail"></p>` +
      `<dl id="partial" hidden><dt>${e(m.paid_so_far)}</dt><dd id="paid"></dd><dt>${e(m.still_due)}</dt><dd id="due"></dd></dl>${back}</section>`,
  );
  const messages = Object.fromEntries(SCRIPT_MESSAGES.map((k) => [k, m[k]]));
  const body =
    `<main id="pay" data-parents="${e(JSON.stringify(parents))}">${parts.join('')}</main>` +
    jsonBlock('messages', messages) +
    jsonBlock('view', view) +
    `<script>${PAGE_SCRIPT}</script>`;
  return shell(lang, `${m.title}: ${view.merchant}`, body);
}

/** What any unknown or malformed invoice id gets: the same page, nothing about why. */
export function renderNotFound(lang: string, m: Messages): string {
  return shell(lang, m.not_found, `<main><h1>${escapeHtml(m.not_found)}</h1></main>`);
}
