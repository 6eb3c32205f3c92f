/** The dashboard's one stylesheet, served by assets.ts under a content hash. */
export const STYLESHEET = `
:root { --fg:#1c2430; --muted:#5d6b7c; --line:#dde3ea; --bg:#f6f8fa; --card:#fff; --accent:#2f5bd3;
  --ok:#1a7f37; --bad:#c62828; --warn:#9a6700; --info:#2f5bd3; font: 14px/1.45 system-ui, sans-serif; color: var(--fg); }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
header.top { display: flex; align-items: center; gap: 1.5rem; padding: .6rem 1.2rem; background: #1c2430; color: #fff; }
header.top .brand { font-weight: 700; color: #fff; }
header.top nav { display: flex; gap: .9rem; flex-wrap: wrap; flex: 1; }
header.top nav a { color: #c8d3e0; }
header.top nav a.here { color: #fff; font-weight: 600; }
header.top .who { display: flex; gap: .6rem; align-items: center; color: #c8d3e0; }
header.top .project-choice { display: flex; gap: .4rem; align-items: center; }
main { padding: 1.2rem; max-width: 1400px; margin: 0 auto; }
footer.bottom { display: flex; gap: 1.2rem; max-width: 1400px; margin: 1rem auto 0; padding: .8rem 1.2rem 1.4rem; border-top: 1px solid var(--line);
  color: var(--muted); font-size: .85rem; }
h1 { font-size: 1.35rem; margin: 0 0 1rem; }
h2 { font-size: 1.05rem; margin: 1.4rem 0 .6rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: .9rem 1rem; margin-bottom: 1rem; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(170px, 1fr)); gap: .8rem; margin-bottom: 1rem; }
.stat { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: .7rem .9rem; }
.stat .n { font-size: 1.5rem; font-weight: 650; }
.stat .l { color: var(--muted); }
table { border-collapse: collapse; width: 100%; background: var(--card); }
th, td { text-align: left; padding: .4rem .55rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; font-size: .85rem; }
td.url, td.mono, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .85rem; word-break: break-all; }
td.id, .status, time .at, time .ago { white-space: nowrap; word-break: normal; }
.table-scroll { overflow-x: auto; margin-bottom: .2rem; }
table.messages { min-width: 62rem; }
table.messages td.url { min-width: 16rem; }
table.messages .answer { max-width: 20rem; }
tr:hover td { background: #f9fbfd; }
.badge { display: inline-block; padding: .05rem .45rem; border-radius: 999px; font-size: .78rem; font-weight: 600; background: #e8edf3; }
.badge.ok { background: #dcf3e3; color: var(--ok); }
.badge.bad { background: #fde4e4; color: var(--bad); }
.badge.warn { background: #fff1cc; color: var(--warn); }
.badge.info { background: #e1e9fb; color: var(--info); }
.muted { color: var(--muted); }
form.filters { display: flex; flex-wrap: wrap; gap: .6rem; align-items: end; margin-bottom: 1rem; }
form.filters label { display: flex; flex-direction: column; font-size: .8rem; color: var(--muted); gap: .15rem; }
input, select, button { font: inherit; padding: .3rem .5rem; border: 1px solid #c3ccd7; border-radius: 4px; background: #fff; }
button { cursor: pointer; background: #eef2f7; }
button.primary { background: var(--accent); color: #fff; border-color: var(--accent); }
button.danger { color: var(--bad); border-color: #e9b4b4; }
button.caution { color: var(--warn); border-color: #e3c77a; background: #fff8e1; }
form.inline { display: inline; }
form.form fieldset { border: 0; padding: 0; margin: 0 0 .8rem; display: flex; flex-wrap: wrap; gap: .6rem 1rem; align-items: start; }
form.form legend { font-weight: 600; margin-bottom: .4rem; padding: 0; }
form.form label { display: flex; flex-direction: column; gap: .15rem; font-size: .85rem; color: var(--muted); }
form.form label > span { color: var(--fg); font-weight: 500; }
form.form label small { font-size: .75rem; max-width: 26rem; }
form.form label.wide { width: 100%; margin-bottom: .6rem; }
form.form.filters { align-items: start; }
form.form.filters > button, form.form.filters > .muted { align-self: center; }
textarea { font: .85rem/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; padding: .4rem .5rem; border: 1px solid #c3ccd7; border-radius: 4px; width: 100%; }
details.card > summary { cursor: pointer; font-weight: 600; }
details.card[open] > summary { margin-bottom: .8rem; }
.back { margin: 0 0 .6rem; }
.card > h2:first-child, form.form > h2:first-child { margin-top: 0; }
.card-head { display: flex; justify-content: space-between; align-items: center; gap: 1rem; }
.card-head h2 { margin: 0 0 .5rem; }
td.row-actions { white-space: nowrap; }
td.row-actions form + form { margin-left: .3rem; }
.columns { display: grid; grid-template-columns: repeat(auto-fit, minmax(340px, 1fr)); gap: 1rem; }
ol.ticks { margin: 0 0 .6rem; padding-left: 1.4rem; }
details.key { margin-bottom: .6rem; }
details.key > summary { cursor: pointer; }
.actions { display: flex; gap: .5rem; flex-wrap: wrap; margin: .6rem 0; }
.pager { display: flex; gap: 1rem; margin: .8rem 0; align-items: center; }
.notice { background: #dcf3e3; border: 1px solid #a6dcb6; padding: .5rem .8rem; border-radius: 6px; margin-bottom: 1rem; }
.error { background: #fde4e4; border: 1px solid #f0b4b4; padding: .5rem .8rem; border-radius: 6px; margin-bottom: 1rem; }
pre { background: #f3f5f8; border: 1px solid var(--line); padding: .6rem; overflow: auto; max-height: 28rem; margin: .3rem 0; white-space: pre-wrap; word-break: break-all; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; word-break: break-all; }
ol.timeline { list-style: none; padding: 0; margin: 0; border-left: 3px solid var(--line); }
ol.timeline > li { position: relative; margin: 0 0 1rem 1rem; }
ol.timeline > li::before { content: ""; position: absolute; left: -1.48rem; top: .35rem; width: .75rem; height: .75rem; border-radius: 50%; background: var(--line); }
ol.timeline > li.ok::before { background: var(--ok); }
ol.timeline > li.bad::before { background: var(--bad); }
ol.timeline > li.warn::before { background: var(--warn); }
ol.timeline .followed { margin-top: .3rem; color: var(--muted); }
.parallel { display: grid; grid-template-columns: repeat(auto-fill, minmax(260px, 1fr)); gap: .6rem; }
h1 .subtitle { display: block; font-size: .85rem; font-weight: 400; color: var(--muted); margin-top: .2rem; }
h3 { font-size: .95rem; margin: 1rem 0 .4rem; }
.span { display: flex; align-items: center; gap: .6rem; margin: .35rem 0; font-size: .85rem; color: var(--muted); }
.span-track { position: relative; flex: 0 0 14rem; height: .6rem; background: #eef2f7; border-radius: 3px; }
.span-bar { position: absolute; top: 0; bottom: 0; min-width: 2px; border-radius: 3px; background: var(--info); }
.span-bar.ok { background: var(--ok); }
.span-bar.bad { background: var(--bad); }
.span-bar.warn { background: var(--warn); }
.span-bar.open { background-image: repeating-linear-gradient(45deg, transparent 0 4px, rgba(255,255,255,.45) 4px 8px); }
.step-error .error { margin: .4rem 0 .3rem; }
.step-error .error-message { display: block; white-space: pre-wrap; word-break: break-word; }
ol.stack { margin: .3rem 0; padding: .5rem .6rem .5rem 2.4rem; background: #f3f5f8; border: 1px solid var(--line); max-height: 20rem; overflow: auto;
  font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .8rem; }
ol.stack li { white-space: pre-wrap; word-break: break-all; }
.chart { width: 100%; height: auto; background: var(--card); border: 1px solid var(--line); border-radius: 6px; }
.legend { display: flex; gap: 1rem; font-size: .85rem; margin: .3rem 0; }
.legend i { display: inline-block; width: .8rem; height: .8rem; border-radius: 2px; margin-right: .3rem; vertical-align: -1px; }
.signin { max-width: 420px; margin: 12vh auto; }
.signin input { width: 100%; margin: .4rem 0 .8rem; }
.views a { margin-right: .6rem; }
.views a.here { font-weight: 700; color: var(--fg); }
.answer { max-width: 28rem; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; color: var(--muted); font-size: .8rem; }
.answer.bad { color: var(--bad); }
.retrying { margin-top: .3rem; font-size: .85rem; }
.card.why { border-left: 4px solid var(--info); }
.card.why h2 { margin-top: 0; }
.card.why p { margin: .3rem 0; }
.stat .note { font-size: .8rem; }
table.destinations td:first-child { min-width: 11rem; }
table.destinations td.circuit { min-width: 13rem; }
table.destinations td.last-minute { min-width: 8rem; }
table.destinations td.row-actions form { display: block; margin: 0 0 .3rem; }
.key-actions details summary { cursor: pointer; color: var(--accent); font-size: .85rem; }
.key-actions form.pin { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin: .4rem 0 0; padding: 0; border: 0; }
`;
