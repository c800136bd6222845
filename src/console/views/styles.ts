/**
 * The console's whole stylesheet, inlined in every page: no build step, no CDN, no web fonts, so
 * `npm start` works offline and the CSP can forbid every fetch. System fonts, WCAG AA contrast,
 * and a focus ring that is always visible for keyboard users.
 */
export const STYLES = `
:root{--fg:#1b1f24;--muted:#57606a;--bg:#f4f5f7;--card:#fff;--line:#d0d7de;--accent:#0b57d0;
--ok:#166c2e;--ok-bg:#e6f4ea;--bad:#b3261e;--bad-bg:#fce8e6;--warn:#7a4d00;--warn-bg:#fff4d6;--info-bg:#e8f0fe;
--mono:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;color-scheme:light}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Liberation Sans",sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--accent)}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.skip{position:absolute;left:-999px;top:0;background:var(--card);padding:.5rem 1rem;z-index:1}
.skip:focus{left:1rem}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
header.top{background:#1b1f24;color:#fff;padding:.6rem 1.5rem;display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:center}
header.top a{color:#fff}
header.top .brand{font-weight:600;text-decoration:none}
header.top nav{display:flex;gap:1rem;flex:1}
header.top .who{display:flex;gap:.75rem;align-items:center;font-size:.9rem}
header.top .who code{color:#d0d7de}
header.top button{background:transparent;color:#fff;border:1px solid #8c959f;padding:.2rem .7rem}
header.top :focus-visible{outline-color:#8ab4f8}
.env{font-size:.75rem;text-transform:uppercase;letter-spacing:.05em;padding:.1rem .5rem;border-radius:999px;background:var(--warn-bg);color:var(--warn);font-weight:600}
.env-production{background:var(--bad);color:#fff}
main{max-width:72rem;margin:0 auto;padding:1.5rem}
main:focus{outline:none}
h1{font-size:1.6rem;margin:.2rem 0 .8rem}
h2{font-size:1.2rem;margin:1.8rem 0 .6rem}
h3{font-size:1rem;margin:0 0 .4rem}
.lede{color:var(--muted);margin-top:0}
.back{margin:0 0 .5rem}
code,pre{font-family:var(--mono);font-size:.88em}
pre{background:var(--bg);padding:.75rem;overflow:auto;border-radius:6px;margin:.3rem 0}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:1rem 1.25rem}
table{width:100%;border-collapse:collapse;background:var(--card);border:1px solid var(--line);border-radius:8px}
caption{text-align:left;font-weight:600;padding:.5rem 0;color:var(--muted)}
th,td{padding:.6rem .75rem;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:#eaeef2;font-size:.85rem;text-transform:uppercase;letter-spacing:.03em}
tbody th{background:none;font-size:1rem;text-transform:none;letter-spacing:0;font-weight:600}
tbody th .meta{font-weight:400;margin:.2rem 0 0}
td.args-cell{min-width:16rem}
.run-id{font-size:.8rem;word-break:break-all}
.short-id{display:inline-block;max-width:14ch;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;vertical-align:bottom;font-size:.8rem}
ul.reasons{margin:0;padding-left:1.1rem}
tbody tr:last-child td{border-bottom:0}
dl.args{display:grid;grid-template-columns:max-content 1fr;gap:.1rem .75rem;margin:0}
dl.args dt{color:var(--muted);font-family:var(--mono);font-size:.85rem}
dl.args dd{margin:0;font-family:var(--mono);font-size:.88rem;overflow-wrap:break-word;word-break:break-word;white-space:pre-wrap}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.35rem 1.25rem;margin:0}
dl.facts dt{color:var(--muted)}
dl.facts dd{margin:0;overflow-wrap:anywhere}
.badge{display:inline-block;padding:.05rem .55rem;border-radius:999px;font-size:.8rem;font-weight:600;border:1px solid transparent;white-space:nowrap}
.badge-read,.badge-pending{background:var(--info-bg);color:#174ea6}
.badge-draft{background:#fff8e5;color:#7a5c00;border:1px dashed #d9b44a}
.badge-write,.badge-approved,.badge-retryable_failure{background:var(--warn-bg);color:var(--warn)}
.badge-destructive,.badge-rejected,.badge-expired,.badge-overdue,.badge-terminal_failure,.badge-refused{background:var(--bad-bg);color:var(--bad)}
.badge-not_sent{background:#eaeef2;color:#3d444d;border-color:#8c959f}
.badge-in_doubt{background:var(--warn-bg);color:var(--warn);border-color:#d9b44a}
.badge-success,.badge-executed,.badge-open{background:var(--ok-bg);color:var(--ok)}
.badge-closed{background:#eaeef2;color:#3d444d}
.badge-operator{background:#f3e8fd;color:#6b2fa1}
.badge-edited{background:var(--warn-bg);color:var(--warn)}
.notice{border-radius:8px;padding:.75rem 1rem;margin:0 0 1rem;border:1px solid}
.notice-ok{background:var(--ok-bg);border-color:#a8d5b5;color:var(--ok)}
.notice-error{background:var(--bad-bg);border-color:#f4b8b2;color:var(--bad)}
.notice-info{background:var(--info-bg);border-color:#b6ccf5}
.notice p{margin:.2rem 0}
.decide{display:grid;grid-template-columns:repeat(auto-fit,minmax(18rem,1fr));gap:1rem}
form.panel{display:flex;flex-direction:column;gap:.5rem}
label{font-weight:600}
.hint{color:var(--muted);font-size:.9rem;margin:0}
input[type=password],textarea{font:inherit;padding:.5rem .6rem;border:1px solid #8c959f;border-radius:6px;width:100%;background:#fff;color:var(--fg)}
textarea{resize:vertical;min-height:3.2rem}
form.edit-form{margin-top:1rem}
.edit-field{display:flex;flex-direction:column;gap:.25rem}
.edit-form input[type=text],.edit-form input[type=number],.edit-form select{font:inherit;padding:.45rem .6rem;border:1px solid #8c959f;border-radius:6px;background:#fff;color:var(--fg);width:100%;max-width:32rem}
.edit-form textarea.json{font-family:ui-monospace,monospace;max-width:32rem}
.edit-field-invalid input,.edit-field-invalid select,.edit-field-invalid textarea{border-color:var(--bad);outline:1px solid var(--bad)}
.field-error{color:var(--bad);font-weight:600;font-size:.9rem;margin:0}
.edit-summary p{margin:0 0 .4rem}
.edit-args{display:grid;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));gap:.75rem}
button,.button{font:inherit;font-weight:600;cursor:pointer;border-radius:6px;border:1px solid transparent;padding:.5rem 1rem;text-decoration:none;display:inline-block}
button.primary,.button{background:var(--accent);color:#fff}
button.approve{background:var(--ok);color:#fff}
button.reject{background:var(--bad);color:#fff}
button:hover,.button:hover{filter:brightness(1.1)}
button.secondary{background:var(--card);color:var(--fg);border-color:#8c959f}
fieldset.choices{border:1px solid var(--line);border-radius:8px;padding:.75rem 1rem;margin:1rem 0 .5rem;background:var(--card)}
fieldset.choices legend{font-weight:600;padding:0 .3rem}
label.choice{display:block;font-weight:400;padding:.3rem 0}
.actions{display:flex;flex-wrap:wrap;gap:.75rem}
td form{margin:0}
.signin{max-width:26rem;margin:3rem auto}
.signin form{display:flex;flex-direction:column;gap:.6rem;margin-top:1rem}
.empty{padding:1.5rem;text-align:center;color:var(--muted)}
.meta{color:var(--muted);font-size:.9rem}
ol.timeline{list-style:none;margin:0;padding:0 0 0 1.25rem;border-left:3px solid var(--line)}
ol.timeline>li{position:relative;margin:0 0 1rem;padding:.75rem 1rem;background:var(--card);border:1px solid var(--line);border-radius:8px}
ol.timeline>li::before{content:"";position:absolute;left:-1.95rem;top:1.05rem;width:.9rem;height:.9rem;border-radius:50%;background:var(--muted);border:3px solid var(--bg)}
ol.timeline>li.outcome-success::before{background:var(--ok)}
ol.timeline>li.outcome-terminal_failure::before{background:var(--bad)}
ol.timeline>li.outcome-retryable_failure::before{background:#b06d00}
ol.timeline>li.by-operator{border-color:#b78be0;box-shadow:0 0 0 2px #f3e8fd}
.entry-head{display:flex;flex-wrap:wrap;gap:.4rem .75rem;align-items:baseline;margin-bottom:.4rem}
.entry-head .seq{font-family:var(--mono);color:var(--muted)}
.entry-head .tool{font-weight:700;font-family:var(--mono)}
.latency{display:flex;align-items:center;gap:.5rem}
.latency .bar{display:inline-block;height:.5rem;border-radius:4px;background:var(--accent);min-width:2px;max-width:12rem}
.budget{display:flex;flex-wrap:wrap;gap:.75rem;margin:0;padding:0;list-style:none}
.budget li{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.4rem .8rem}
.budget strong{font-size:1.1rem}
.notice-warn{background:var(--warn-bg);border-color:#f0cf7a;color:var(--warn)}
.notice ul{margin:.3rem 0 0;padding-left:1.2rem}
.fact-warning strong{color:var(--bad)}
.warning-text{color:var(--bad);font-weight:600}
.duplicate-flag{margin:.3rem 0 0;color:var(--bad);font-weight:600;font-size:.85rem}
label.confirm{display:flex;gap:.5rem;align-items:flex-start;background:var(--warn-bg);color:var(--warn);border-radius:6px;padding:.5rem;margin:.5rem 0;font-weight:600}
header.top nav{flex-wrap:wrap;gap:.25rem 1rem}
header.top nav a[aria-current=page]{font-weight:700;text-decoration-thickness:3px;text-underline-offset:4px}
header.top .who{flex-wrap:wrap}
code{overflow-wrap:break-word}
dl.facts,dl.args{grid-template-columns:max-content minmax(0,1fr)}
dl.facts dd,dl.args dd{min-width:0}
pre.result{max-height:16rem;overflow:auto;white-space:pre-wrap;overflow-wrap:anywhere;margin:0}
.filters{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:1rem;margin:0 0 1.25rem}
.filter-fields{display:grid;grid-template-columns:repeat(auto-fill,minmax(12rem,1fr));gap:.75rem 1rem;margin-bottom:.75rem}
.filter{display:flex;flex-direction:column;gap:.25rem;min-width:0}
.filter-subject{grid-column:1/-1}
.filter label{font-size:.9rem}
.filters input,.filters select{font:inherit;padding:.45rem .6rem;border:1px solid #8c959f;border-radius:6px;background:#fff;color:var(--fg);width:100%;min-width:0}
.filters [aria-invalid=true]{border-color:var(--bad);box-shadow:0 0 0 1px var(--bad)}
.button.secondary{background:var(--card);color:var(--fg);border-color:#8c959f}
.pager{display:flex;flex-wrap:wrap;gap:1rem;margin:.75rem 0}
.live-stamp{margin:0 0 .5rem;font-size:.85rem;color:var(--muted)}
.live-stale .live-stamp{color:var(--bad);font-weight:600}
.chips{display:flex;flex-wrap:wrap;gap:.25rem;margin:0;padding:0;list-style:none}
.chips code{background:var(--bg);border:1px solid var(--line);border-radius:4px;padding:0 .3rem;font-size:.8rem}
@media (max-width:40rem){main{padding:1rem}th,td{padding:.45rem}dl.facts{grid-template-columns:minmax(0,1fr)}
header.top{padding:.6rem 1rem}
table.stack,table.stack tbody,table.stack tr,table.stack th,table.stack td{display:block;width:100%}
table.stack caption{display:block}
table.stack thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
table.stack tr{border-bottom:1px solid var(--line);padding:.4rem 0}
table.stack tbody tr:last-child{border-bottom:0}
table.stack td,table.stack tbody th{border:0;padding:.3rem .75rem}
table.stack [data-label]::before{content:attr(data-label);display:block;font-size:.75rem;font-weight:600;text-transform:uppercase;letter-spacing:.03em;color:var(--muted)}
td.args-cell{min-width:0}}
.health-charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,20rem),1fr));gap:1rem;margin:1rem 0 2rem}
figure.chart{margin:0;min-width:0;background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.75rem 1rem}
figure.chart figcaption{font-weight:600;margin-bottom:.3rem}
figure.chart svg{display:block;height:auto}
.legend{display:flex;flex-wrap:wrap;gap:.2rem 1rem;margin:.4rem 0 0;padding:0;list-style:none;font-size:.85rem;color:var(--muted)}
.legend i{display:inline-block;width:.75rem;height:.75rem;border-radius:2px;margin-right:.35rem;vertical-align:-.1rem}
table.compare tr.worse td:last-child{color:var(--bad);font-weight:600}
.badge-reserved,.badge-awaiting_approval{background:var(--info-bg);color:#174ea6}
.badge-sent{background:var(--warn-bg);color:var(--warn)}
.badge-confirmed{background:var(--ok-bg);color:var(--ok)}
ul.earlier-effects>li{margin:.3rem 0}
ul.earlier-effects dl.args{margin:.2rem 0 0;color:var(--fg)}
.badge-worse{background:var(--bad-bg);color:var(--bad)}
`;
