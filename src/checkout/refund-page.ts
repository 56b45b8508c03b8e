import { createHash } from 'node:crypto';
import type { RefundPageView } from '../refunds/refund-page.source';
import { fill, type MessageKey, type Messages } from './messages';
import { escapeHtml, jsonBlock, pageCsp, shell } from './page';
import { PAGE_STYLE } from './page-assets';

/**
 * The payer's refund page (PRODUCT §16): GET /pay/{id}/refund/{token}. The payment page's look
 * (its style, with a few rules for the address field) and a small script of its own: the address
 * is checked (POST .../check) and shown back with its network before it is final (POST
 * .../address); the status is then polled from GET .../status until the refund is over. Without
 * JavaScript the same two forms post urlencoded and the server answers with the next page.
 */
export const REFUND_STYLE =
  PAGE_STYLE +
  `input{display:block;width:100%;font:inherit;padding:.6rem .7rem;border:1px solid var(--muted);border-radius:.5rem;background:var(--card);color:var(--fg)}
input:focus-visible,h2:focus-visible{outline:3px solid var(--accent);outline-offset:2px}input[aria-invalid=true]{border-color:var(--warn)}
.error{color:var(--warn);font-weight:600;margin:.5rem 0 0}.error:empty{display:none}
.button.secondary,.secondary{background:transparent;color:var(--fg);border-color:var(--line)}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;margin:.75rem 0 0}form p{margin:.5rem 0}
.facts{display:block}.facts div{margin-top:.5rem}.facts dt{color:var(--muted)}.facts dd code{display:block}
#status[data-status=completed] #status-text{color:var(--ok)}#status[data-status=failed] #status-text,#status[data-status=rejected] #status-text,#status[data-status=expired] #status-text,#status[data-status=cancelled] #status-text{color:var(--warn)}
`;

export const REFUND_SCRIPT = `(function(){'use strict';
var $=function(id){return document.getElementById(id)};
var M=JSON.parse($('messages').textContent),v=JSON.parse($('view').textContent),c=JSON.parse($('checked').textContent);
var base=location.pathname.replace(/\\/+$/,'').replace(/\\/(check|address)$/,'');
var FINAL={completed:1,failed:1,rejected:1,cancelled:1,expired:1},AS={pending:'preparing',review:'preparing',awaiting_approval:'preparing',rejected:'failed'};
var input=$('to-address'),polling=false;
function fill(t,o){return t.replace(/\\{(\\w+)\\}/g,function(_,k){return o[k]==null?'':String(o[k])})}
function render(){
  var s=v.status,w=s==='awaiting_address';if(!w)c=null;
  $('status').setAttribute('data-status',s);
  $('status-text').textContent=M['refund_status_'+(AS[s]||s)]||s;
  $('address-box').hidden=!(w&&!c);$('confirm-box').hidden=!(w&&c);
  if(c){$('confirm-text').textContent=fill(M.refund_confirm_text,{amount:v.amount,ticker:v.ticker,network:c.network_name});
    $('confirm-address').textContent=c.to_address;$('confirm-value').value=c.to_address}
  $('to').textContent=v.to_address||'';$('to-row').hidden=!v.to_address;
  $('txid').textContent=v.txid||'';$('txid-row').hidden=!v.txid;
  if(!FINAL[s]&&!polling){polling=true;setTimeout(poll,4000)}
}
function poll(){
  fetch(base+'/status',{headers:{accept:'application/json'},cache:'no-store'}).then(function(r){return r.ok?r.json():null}).then(function(n){
    polling=false;if(n&&n.status!==v.status){v=n;$('status-detail').textContent=''}else if(n)v=n;render();
  },function(){polling=false;render()});
}
function say(id,text){var el=$(id);el.textContent='';el.textContent=text}
function post(path,address){
  return fetch(base+path,{method:'POST',headers:{'content-type':'application/json',accept:'application/json'},body:JSON.stringify({to_address:address})}).then(function(r){
    return r.json().then(function(b){return {ok:r.ok,status:r.status,body:b}},function(){return {ok:false,status:r.status,body:{}}});
  },function(){return {ok:false,status:0,body:{}}});
}
function why(r){var e=(r.body&&r.body.error)||{};
  if(r.status===429)return 'limited';if(r.status===409)return 'conflict';
  if(e.code==='address_refused'||e.code==='validation_error')return 'address';return 'other'}
function wrong(key){input.setAttribute('aria-invalid','true');say('address-error',M['refund_error_'+key]);input.focus()}
function busy(form,on){var b=form.querySelector('button[type=submit]');b.disabled=on;form.setAttribute('aria-busy',on?'true':'false')}
$('address-form').addEventListener('submit',function(e){
  e.preventDefault();var form=e.currentTarget,a=input.value.trim();say('address-error','');input.removeAttribute('aria-invalid');
  if(a===''){wrong('empty');return}
  busy(form,true);post('/check',a).then(function(r){busy(form,false);
    if(r.ok){c=r.body;say('confirm-error','');render();$('confirm-h').focus();return}
    var k=why(r);if(k==='conflict'){say('status-detail',M.refund_error_conflict);poll();return}wrong(k);
  });
});
$('confirm-form').addEventListener('submit',function(e){
  e.preventDefault();if(!c)return;var form=e.currentTarget;say('confirm-error','');
  busy(form,true);post('/address',c.to_address).then(function(r){busy(form,false);
    if(r.ok){v=r.body;render();$('status-h').focus();return}
    var k=why(r);
    if(k==='conflict'){say('status-detail',M.refund_error_conflict);c=null;render();$('status-h').focus();poll();return}
    if(k==='address'){c=null;render();wrong('address');return}
    say('confirm-error',M['refund_error_'+k]);
  });
});
$('change').addEventListener('click',function(e){e.preventDefault();c=null;render();input.focus()});
var t=$('until-time');if(t&&v.expires_at){try{t.textContent=new Date(v.expires_at).toLocaleString(document.documentElement.lang,{dateStyle:'medium',timeStyle:'short'})}catch(_){}}
render();
})();`;

