/**
 * The console's stylesheet, added after the preview page's (whose variables, cards, tables and
 * drop zone it reuses). One column on a phone, the list and filters side by side from 900 px.
 * Colours keep a contrast of at least 4.5:1 on their backgrounds in both schemes.
 */
export const CONSOLE_STYLE = `
:root { --danger: #b42318; --ok: #17663a; --sel: #e3ecfa; }
@media (prefers-color-scheme: dark) { :root { --danger: #ff8f86; --ok: #7ee2a8; --sel: #22324a; } }
[hidden] { display: none !important; }
.skip { position: absolute; left: -999px; top: 0; background: var(--card); padding: .5rem 1rem; z-index: 10; }
.skip:focus { left: .5rem; }
.bar { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.5rem; padding: .5rem 1.5rem; background: var(--card);
  border-bottom: 1px solid var(--line); position: sticky; top: 0; z-index: 5; }
.brand { margin: 0; font-weight: 700; font-size: 1.15rem; }
.brand span { font-weight: 400; color: var(--muted); }
.bar nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem; margin: 0; padding: 0; }
.bar nav a { display: inline-block; padding: .35rem .75rem; border-radius: 6px; color: var(--fg); text-decoration: none; }
.bar nav a[aria-current="page"] { background: var(--accent); color: #fff; }
@media (prefers-color-scheme: dark) { .bar nav a[aria-current="page"] { color: #0d1117; } }
.session { margin: 0 0 0 auto; display: flex; gap: .75rem; align-items: center; }
.live { font-size: .85rem; color: var(--muted); }
.live.on { color: var(--ok); }
.console main { max-width: 1400px; margin: 0 auto; padding: 1rem 1.5rem 3rem; }
.console main:focus { outline: none; }
.view h1 { font-size: 1.35rem; margin: 0 0 .75rem; overflow-wrap: anywhere; }
.view h2 { font-size: 1.05rem; margin: 1.25rem 0 .5rem; }
.login { max-width: 36rem; }
.filters { display: grid; grid-template-columns: 2fr repeat(5, minmax(0, 1fr)) auto; gap: .5rem .75rem; align-items: end; }
.filters .field { margin: 0; }
.filters label { display: block; font-weight: 600; font-size: .85rem; margin-bottom: .15rem; }
.filters .actions { display: flex; gap: .5rem; }
@media (max-width: 1100px) { .filters { grid-template-columns: repeat(3, minmax(0, 1fr)); } .filters .q { grid-column: 1 / -1; } }
@media (max-width: 600px) { .filters { grid-template-columns: repeat(2, minmax(0, 1fr)); } .filters .actions { grid-column: 1 / -1; } }
select, input[type=search], input[type=datetime-local] { width: 100%; min-width: 0; font: inherit; padding: .4rem .5rem; border: 1px solid var(--line);
  border-radius: 6px; background: var(--card); color: var(--fg); }
kbd { font: .8rem ui-monospace, monospace; border: 1px solid var(--line); border-radius: 4px; padding: 0 .3rem; background: var(--card); }
.list { margin-top: .75rem; }
.rows { list-style: none; margin: 0; padding: 0; border: 1px solid var(--line); border-radius: 10px; background: var(--card); overflow: hidden; }
.rows > li { border-bottom: 1px solid var(--line); }
.rows > li:last-child { border-bottom: 0; }
.rows > li.selected { background: var(--sel); }
.rows > li.fresh { box-shadow: inset 4px 0 0 var(--ok); }
.entry { display: grid; grid-template-columns: 6.5rem minmax(0, 1fr) 16rem 12.5rem; gap: .25rem 1rem; padding: .55rem 1rem; color: var(--fg);
  text-decoration: none; align-items: baseline; }
.entry:focus-visible { outline-offset: -3px; }
.entry .subject { font-weight: 600; overflow-wrap: anywhere; }
.entry .who, .entry .when, .entry .meta { color: var(--muted); font-size: .88rem; overflow-wrap: anywhere; }
.entry .meta { grid-column: 2 / -1; }
.entry .when { white-space: nowrap; }
@media (max-width: 800px) { .entry { grid-template-columns: auto 1fr; } .entry .subject { grid-column: 1 / -1; order: -1; }
  .entry .who { order: 1; grid-column: 1 / -1; } .entry .meta { order: 2; grid-column: 1 / -1; } }
.state { font-size: .78rem; padding: .05rem .5rem; border-radius: 999px; border: 1px solid currentColor; white-space: nowrap; justify-self: start; }
.state.delivered { color: var(--ok); }
.state.dead { color: var(--danger); }
.state.queued, .state.unchanged { color: var(--muted); }
.dead-row { display: grid; grid-template-columns: auto 1fr auto; gap: .25rem 1rem; padding: .6rem 1rem; align-items: start; }
.dead-row p { margin: .1rem 0; }
.dead-row .about { overflow-wrap: anywhere; }
.dead-row .reason { overflow-wrap: anywhere; }
.dead-row .reason code { font-weight: 600; color: var(--danger); }
.dead-row .meta { color: var(--muted); font-size: .88rem; overflow-wrap: anywhere; }
.dead-row .acts { display: flex; gap: .5rem; flex-wrap: wrap; }
@media (max-width: 700px) { .dead-row { grid-template-columns: auto 1fr; } .dead-row .acts { grid-column: 2; } }
.toolbar { margin: 0 0 .5rem; }
.check { display: inline-flex; gap: .4rem; align-items: center; }
input[type=checkbox] { width: 1.15rem; height: 1.15rem; accent-color: var(--accent); }
button.danger { background: var(--danger); border-color: var(--danger); color: #fff; }
@media (prefers-color-scheme: dark) { button.danger { color: #0d1117; } }
button:disabled { opacity: .55; cursor: not-allowed; }
.confirm { border: 2px solid var(--danger); border-radius: 10px; padding: .5rem 1rem; background: var(--err-bg); color: var(--err-fg); margin: .5rem 0; }
.detail { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 1.25rem; }
@media (max-width: 1000px) { .detail { grid-template-columns: minmax(0, 1fr); } }
.panel { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: .75rem 1rem; margin: 0 0 1rem; }
.panel > h2 { margin: 0 0 .5rem; font-size: .95rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
.quote { border-left: 3px solid var(--line); color: var(--muted); padding-left: .75rem; margin: .5rem 0; white-space: pre-wrap; overflow-wrap: anywhere; }
.mark { font-size: .75rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin: .5rem 0 0; }
.units { overflow-x: auto; margin-top: .75rem; }
.units table { width: auto; font-size: .8rem; }
.units caption { text-align: left; color: var(--muted); padding-bottom: .25rem; }
.units th, .units td { text-align: center; padding: 0 .15rem; min-width: 1.7rem; border: 0; white-space: nowrap; }
.units td { vertical-align: bottom; height: 4.5rem; }
.bar-chart { display: block; width: 1.2rem; margin: 0 auto .15rem; background: var(--accent); border-radius: 3px 3px 0 0; min-height: 1px; }
#item-body > .error, #item-body > .warnings { margin: 0 0 1rem; }
.panel th { overflow-wrap: normal; white-space: nowrap; }
.panel td.name { overflow-wrap: normal; white-space: normal; min-width: 8rem; }
@media (max-width: 600px) { .panel td.name { min-width: 0; max-width: 10rem; } }
.entry .code { color: var(--danger); }
.thread-list { margin: 0; padding-left: 1.25rem; }
.thread-list li { margin: .2rem 0; overflow-wrap: anywhere; }
.thread-list li[aria-current] { font-weight: 600; }
.conversation { list-style: none; padding: 0; margin: .5rem 0 0; }
.conversation .turn { border-left: 3px solid var(--line); padding: .25rem 0 .25rem .75rem; margin: .5rem 0; font-weight: 400; }
.conversation .turn[aria-current] { border-left-color: var(--accent); background: var(--sig); font-weight: 400; }
.conversation .turn p { margin: .1rem 0; }
.conversation .turn-subject { font-weight: 600; }
.conversation .turn-text { white-space: pre-wrap; overflow-wrap: anywhere; }
.panel td.hname { white-space: nowrap; vertical-align: top; }
@media (max-width: 600px) { .panel td.hname { white-space: normal; overflow-wrap: anywhere; } }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(14rem, 1fr)); gap: 1rem; }
.stat { font-size: 1.6rem; font-weight: 700; margin: 0; }
.announce { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.drop-view .input { margin-top: .5rem; }
.console #key-row { display: none; }
a { color: var(--accent); }
@media (max-width: 600px) { .bar { padding: .5rem .75rem; } .bar nav { order: 3; width: 100%; } .console main { padding: .75rem .75rem 2rem; } }
.view h1[tabindex="-1"]:focus { outline: none; }
.paused { border: 2px solid var(--danger); border-left-width: 6px; border-radius: 10px; background: var(--err-bg); color: var(--err-fg);
  padding: .5rem 1rem; margin: 0 0 1rem; overflow-wrap: anywhere; }
.paused .title { font-weight: 700; margin: .25rem 0; }
.paused ul { margin: .25rem 0; padding-left: 1.25rem; }
.paused li { margin: .2rem 0; }
.paused code { font-weight: 600; }
table.mailboxes { width: 100%; border-collapse: collapse; }
table.mailboxes th, table.mailboxes td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
table.mailboxes tr.mailbox th { font-weight: 600; }
table.mailboxes th.indent { padding-left: 1.75rem; font-weight: 400; }
.paused .fix { font-weight: 600; }
.paused a { color: inherit; }
.panel .paused-line { color: var(--danger); font-weight: 600; margin: 0 0 .5rem; }
`;
