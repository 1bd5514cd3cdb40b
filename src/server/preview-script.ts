/**
 * The preview page's script (plain ES2017, no build step). Message content reaches the
 * DOM through textContent and text nodes only — never innerHTML — so mail can not run.
 */
export const PREVIEW_SCRIPT = String.raw`
(function () {
  'use strict';
  var auth = document.documentElement.getAttribute('data-auth');
  function $(id) { return document.getElementById(id); }
  var results = $('results'), statusLine = $('status'), keyInput = $('key'), routeInput = $('route');
  var paste = $('paste'), files = $('files'), drop = $('drop');
  var batch = 0;

  function h(tag, attrs, children) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      var v = attrs[k];
      if (v === undefined || v === null || v === false) return;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k.slice(0, 2) === 'on') e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : String(v));
    });
    (children || []).forEach(function (c) {
      if (c === null || c === undefined || c === false) return;
      e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    });
    return e;
  }
  function say(text) { statusLine.textContent = text; }
  function text(v) { return v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v); }

  function setupAuth() {
    var note = $('auth-note');
    if (auth !== 'key') $('key-row').hidden = true;
    if (auth === 'disabled') {
      note.hidden = false;
      note.textContent = 'Previews need the admin API, which is disabled on this server: set server.api_keys in mailgate.yaml.';
    }
  }

  function query() {
    var r = routeInput.value.trim();
    return r ? '?route=' + encodeURIComponent(r) : '';
  }
  function headers(type) {
    var hd = { 'Content-Type': type, 'Accept': 'application/json' };
    var k = keyInput.value.trim();
    if (auth === 'key' && k) hd['Authorization'] = 'Bearer ' + k;
    return hd;
  }
  function post(path, type, body) {
    return fetch(path, { method: 'POST', headers: headers(type), body: body, credentials: 'omit', cache: 'no-store' })
      .then(function (res) {
        return res.text().then(function (t) {
          var data;
          try { data = JSON.parse(t); } catch (e) { data = { error: { code: 'HTTP_' + res.status, message: t.slice(0, 500) } }; }
          if (res.status === 401) keyInput.focus();
          return res.ok ? { ok: true, data: data } : { ok: false, error: data.error || { code: 'HTTP_' + res.status, message: res.statusText } };
        });
      }, function (err) { return { ok: false, error: { code: 'NETWORK', message: String(err && err.message || err) } }; });
  }

  function kv(pairs) {
    var dl = h('dl', { class: 'kv' });
    pairs.forEach(function (p) {
      if (p[1] === undefined || p[1] === null || p[1] === '') return;
      dl.appendChild(h('dt', { text: p[0] }));
      dl.appendChild(h('dd', { text: text(p[1]) }));
    });
    return dl;
  }
  function list(v) { return Array.isArray(v) ? v.join(', ') : v; }

  function renderMessage(m, i, count) {
    var body = m.body && m.body.text;
    var sig = m.signature && m.signature.text;
    return h('div', { class: 'msg' }, [
      count > 1 ? h('h4', { text: 'Message ' + (i + 1) + ' of ' + count }) : null,
      kv([['From', m.from], ['To', list(m.to)], ['Cc', list(m.cc)], ['Bcc', list(m.bcc)],
          ['Subject', m.subject && m.subject.text], ['Sent at', m.sent_at], ['Language', m.language]]),
      body ? h('div', { class: 'body', text: body }) : h('p', { class: 'empty', text: '(empty body)' }),
      sig ? h('div', { class: 'sig' }, [h('h5', { text: 'Signature (removed from the body)' }), h('pre', { text: sig })]) : null,
    ]);
  }

  function renderProperties(box, comment, doc) {
    box.textContent = '';
    box.appendChild(propertiesTable(comment, doc));
  }
  function propertiesTable(comment, doc) {
    var props = comment.user_properties || {};
    var client = (doc && doc.user_properties) || {};
    var keys = Object.keys(props).sort();
    if (!keys.length) return h('p', { class: 'empty', text: '(none)' });
    return h('table', {}, [
      h('thead', {}, [h('tr', {}, [h('th', { text: 'Property' }), h('th', { text: 'Value' }), h('th', { text: 'From' })])]),
      h('tbody', {}, keys.map(function (k) {
        return h('tr', {}, [h('td', { class: 'name', text: k }), h('td', { text: text(props[k]) }),
          h('td', { class: 'tag', text: Object.prototype.hasOwnProperty.call(client, k) ? 'client' : 'generated' })]);
      })),
    ]);
  }

  function renderThread(box, props, scope) {
    box.textContent = '';
    if (!props || typeof props !== 'object') { box.appendChild(h('p', { class: 'empty', text: '(not computed)' })); return; }
    box.appendChild(h('p', { class: 'tag', text: scope }));
    box.appendChild(kv(Object.keys(props).map(function (k) {
      var v = props[k];
      if (v === null) return [k, 'null'];
      return [k, typeof v === 'number' && (k === 'duration' || k === 'response_time') ? v + ' s' : v];
    })));
  }

  function renderAttachments(list) {
    if (!list || !list.length) return h('p', { class: 'empty', text: '(none)' });
    return h('ul', {}, list.map(function (a) { return h('li', { text: a.name + ' — ' + a.content_type + ', ' + a.size + ' bytes' }); }));
  }

  function copyButton(pre) {
    return h('button', { type: 'button', class: 'small', onclick: function (ev) {
      var btn = ev.currentTarget;
      var done = function () { btn.textContent = 'Copied'; setTimeout(function () { btn.textContent = 'Copy JSON'; }, 1500); };
      if (navigator.clipboard) navigator.clipboard.writeText(pre.textContent).then(done, function () { selectText(pre); });
      else selectText(pre);
    } }, ['Copy JSON']);
  }
  function selectText(node) { var r = document.createRange(); r.selectNodeContents(node); var s = getSelection(); s.removeAllRanges(); s.addRange(r); }

  function renderCard(name, res) {
    var id = 'card-' + (++batch);
    if (!res.ok) {
      return h('article', { class: 'card', 'aria-labelledby': id }, [
        h('header', {}, [h('h2', { id: id, text: name })]),
        h('p', { class: 'error' }, [h('code', { text: res.error.code }), ' ' + res.error.message]),
      ]);
    }
    var d = res.data, c = d.comment || {}, msgs = c.messages || [];
    var subject = msgs[0] && msgs[0].subject && msgs[0].subject.text;
    var warns = d.warnings || [];
    var threadBox = h('div', { class: 'thread' });
    var propsBox = h('div', { class: 'props' });
    renderProperties(propsBox, c, d.document);
    renderThread(threadBox, d.thread_properties, 'This message alone');
    var pre = h('pre', { class: 'json', tabindex: '0', 'aria-label': 'JSON document', text: JSON.stringify(d.document, null, 2) });
    var card = h('article', { class: 'card', 'aria-labelledby': id }, [
      h('header', {}, [
        h('h2', { id: id, text: subject || '(no subject)' }),
        h('span', { class: 'file', text: name }),
        h('span', { class: warns.length ? 'badge' : 'badge ok', text: warns.length ? warns.length + ' warning' + (warns.length > 1 ? 's' : '') : 'no warnings' }),
      ]),
      warns.length ? h('ul', { class: 'warnings', 'aria-label': 'Warnings' }, warns.map(function (w) {
        return h('li', {}, [h('code', { text: w.code }), ' ' + w.message]);
      })) : null,
      h('div', { class: 'cols' }, [
        h('section', { class: 'comment', 'aria-label': 'Comment' }, [
          h('h3', { text: 'Comment as the service shows it' }),
          kv([['Comment id', c.id], ['Timestamp', c.timestamp], ['Thread id', c.thread_id]]),
        ].concat(msgs.map(function (m, i) { return renderMessage(m, i, msgs.length); })).concat([
          h('h4', { text: 'User properties' }), propsBox,
          h('h4', { text: 'Thread properties' }), threadBox,
          h('h4', { text: 'Attachments' }), renderAttachments(c.attachments),
        ])),
        h('section', { class: 'doc', 'aria-label': 'Document sent' }, [h('h3', {}, ['Document that would be sent', copyButton(pre)]), pre]),
      ]),
    ]);
    card.update = function (t, scope) { renderProperties(propsBox, t.comment, d.document); renderThread(threadBox, t.thread_properties, scope); };
    return card;
  }

  function previewAll(items) {
    if (!items.length) return;
    if (auth === 'key' && !keyInput.value.trim()) { say('Enter the admin API key first.'); keyInput.focus(); return; }
    var cards = [], comments = [], updates = [], i = 0, q = query();
    function next() {
      if (i >= items.length) return finish();
      var it = items[i++];
      say('Previewing ' + i + ' of ' + items.length + '…');
      return Promise.resolve(it.bytes()).then(function (bytes) {
        return post('api/preview' + q, 'message/rfc822', bytes);
      }).then(function (res) {
        var card = renderCard(it.name, res);
        results.insertBefore(card, cards.length ? cards[cards.length - 1].nextSibling : results.firstChild);
        cards.push(card);
        if (res.ok) { comments.push(res.data.comment); updates.push(card.update); }
        return next();
      });
    }
    function finish() {
      var failed = items.length - comments.length;
      var summary = 'Previewed ' + comments.length + ' of ' + items.length + ' message' + (items.length > 1 ? 's' : '') + (failed ? ' (' + failed + ' failed)' : '') + '.';
      if (comments.length < 2) return say(summary);
      return post('api/preview/threads', 'application/json', JSON.stringify({ comments: comments })).then(function (res) {
        if (res.ok) res.data.threads.forEach(function (t, k) { updates[k](t, 'Within the ' + comments.length + ' messages previewed together'); });
        say(summary);
      });
    }
    return next();
  }

  function fromFiles(list) {
    return Array.prototype.map.call(list, function (f) { return { name: f.name, bytes: function () { return f.arrayBuffer(); } }; });
  }

  $('go').addEventListener('click', function () {
    if (!paste.value.trim()) { say('Paste a raw message first.'); paste.focus(); return; }
    var raw = paste.value.replace(/\r?\n/g, '\r\n');
    previewAll([{ name: 'pasted message', bytes: function () { return new TextEncoder().encode(raw); } }]);
  });
  paste.addEventListener('keydown', function (ev) { if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); $('go').click(); } });
  $('clear').addEventListener('click', function () { results.textContent = ''; say('Results cleared.'); });
  files.addEventListener('change', function () { previewAll(fromFiles(files.files)); files.value = ''; });
  ['dragenter', 'dragover'].forEach(function (t) { document.addEventListener(t, function (ev) { ev.preventDefault(); drop.classList.add('over'); }); });
  ['dragleave', 'drop'].forEach(function (t) { document.addEventListener(t, function (ev) { ev.preventDefault(); if (t === 'drop' || ev.target === drop) drop.classList.remove('over'); }); });
  document.addEventListener('drop', function (ev) { if (ev.dataTransfer && ev.dataTransfer.files.length) previewAll(fromFiles(ev.dataTransfer.files)); });
  setupAuth();
})();
`;