const sha256 = (text: string): string => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
/** The refund page's policy: the payment page's, with this page's own style and script, never framed. */
export const REFUND_CSP = pageCsp([], { script: sha256(REFUND_SCRIPT), style: sha256(REFUND_STYLE) });

/** The messages the refund page's script needs as they are (the rest are rendered here). */
const SCRIPT_MESSAGES: MessageKey[] = [
  'refund_status_awaiting_address',
  'refund_status_preparing',
  'refund_status_processing',
  'refund_status_broadcast',
  'refund_status_completed',
  'refund_status_failed',
  'refund_status_cancelled',
  'refund_status_expired',
  'refund_confirm_text',
  'refund_error_empty',
  'refund_error_conflict',
  'refund_error_limited',
  'refund_error_other',
];

/** Statuses that read the same to a payer. */
const STATUS_AS: Partial<Record<RefundPageView['status'], string>> = {
  pending: 'preparing',
  review: 'preparing',
  awaiting_approval: 'preparing',
  rejected: 'failed',
};

/** What went wrong with an address the payer posted, as the page says it. */
export type RefundError = 'address' | 'empty' | 'conflict' | 'limited' | 'other';

export interface RefundPageInput {
  view: RefundPageView;
  lang: string;
  m: Messages;
  /** The page's path relative to where this answer is served: `{token}` on the page, `../{token}` below it. */
  here: string;
  /** An address checked and shown back for confirmation (the no-script flow; the script keeps its own). */
  checked?: { to_address: string; network: string; network_name: string } | null;
  /** An error to show: at the address field, at the confirmation, or (a conflict) in the status. */
  error?: { kind: RefundError; at: 'address' | 'confirm' } | null;
  /** What the payer typed, kept in the field after an error. */
  entered?: string;
}

/** "2026-12-05 14:30 UTC": the link's end before the script writes it in the payer's own time. */
const utcMinute = (iso: string): string => {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
};

