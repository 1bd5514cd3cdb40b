/** The preview page's stylesheet (inline; light and dark schemes; visible focus). */
export const PREVIEW_STYLE = `
:root { color-scheme: light dark; --bg: #f6f7f9; --fg: #1b1f24; --muted: #5b6470; --card: #fff; --line: #d6dbe1;
  --accent: #1f5fbf; --warn-bg: #fff4d6; --warn-fg: #6b4b00; --err-bg: #fde8e8; --err-fg: #8a1c1c; --sig: #eef3fb; --code: #f1f3f5; }
@media (prefers-color-scheme: dark) { :root { --bg: #16181c; --fg: #e6e8eb; --muted: #9aa3ad; --card: #1f2227; --line: #353a42;
  --accent: #7fb0ff; --warn-bg: #3a3117; --warn-fg: #f3d98b; --err-bg: #3d1f22; --err-fg: #ffb4b4; --sig: #1e2a3b; --code: #15171a; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
.top { padding: 1rem 1.5rem .25rem; }
.top h1 { margin: 0; font-size: 1.4rem; }
.top p { margin: .25rem 0 0; color: var(--muted); }
main { padding: .5rem 1.5rem 2rem; }
.input { display: grid; grid-template-columns: minmax(200px, 1fr) minmax(220px, 1fr) 2fr; gap: 1rem; align-items: start; }
@media (max-width: 900px) { .input { grid-template-columns: 1fr; } }
.drop { border: 2px dashed var(--line); border-radius: 10px; padding: 1rem; text-align: center; background: var(--card); min-height: 9rem; }
.drop.over { border-color: var(--accent); background: var(--sig); }
.drop input[type=file] { position: absolute; width: 1px; height: 1px; opacity: 0; }
.drop:focus-within .button { outline: 3px solid var(--accent); outline-offset: 2px; }
.paste label, .field label { display: block; font-weight: 600; margin-bottom: .25rem; }
textarea, input[type=text], input[type=password] { width: 100%; font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  padding: .5rem; border: 1px solid var(--line); border-radius: 6px; background: var(--card); color: var(--fg); }
.row { display: flex; gap: .75rem; align-items: center; margin-top: .5rem; flex-wrap: wrap; }
.hint { color: var(--muted); font-size: .85rem; }
button, .button { font: inherit; padding: .4rem .9rem; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; display: inline-block; }
@media (prefers-color-scheme: dark) { button, .button { color: #0d1117; } }
button.secondary, button.small { background: transparent; color: var(--accent); }
button.small { padding: .1rem .6rem; font-size: .85rem; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.field { margin: 0 0 .75rem; }
.note { grid-column: 1 / -1; margin: 0; padding: .5rem .75rem; border-radius: 6px; background: var(--warn-bg); color: var(--warn-fg); }
.status { min-height: 1.5em; color: var(--muted); margin: 1rem 0 .5rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; margin: 0 0 1.25rem; padding: 1rem 1.25rem; }
.card > header { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: baseline; border-bottom: 1px solid var(--line); padding-bottom: .5rem; }
.card h2 { margin: 0; font-size: 1.1rem; overflow-wrap: anywhere; }
.card .file { color: var(--muted); font-size: .9rem; overflow-wrap: anywhere; }
.badge { font-size: .8rem; padding: .05rem .5rem; border-radius: 999px; background: var(--warn-bg); color: var(--warn-fg); }
.badge.ok { background: var(--sig); color: var(--accent); }
.warnings, .error { margin: .75rem 0 0; padding: .5rem .75rem .5rem 1.75rem; border-radius: 6px; background: var(--warn-bg); color: var(--warn-fg); }
.error { background: var(--err-bg); color: var(--err-fg); padding-left: .75rem; }
.warnings code, .error code { font-weight: 600; }
.cols { display: grid; grid-template-columns: 1fr 1fr; gap: 1.25rem; margin-top: .75rem; }
@media (max-width: 1000px) { .cols { grid-template-columns: 1fr; } }
.cols h3 { margin: 0 0 .5rem; font-size: .95rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); display: flex; gap: .75rem; align-items: center; }
.cols h4 { margin: 1rem 0 .35rem; font-size: .95rem; }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: 0; }
dl.kv dt { color: var(--muted); }
dl.kv dd { margin: 0; overflow-wrap: anywhere; }
.msg { border-left: 3px solid var(--accent); padding: .25rem 0 .25rem .75rem; margin: .75rem 0; }
.body, .sig pre, pre.json { white-space: pre-wrap; overflow-wrap: anywhere; margin: .5rem 0 0; }
.body { font: inherit; }
.empty { color: var(--muted); font-style: italic; }
.sig { background: var(--sig); border-radius: 6px; padding: .4rem .75rem; margin-top: .5rem; }
.sig h5 { margin: 0; font-size: .8rem; color: var(--muted); text-transform: uppercase; }
.sig pre { font: inherit; margin-top: .15rem; }
table { border-collapse: collapse; width: 100%; font-size: .9rem; }
th, td { text-align: left; border-bottom: 1px solid var(--line); padding: .2rem .75rem .2rem 0; vertical-align: top; overflow-wrap: anywhere; }
td.name, td.tag { white-space: nowrap; }
th { color: var(--muted); font-weight: 600; }
.tag { font-size: .75rem; color: var(--muted); }
pre.json { font: 12.5px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: var(--code); border: 1px solid var(--line);
  border-radius: 6px; padding: .75rem; max-height: 40rem; overflow: auto; }
`;
