import { createHash } from 'node:crypto';

/**
 * The payment page's own style and script, inlined in every page and allowed by their hashes in
 * the Content-Security-Policy (no other origin, no framework). The script renders the status from
 * the view embedded in the page, listens to GET /pay/{id}/events (Server-Sent Events: the view after
 * each change) and polls GET /pay/{id}/status as the fallback (every 4 s, every 30 s while events
 * arrive: a proxy that buffers the stream leaves the poll at 4 s), runs the countdown, copies, and posts
 * the coin choice.
 */
export const PAGE_STYLE = `
:root{color-scheme:light dark;--bg:#f6f7f9;--fg:#16181d;--card:#fff;--muted:#555b66;--line:#d5d9e0;--accent:#0b57d0;--accent-fg:#fff;--ok:#0a7a32;--warn:#8a5300}
@media (prefers-color-scheme:dark){:root{--bg:#111317;--fg:#eceef2;--card:#1c1f25;--muted:#b4bac4;--line:#3a3f48;--accent:#8ab4f8;--accent-fg:#0b1020;--ok:#6fdc8c;--warn:#ffcc66}}
*{box-sizing:border-box}[hidden]{display:none!important}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:30rem;margin:0 auto;padding:1rem}
h1{font-size:1.25rem;margin:.25rem 0 1rem}h2{font-size:1.05rem;margin:0 0 .75rem}
section{background:var(--card);border:1px solid var(--line);border-radius:.75rem;padding:1rem;margin:0 0 1rem}
.total{font-size:1.5rem;font-weight:700;margin:0}
ul{list-style:none;margin:0;padding:0}li+li{margin-top:.5rem}
button,.button{display:inline-block;font:inherit;border-radius:.5rem;padding:.6rem .9rem;cursor:pointer;text-decoration:none;border:1px solid var(--accent)}
.choice{width:100%;text-align:left;background:transparent;color:var(--fg);border-color:var(--line)}
.choice span{display:block;color:var(--muted);font-size:.9rem}
.primary,.button{background:var(--accent);color:var(--accent-fg)}
.copy{background:transparent;color:var(--fg);border-color:var(--line);flex:none}
button:focus-visible,.button:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.label{color:var(--muted);margin:.75rem 0 .25rem}
.note{color:var(--muted);font-size:.9rem;margin:.75rem 0 0}.network{font-weight:600;margin:0 0 .75rem}
.row{display:flex;gap:.5rem;align-items:center}
code{flex:1;min-width:0;overflow-wrap:anywhere;font:600 .95rem/1.4 ui-monospace,Menlo,Consolas,monospace}
.qr{margin:0 auto .5rem;max-width:14rem;background:#fff;border-radius:.5rem;padding:.25rem}.qr svg{display:block;width:100%;height:auto}
#status-text{font-weight:700;margin:0}#status[data-status=paid] #status-text{color:var(--ok)}#status[data-status=underpaid] #status-text,#status[data-status=expired] #status-text{color:var(--warn)}
dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem;margin:.75rem 0 0}dd{margin:0;font-weight:600}
`;

export const PAGE_SCRIPT = `(function(){'use strict';
var $=function(id){return document.getElementById(id)};
var M=JSON.parse($('messages').textContent),v=JSON.parse($('view').textContent);
var base=location.pathname.replace(/\\/+$/,''),FINAL={paid:1,expired:1,cancelled:1};
function fill(t,o){return t.replace(/\\{(\\w+)\\}/g,function(_,k){return o[k]==null?'':String(o[k])})}
function unit(){return v.coin?' '+v.coin.ticker:''}
function late(){return Date.parse(v.ttl_expires_at)<=Date.now()}
function live(){return !FINAL[v.status]&&!(v.status==='underpaid'&&late())}
function render(){
  var s=v.status,detail='',box=$('pay-box');
  if(s==='pending'&&v.confirmations)detail=fill(M.confirmations,v.confirmations);
  if(s==='expired'&&(v.paid_amount!=='0'||v.late_payment))detail=M.expired_received;
  if(s==='underpaid'&&late())detail=M.expired_received;
  $('status').setAttribute('data-status',s);
  $('status-text').textContent=M['status_'+s]||s;
  $('status-detail').textContent=detail;
  $('partial').hidden=s!=='underpaid';
  $('paid').textContent=v.paid_amount+unit();$('due').textContent=v.remaining_amount+unit();
  var back=$('return');if(back)back.hidden=s!=='paid';
  if(box)box.hidden=!(s==='new'||s==='pending'||(s==='underpaid'&&!late()));
}
function tick(){
  var el=$('countdown');if(!el)return;
  var ms=Math.max(0,Date.parse(v.ttl_expires_at)-Date.now()),t=Math.floor(ms/1000),h=Math.floor(t/3600),m=Math.floor(t/60)%60,sec=t%60;
  el.textContent=(h?h+':'+(m<10?'0':''):'')+m+':'+(sec<10?'0':'')+sec;
  if(ms===0&&v.status==='new'){v.status='expired';render()}
}
var heard=0;
function show(n){
  if(n.payment_uri!==v.payment_uri||(n.coin===null)!==(v.coin===null)){location.reload();return}
  var changed=n.status!==v.status;v=n;render();if(changed)announce();
}
function wait(){return heard?30000:4000}
function poll(){
  fetch(base+'/status',{headers:{accept:'application/json'},cache:'no-store'}).then(function(r){return r.ok?r.json():null}).then(function(n){
    if(n)show(n);
    if(live())setTimeout(poll,wait());
  },function(){setTimeout(poll,wait())});
}
function listen(){
  if(!window.EventSource||!live())return;
  var es=new EventSource(base+'/events');
  es.onmessage=function(e){var n;try{n=JSON.parse(e.data)}catch(_){return}heard=1;show(n);if(!live())es.close()};
  es.onerror=function(){heard=0;if(!live())es.close()};
}
function announce(){
  if(window.parent===window)return;
  var to=JSON.parse($('pay').getAttribute('data-parents')||'[]');
  to.forEach(function(o){window.parent.postMessage({type:'coinkeep.invoice.status',invoice_id:v.id,status:v.status},o)});
}
document.addEventListener('click',function(e){
  var b=e.target.closest('button');if(!b)return;
  var copy=b.getAttribute('data-copy'),coin=b.getAttribute('data-coin');
  if(copy&&navigator.clipboard){navigator.clipboard.writeText($(copy).getAttribute('data-value')).then(function(){
    var was=b.textContent;b.textContent=M.copied;setTimeout(function(){b.textContent=was},1500)})}
  if(coin){
    e.preventDefault();b.disabled=true;
    fetch(base+'/coin',{method:'POST',headers:{'content-type':'application/json'},body:JSON.stringify({coin_id:coin})}).then(function(r){
      if(r.ok)location.reload();else{$('choice-error').hidden=false;b.disabled=false}
    },function(){$('choice-error').hidden=false;b.disabled=false});
  }
});
render();tick();setInterval(tick,1000);listen();if(live())setTimeout(poll,4000);
})();`;

const sha256 = (text: string): string => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
export const STYLE_HASH = sha256(PAGE_STYLE);
export const SCRIPT_HASH = sha256(PAGE_SCRIPT);