/** The payer's refund page of one refund. */
export function renderRefundPage({ view, lang, m, here, checked = null, error = null, entered = '' }: RefundPageInput): string {
  const e = escapeHtml;
  const coin = fill(m.on_network, { ticker: view.ticker, network: view.network_name });
  const waiting = view.status === 'awaiting_address';
  const confirm = waiting ? checked : null;
  const errorText = (kind: RefundError) => (kind === 'address' ? fill(m.refund_error_address, { coin }) : m[`refund_error_${kind}`]);
  const addressError = error && error.at === 'address' && error.kind !== 'conflict' ? errorText(error.kind) : '';
  const confirmError = error && error.at === 'confirm' && error.kind !== 'conflict' ? errorText(error.kind) : '';
  const detail = error?.kind === 'conflict' ? m.refund_error_conflict : '';
  const hidden = (on: boolean) => (on ? '' : ' hidden');
  const title = view.merchant_name ? fill(m.refund_from, { merchant: view.merchant_name }) : m.refund_title;
  const parts: string[] = [];
  parts.push(`<h1>${e(title)}</h1>`);
  parts.push(
    `<section aria-labelledby="amount-h"><h2 id="amount-h">${e(m.refund_amount)}</h2><p class="total">${e(view.amount)} ${e(view.ticker)}</p>` +
      `<p class="network">${e(coin)}</p><p class="note" id="fee">${e(view.network_fee_paid_by === 'payer' ? m.refund_fee_payer : m.refund_fee_merchant)}</p></section>`,
  );
  parts.push(
    `<section id="address-box" aria-labelledby="address-h"${hidden(waiting && !confirm)}><h2 id="address-h">${e(m.refund_where)}</h2>` +
      `<form id="address-form" method="post" action="${e(here)}/check" novalidate>` +
      `<p><label class="label" for="to-address">${e(fill(m.refund_address_label, { coin }))}</label></p>` +
      `<input id="to-address" name="to_address" type="text" value="${e(entered)}" maxlength="${MAX_ADDRESS_CHARS}" autocomplete="off" autocapitalize="none" autocorrect="off" spellcheck="false" aria-describedby="address-note address-error"${addressError ? ' aria-invalid="true"' : ''}>` +
      `<p class="note" id="address-note">${e(fill(m.refund_address_note, { coin }))}</p>` +
      `<p class="error" id="address-error" role="alert">${e(addressError)}</p>` +
      `<div class="actions"><button type="submit" class="primary">${e(m.refund_check)}</button></div></form>` +
      (view.expires_at
        ? `<p class="note" id="until">${e(m.refund_link_until)} <time id="until-time" datetime="${e(view.expires_at)}">${e(utcMinute(view.expires_at))}</time></p>`
        : '') +
      `</section>`,
  );
  const shown = confirm ?? { to_address: '', network: view.network, network_name: view.network_name };
  parts.push(
    `<section id="confirm-box" aria-labelledby="confirm-h"${hidden(confirm !== null)}><h2 id="confirm-h" tabindex="-1">${e(m.refund_confirm_h)}</h2>` +
      `<p id="confirm-text">${e(fill(m.refund_confirm_text, { amount: view.amount, ticker: view.ticker, network: shown.network_name }))}</p>` +
      `<p><code id="confirm-address">${e(shown.to_address)}</code></p><p class="note">${e(m.refund_confirm_final)}</p>` +
      `<p class="error" id="confirm-error" role="alert">${e(confirmError)}</p>` +
      `<form id="confirm-form" method="post" action="${e(here)}/address"><input type="hidden" name="to_address" id="confirm-value" value="${e(shown.to_address)}">` +
      `<div class="actions"><button type="submit" class="primary">${e(m.refund_confirm)}</button><a id="change" class="button secondary" href="${e(here)}">${e(m.refund_change)}</a></div></form></section>`,
  );
  const statusKey = `refund_status_${STATUS_AS[view.status] ?? view.status}` as MessageKey;
  parts.push(
    `<section id="status" aria-labelledby="status-h" aria-live="polite" data-status="${e(view.status)}"><h2 id="status-h" tabindex="-1">${e(m.status)}</h2>` +
      `<p id="status-text">${e(m[statusKey] ?? view.status)}</p><p id="status-detail">${e(detail)}</p><dl class="facts">` +
      `<div id="to-row"${hidden(view.to_address !== null)}><dt>${e(m.refund_to)}</dt><dd><code id="to">${e(view.to_address ?? '')}</code></dd></div>` +
      `<div id="txid-row"${hidden(view.txid !== null)}><dt>${e(m.refund_txid)}</dt><dd><code id="txid">${e(view.txid ?? '')}</code></dd></div></dl></section>`,
  );
  const messages = Object.fromEntries(SCRIPT_MESSAGES.map((k) => [k, m[k]]));
  messages.refund_error_address = fill(m.refund_error_address, { coin });
  const body =
    `<main id="refund">${parts.join('')}</main>` +
    jsonBlock('messages', messages) +
    jsonBlock('view', view) +
    jsonBlock('checked', confirm) +
    `<script>${REFUND_SCRIPT}</script>`;
  return shell(lang, `${title}: ${view.amount} ${view.ticker}`, body, REFUND_STYLE);
}

/** The view with the contract's fields only, whatever else the source's object carries: the page and its status show these. */
export function payerRefundView(v: RefundPageView): RefundPageView {
  return {
    status: v.status,
    amount: v.amount,
    ticker: v.ticker,
    network: v.network,
    network_name: v.network_name,
    network_fee_paid_by: v.network_fee_paid_by,
    to_address: v.to_address,
    txid: v.txid,
    expires_at: v.expires_at,
    merchant_name: v.merchant_name ?? null,
  };
}

/** The longest address the page takes (every chain's addresses are far shorter). */
export const MAX_ADDRESS_CHARS = 200;
