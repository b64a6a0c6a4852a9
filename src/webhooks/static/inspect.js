// Inspection page script (served as a file under a strict CSP). Loads the latest captures, then
// follows the endpoint's live stream (Server-Sent Events read with fetch(), so the key travels in
// the Authorization header and never in a URL), resuming with Last-Event-ID after a drop; while
// disconnected it says so and polls once per reconnect attempt as a fallback. It renders
// everything with textContent/createElement only: captured content is data, never markup. Bodies
// are formatted as text by inspect-format.js (never DOMParser), within bounds per capture
// (FORMAT_MAX_BYTES, TABLE_MAX_ROWS) past which they are shown raw until "Format anyway". The API
// key comes from the URL fragment (#key=…) or the form and lives only in this script's memory:
// web storage of this origin is readable by any same-origin document, so the key is never written
// there; a reload asks again unless the link is reopened. Without a key in the fragment, a web
// console session of this origin (its HttpOnly cookie, sent by the browser) is used when there is
// one: the console links here with no key, and the page then sends the session's CSRF token on
// unsafe calls. The actions on a capture (replay, verify, download, delete) are calls of the same
// management API with that key or session. The stream also tells the endpoint's own changes: new
// settings (the name in the header, the Replay target) apply at once; its deletion replaces the
// page with a notice and ends following (nothing more can come).
'use strict'
;(() => {
  const token = document.body.dataset.token
  const schemes = document.body.dataset.schemes.split(' ')
  const api = `/api/v1/endpoints/${encodeURIComponent(token)}`
  const hookPrefix = `/hook/${token}`
  const $ = (id) => document.getElementById(id)
  const statusEl = $('status')
  const listEl = $('requests')
  const detailEl = $('detail')
  const POLL_MS = 1500
  /** No byte (heartbeats come every 20 s) for this long: the connection is dead even if TCP says not. */
  const STALL_MS = 45_000
  const requests = new Map()
  let lastId = 0
  let selected = null
  let key = null
  /** The console session's CSRF token when the page runs on the session cookie (no key). */
  let csrf = null
  /** What authenticates a call: the key when the page has one, else the session cookie (+ CSRF on unsafe methods). */
  const auth = (method = 'GET') => (key ? { authorization: `Bearer ${key}` } : csrf && method !== 'GET' ? { 'x-csrf-token': csrf } : {})
  /** The endpoint as the API shows it (its forward_url prefills Replay); null until loaded. */
  let endpoint = null

  // Earlier versions kept keys in sessionStorage, which outlives a reload in the same tab: wipe them.
  try {
    for (const k of Object.keys(sessionStorage)) if (k.startsWith('wv-key:')) sessionStorage.removeItem(k)
  } catch {}

  const m = /(?:^#|&)key=([^&]+)/.exec(location.hash)
  if (m) {
    key = decodeURIComponent(m[1])
    history.replaceState(null, '', location.pathname + location.search) // keep the key out of the address bar and history
  }

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag)
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v
      else if (k === 'onclick') e.addEventListener('click', v)
      else if (k === 'onsubmit') e.addEventListener('submit', (ev) => (ev.preventDefault(), v(ev)))
      else e.setAttribute(k, v)
    }
    for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)))
    return e
  }

  async function call(method, path, json) {
    const headers = auth(method)
    if (json !== undefined) headers['content-type'] = 'application/json'
    const r = await fetch(api + path, { method, headers, cache: 'no-store', body: json === undefined ? undefined : JSON.stringify(json) })
    const body = await r.json().catch(() => ({}))
    if (!r.ok) throw Object.assign(new Error(body.error || `HTTP ${r.status}`), { status: r.status })
    return body
  }
  const getJson = (path) => call('GET', path)

  /** The captured path below the endpoint ("/" for the capture URL itself): the token is in the header once. */
  const subPath = (path) => (path.startsWith(hookPrefix) ? path.slice(hookPrefix.length) || '/' : path)

  $('copy-url').addEventListener('click', async () => {
    const button = $('copy-url')
    try {
      await navigator.clipboard.writeText($('capture-url').textContent)
      button.textContent = 'Copied'
    } catch {
      // No clipboard permission (plain http, an old browser): select the text for Ctrl-C instead.
      getSelection().selectAllChildren($('capture-url'))
      button.textContent = 'Press Ctrl-C to copy'
    }
    setTimeout(() => (button.textContent = 'Copy URL'), 3000)
  })

  /** The CSRF token of this origin's console session, or null when there is none. */
  async function consoleSession() {
    try {
      const r = await fetch('/api/v1/console/session', { cache: 'no-store', headers: { accept: 'application/json' } })
      return r.ok ? (await r.json()).csrf_token || null : null
    } catch {
      return null
    }
  }

  const refusedMessage = () =>
    key
      ? 'That API key was not accepted. Enter the key of the account that owns this endpoint.'
      : 'Your console session has ended (signed out, or its key was replaced). Enter your API key, or sign in to the console again.'

  function askForKey(message) {
    csrf = null // a session that got a 401 has ended: the key asked for replaces it
    statusEl.textContent = message
    $('key-form').hidden = false
  }
  $('key-form').addEventListener('submit', (ev) => {
    ev.preventDefault()
    key = $('key-input').value.trim()
    $('key-input').value = ''
    $('key-form').hidden = true
    start()
  })

  const size = (n) => (n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1048576).toFixed(1)} MiB`)

  /** Formatting is bounded per capture (docs/webhooks.md, "Inspection page"): a longer body, or a
   * query or form with more fields, is shown raw until "Format anyway" is pressed for it. Opening a
   * capture then costs the page well under a second whatever a sender posted. */
  const FORMAT_MAX_BYTES = 256 * 1024
  const TABLE_MAX_ROWS = 1000
  /** The raw body, the formatted body and a replay's answer are shown up to this many characters
   * (Chromium lays out 1 MiB of wrapped text in about 0.3 s, and 20 MiB in 18 s); the rest of the
   * raw body on demand. */
  const SHOW_MAX_CHARS = 1024 * 1024
  /** A body goes inline into the cURL command up to this size, else it is read from the file
   * Download body saves (Linux refuses one argument over 128 KiB anyway). */
  const CURL_INLINE_MAX = 64 * 1024
  /** Captures whose "Format anyway" or "Show all of it" was pressed: a re-render (a forward
   * update) keeps the choice. */
  const formatAnyway = new Set()
  const showWhole = new Set()
  const count = (n) => n.toLocaleString('en')

  /** The formats a body may be in, tried in this order (by content type, or by its first
   * characters); none for binary, empty and other text bodies, which are shown raw only. */
  function formatsOf(r) {
    if (r.body === null || r.body_encoding !== 'utf8' || !r.body) return []
    const ct = (r.content_type || '').toLowerCase()
    const kinds = []
    if (ct.includes('json') || /^\s*[[{]/.test(r.body)) kinds.push('json')
    if (ct.includes('x-www-form-urlencoded')) kinds.push('form')
    else if (ct.includes('xml') || /^\s*<\?xml/.test(r.body)) kinds.push('xml')
    return kinds
  }

  /** A readable rendering of JSON, form and XML bodies; null when the raw body is all there is. */
  function pretty(r) {
    for (const kind of formatsOf(r)) {
      if (kind === 'form') return [...new URLSearchParams(r.body)].map(([k, v]) => `${k} = ${v}`).join('\n')
      const nice = inspectFormat[kind](r.body)
      if (nice !== null) return nice
    }
    return null
  }

  const shellQuote = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`

  function curlFor(r) {
    const url = location.origin + r.path + (r.query ? `?${r.query}` : '')
    const parts = ['curl', '-X', r.method, shellQuote(url)]
    const skip = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'accept-encoding'])
    for (let i = 0; i + 1 < r.raw_headers.length; i += 2) {
      if (!skip.has(r.raw_headers[i].toLowerCase())) parts.push('-H', shellQuote(`${r.raw_headers[i]}: ${r.raw_headers[i + 1]}`))
    }
    if (r.size_bytes > 0 && r.body !== null) {
      if (r.body.length > CURL_INLINE_MAX) parts.push('--data-binary', `@request-${r.id}.bin`)
      else if (r.body_encoding === 'utf8') parts.push('--data-binary', shellQuote(r.body))
      else return `printf %s ${shellQuote(r.body)} | base64 -d | ${parts.join(' ')} --data-binary @-`
    }
    return parts.join(' ')
  }

  async function showDetail(id) {
    selected = id
    for (const li of listEl.children) {
      li.classList.toggle('selected', Number(li.dataset.id) === id)
      li.firstChild.toggleAttribute('aria-current', Number(li.dataset.id) === id)
    }
    let r = requests.get(id)
    if (r.body === null && r.size_bytes > 0) {
      r = await getJson(`/requests/${id}`)
      requests.set(id, r)
    }
    const headerRows = []
    for (let i = 0; i + 1 < r.raw_headers.length; i += 2) headerRows.push(el('tr', {}, el('td', {}, r.raw_headers[i]), el('td', {}, r.raw_headers[i + 1])))
    const curl = curlFor(r)
    const curlPre = el('pre', { class: 'curl', tabindex: '0' }, curl)
    const copy = el('button', { type: 'button', class: 'copy-curl', onclick: async () => {
      try {
        await navigator.clipboard.writeText(curl)
        copy.textContent = 'Copied'
      } catch {
        copy.textContent = 'Select the command below to copy it'
      }
    } }, 'Copy as cURL')
    // Formatting within the bounds, or all of it once "Format anyway" was pressed for this capture.
    const force = formatAnyway.has(r.id)
    const skipped = []
    const formats = formatsOf(r)
    const bodyTooLong = !force && formats.length > 0 && r.size_bytes > FORMAT_MAX_BYTES
    if (bodyTooLong) skipped.push(`the body is ${size(r.size_bytes)}, over the ${FORMAT_MAX_BYTES / 1024} KiB formatted at once`)
    let nice = bodyTooLong ? null : pretty(r)
    if (nice !== null && !force && nice.length > SHOW_MAX_CHARS) {
      skipped.push(`formatted it is ${size(nice.length)}, over the ${SHOW_MAX_CHARS / 1048576} MiB shown at once`)
      nice = null
    }
    const bounded = (pairs, what) => {
      if (force || pairs.length <= TABLE_MAX_ROWS) return pairRows(pairs)
      skipped.push(`the ${what} has ${count(pairs.length)} fields, over the ${count(TABLE_MAX_ROWS)} shown as a table at once`)
      return []
    }
    const queryRows = r.query ? bounded([...new URLSearchParams(r.query)], 'query') : []
    const isForm = formats.includes('form')
    const formRows = isForm && !bodyTooLong ? bounded([...new URLSearchParams(r.body)], 'form') : []
    const formatNotice = skipped.length
      ? [
          el(
            'div',
            { class: 'format-skipped' },
            el('p', {}, `Shown raw: ${skipped.join('; ')}.`),
            el('button', { type: 'button', class: 'format-anyway', onclick: async () => {
              formatAnyway.add(r.id)
              await showDetail(r.id)
              // Focus lands on what was formatted, so a keyboard user continues from there.
              detailEl.querySelector('table.query, table.form, pre.pretty')?.focus()
            } }, 'Format anyway'),
          ),
        ]
      : []
    const delivery = []
    if (r.forward) {
      const f = r.forward
      delivery.push(el('p', { class: 'forward' }, `Forward: ${f.status} · ${f.attempts} attempt${f.attempts === 1 ? '' : 's'}${f.last_status !== null ? ` · last answer ${f.last_status}` : ''}${f.last_error ? ` · ${f.last_error}` : ''}`))
    }
    if (r.local_delivery) {
      const d = r.local_delivery
      delivery.push(el('p', { class: 'local-delivery' }, `Local (listen): ${d.status !== null ? d.status : 'failed'} · ${d.latency_ms} ms · ${d.url}${d.error ? ` · ${d.error}` : ''}`))
      if (d.body_preview) delivery.push(el('pre', { class: 'local-preview', tabindex: '0' }, d.body_preview))
    }
    detailEl.replaceChildren(
      el('h2', {}, `${r.method} ${subPath(r.path)}${r.query ? `?${r.query}` : ''}`),
      el('p', { class: 'meta' }, `#${r.id} · ${r.received_at} UTC · ${size(r.size_bytes)} · from ${r.ip_address}${r.content_type ? ` · ${r.content_type}` : ''}`),
      ...delivery,
      actions(r),
      ...formatNotice,
      ...(queryRows.length ? [el('h3', {}, 'Query'), pairTable('query', 'Query parameters', queryRows)] : []),
      ...(formRows.length ? [el('h3', {}, 'Form fields'), pairTable('form', 'Form fields', formRows)] : []),
      el('h3', {}, 'Headers'),
      el('table', { class: 'headers' }, el('caption', { class: 'visually-hidden' }, 'Headers'), el('tbody', {}, ...headerRows)),
      ...(nice !== null ? [el('h3', {}, 'Body (formatted)'), el('pre', { class: 'pretty', tabindex: '0' }, nice)] : []),
      el('h3', {}, r.body_encoding === 'base64' ? 'Raw body (binary, base64)' : 'Raw body'),
      ...rawBody(r),
      el('h3', {}, 'cURL'),
      copy,
      curlPre,
    )
    // One column on a phone: the details are below the list, so bring them on screen.
    if (matchMedia('(max-width: 700px)').matches) detailEl.scrollIntoView({ block: 'start' })
  }

  /** The raw body, cut at SHOW_MAX_CHARS until "Show all of it" is pressed. */
  function rawBody(r) {
    const text = r.body === null ? '' : r.body
    if (showWhole.has(r.id) || text.length <= SHOW_MAX_CHARS) return [el('pre', { class: 'raw', tabindex: '0' }, text)]
    return [
      el('pre', { class: 'raw', tabindex: '0' }, text.slice(0, SHOW_MAX_CHARS)),
      el(
        'div',
        { class: 'raw-cut' },
        el('p', {}, `Showing the first ${count(SHOW_MAX_CHARS)} of ${count(text.length)} characters; Download body saves all of it.`),
        el('button', { type: 'button', class: 'show-all', onclick: async () => {
          showWhole.add(r.id)
          await showDetail(r.id)
          detailEl.querySelector('pre.raw')?.focus()
        } }, 'Show all of it'),
      ),
    ]
  }

  const pairRows = (pairs) => pairs.map(([k, v]) => el('tr', {}, el('td', {}, k), el('td', {}, v)))
  const pairTable = (cls, caption, rows) =>
    el('table', { class: `headers ${cls}`, tabindex: '-1' }, el('caption', { class: 'visually-hidden' }, caption), tbodyOf(rows))
  /** Appended in a loop: spreading 100,000 rows into one call overflows the stack. */
  function tbodyOf(rows) {
    const tbody = el('tbody')
    for (const row of rows) tbody.append(row)
    return tbody
  }

  /** An action's outcome, announced to screen readers; ok=false shows it as an error. */
  function outcome(node, ok, text) {
    node.classList.toggle('bad', !ok)
    node.classList.toggle('good', ok)
    node.textContent = text
  }

  let fieldSeq = 0
  function field(label, input) {
    const id = `f${++fieldSeq}`
    input.id = id
    return el('span', { class: 'field' }, el('label', { for: id }, label), input)
  }

  /** Replay, verify, download and delete for one capture. */
  function actions(r) {
    const result = el('p', { class: 'action-result', role: 'status' })
    const replayUrl = el('input', { type: 'url', required: '', autocomplete: 'off', spellcheck: 'false', value: endpoint?.forward_url || '', placeholder: 'https://…' })
    const replayOut = el('pre', { class: 'replay-answer', tabindex: '0', hidden: '' })
    const replay = el(
      'form',
      { class: 'action replay', 'aria-label': 'Replay', onsubmit: async () => {
        outcome(result, true, 'Replaying…')
        replayOut.hidden = true
        try {
          const a = await call('POST', `/requests/${r.id}/replay`, { url: replayUrl.value.trim() })
          outcome(result, a.status >= 200 && a.status < 300, `Replayed to ${replayUrl.value.trim()}: answered ${a.status}`)
          replayOut.textContent =
            a.body_encoding === 'base64' ? `(binary answer, ${a.body.length} base64 characters)`
            : a.body.length > SHOW_MAX_CHARS ? `${a.body.slice(0, SHOW_MAX_CHARS)}\n… (the first ${count(SHOW_MAX_CHARS)} of ${count(a.body.length)} characters)`
            : a.body
          replayOut.hidden = !a.body
        } catch (err) {
          outcome(result, false, `Replay failed: ${err.message}`)
        }
      } },
      field('Replay to', replayUrl),
      el('button', { type: 'submit' }, 'Replay'),
    )
    const scheme = el('select', {}, el('option', { value: '' }, 'detect from headers'), ...schemes.map((s) => el('option', { value: s }, s)))
    const secret = el('input', { type: 'password', required: '', autocomplete: 'off', spellcheck: 'false' })
    const signedUrl = el('input', { type: 'url', autocomplete: 'off', spellcheck: 'false', placeholder: 'Twilio, Square: URL they call' })
    const verify = el(
      'form',
      { class: 'action verify', 'aria-label': 'Verify signature', onsubmit: async () => {
        outcome(result, true, 'Verifying…')
        const ask = { secret: secret.value }
        if (scheme.value) ask.scheme = scheme.value
        if (signedUrl.value.trim()) ask.url = signedUrl.value.trim()
        try {
          const v = await call('POST', `/requests/${r.id}/verify`, ask)
          outcome(result, v.valid, `${v.valid ? 'Valid' : 'Not valid'} ${v.scheme} signature: ${v.reason}`)
        } catch (err) {
          outcome(result, false, `Cannot verify: ${err.message}`)
        }
      } },
      field('Scheme', scheme),
      field('Secret or key', secret),
      field('Signed URL (optional)', signedUrl),
      el('button', { type: 'submit' }, 'Verify signature'),
    )
    const download = el('button', { type: 'button', class: 'download', onclick: async () => {
      try {
        const res = await fetch(`${api}/requests/${r.id}/body`, { headers: auth(), cache: 'no-store' })
        if (!res.ok) throw new Error((await res.json().catch(() => ({}))).error || `HTTP ${res.status}`)
        // Saved, never shown: an octet-stream blob with a file name cannot render as a document here.
        const url = URL.createObjectURL(new Blob([await res.arrayBuffer()], { type: 'application/octet-stream' }))
        const a = el('a', { href: url, download: `request-${r.id}.bin` })
        document.body.append(a)
        a.click()
        a.remove()
        setTimeout(() => URL.revokeObjectURL(url), 60_000)
        outcome(result, true, `Downloaded request-${r.id}.bin (${size(r.size_bytes)})`)
      } catch (err) {
        outcome(result, false, `Download failed: ${err.message}`)
      }
    } }, 'Download body')
    const remove = el('button', { type: 'button', class: 'delete', onclick: async () => {
      if (remove.dataset.confirm !== 'yes') {
        // A second press confirms: no modal dialog, so the keyboard and screen readers stay in place.
        remove.dataset.confirm = 'yes'
        remove.textContent = `Press again to delete #${r.id}`
        return
      }
      try {
        await call('DELETE', `/requests/${r.id}`)
        forget(r.id)
        statusEl.textContent = `Deleted #${r.id} · ${statusEl.textContent}`
      } catch (err) {
        outcome(result, false, `Delete failed: ${err.message}`)
      }
    } }, 'Delete')
    return el('section', { class: 'actions', 'aria-label': 'Actions' }, el('div', { class: 'buttons' }, download, remove), replay, verify, result, replayOut)
  }

  /** A deleted capture leaves the list and the detail pane. */
  function forget(id) {
    requests.delete(id)
    for (const li of listEl.children) if (Number(li.dataset.id) === id) li.remove()
    if (selected === id) {
      selected = null
      detailEl.replaceChildren(el('p', { class: 'hint' }, 'Deleted. Select a request to see its headers and body.'))
    }
    showState()
  }

  function addRequests(list) {
    // list is newest first; insert oldest first so each new one goes to the top.
    for (const r of [...list].reverse()) {
      if (requests.has(r.id)) continue
      requests.set(r.id, r)
      lastId = Math.max(lastId, r.id)
      // A button per row: reachable with Tab, opened with Enter or Space.
      const li = el(
        'li',
        { 'data-id': String(r.id), class: 'fresh' },
        el(
          'button',
          { type: 'button', class: 'row', onclick: () => showDetail(r.id) },
          el('span', { class: 'method' }, r.method),
          el('span', { class: 'path' }, subPath(r.path) + (r.query ? `?${r.query}` : '')),
          el('span', { class: 'meta' }, `#${r.id} · ${r.received_at} · ${size(r.size_bytes)}`),
        ),
      )
      // Newest on top; search results can be older than what is shown, so insert by id.
      const after = [...listEl.children].find((x) => Number(x.dataset.id) < r.id)
      listEl.insertBefore(li, after || null)
      li.hidden = !matches(r)
    }
    showState()
  }

  /** The filter box: case-insensitive text in the method, path, query, headers or text body. */
  function matches(r) {
    const f = $('filter').value.trim().toLowerCase()
    if (!f) return true
    const hay = [r.method, r.path, r.query, ...r.raw_headers, r.body_encoding === 'utf8' ? r.body : ''].join('\n').toLowerCase()
    return hay.includes(f)
  }
  function applyFilter() {
    for (const li of listEl.children) li.hidden = !matches(requests.get(Number(li.dataset.id)))
  }
  $('filter').addEventListener('input', applyFilter)
  $('filter-form').addEventListener('submit', async (ev) => {
    ev.preventDefault()
    const f = $('filter').value.trim()
    if (!f || (!key && !csrf)) return
    // Older matches from the server (body text search over all stored captures).
    try {
      const page = await getJson(`/requests?limit=100&q=${encodeURIComponent(f.slice(0, 200))}`)
      addRequests(page.requests)
      applyFilter()
    } catch (err) {
      statusEl.textContent = `Search failed: ${err.message}`
    }
  })

  let timer = null
  let stream = null
  let failures = 0
  let live = false
  /** The endpoint was deleted (its stream said so): nothing more to follow or poll. */
  let deleted = false

  function showState() {
    if (deleted) return
    const n = `${requests.size} request${requests.size === 1 ? '' : 's'}`
    statusEl.textContent = live ? `${n} · live` : `${n} · disconnected, reconnecting…`
    statusEl.classList.toggle('offline', !live)
  }

  /** Merge a stream update (forward attempt, local delivery) into a request already shown. */
  function update(id, patch) {
    const r = requests.get(id)
    if (!r) return
    Object.assign(r, patch)
    if (selected === id) showDetail(id)
  }

  /** New settings (PATCH, pause, resume elsewhere): the name shown and the Replay target follow. */
  function applyEndpoint(ep) {
    endpoint = ep
    const title = ep.name ? `${ep.name} · webhook inspector` : 'Webhook inspector'
    document.title = title
    document.querySelector('header h1').textContent = title
  }

  /** Deleted elsewhere (the console, another tab, the API): its captures went with it. */
  function showDeleted() {
    deleted = true
    live = false
    clearTimeout(timer)
    requests.clear()
    selected = null
    listEl.replaceChildren()
    $('filter-form').hidden = true
    $('capture-bar').hidden = true
    statusEl.classList.remove('offline')
    statusEl.classList.add('deleted')
    statusEl.textContent = 'Endpoint deleted'
    const notice = el(
      'div',
      { class: 'deleted-notice', role: 'alert' },
      el('h2', {}, 'This endpoint was deleted'),
      el('p', {}, 'It was deleted in the console, another tab or through the API: its capture URL answers 404 now, and its captured requests were deleted with it.'),
    )
    detailEl.replaceChildren(notice)
  }

  function onEvent(type, data) {
    if (deleted) return
    if (type === 'capture') return addRequests([data])
    if (type === 'forward') return update(data.id, { forward: data.forward })
    if (type === 'local_delivery') return update(data.id, { local_delivery: data.local_delivery })
    if (type === 'endpoint') return applyEndpoint(data)
    if (type === 'endpoint_deleted') return showDeleted()
    // Other event types (added later) are not this page's: ignored.
  }

  /** The Server-Sent Events wire format: fields up to a blank line; comments start with ':'. */
  function sseParser(emit) {
    let buf = ''
    let type = ''
    let data = []
    return (text) => {
      buf += text
      let nl
      while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
        const line = buf.slice(0, nl)
        buf = buf.slice(nl + (buf.startsWith('\r\n', nl) ? 2 : 1))
        if (line === '') {
          if (data.length) emit(type || 'message', data.join('\n'))
          type = ''
          data = []
          continue
        }
        if (line.startsWith(':')) continue
        const i = line.indexOf(':')
        const field = i < 0 ? line : line.slice(0, i)
        const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '')
        if (field === 'event') type = value
        else if (field === 'data') data.push(value)
      }
    }
  }

  async function poll() {
    const page = await getJson(`/requests?limit=100${lastId ? `&after=${lastId}` : ''}`)
    addRequests(page.requests)
  }

  /** One connection: resolves when it ends; rejects with .status on 401/404. */
  async function follow() {
    const ac = new AbortController()
    stream = ac
    const res = await fetch(`${api}/stream`, {
      headers: { ...auth(), accept: 'text/event-stream', 'last-event-id': String(lastId) },
      cache: 'no-store',
      signal: ac.signal,
    })
    if (!res.ok) {
      const body = await res.json().catch(() => ({}))
      throw Object.assign(new Error(body.error || `HTTP ${res.status}`), { status: res.status })
    }
    live = true
    failures = 0
    showState()
    const feed = sseParser((type, raw) => {
      try {
        onEvent(type, JSON.parse(raw))
      } catch {}
    })
    const reader = res.body.getReader()
    const decoder = new TextDecoder()
    let stall = setTimeout(() => ac.abort(), STALL_MS)
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        clearTimeout(stall)
        stall = setTimeout(() => ac.abort(), STALL_MS)
        feed(decoder.decode(value, { stream: true }))
      }
    } finally {
      clearTimeout(stall)
    }
  }

  async function connect() {
    try {
      await follow()
      if (deleted) return
    } catch (err) {
      if (deleted) return
      if (err.status === 401) return askForKey(refusedMessage())
      if (err.status === 404) return void (statusEl.textContent = 'This endpoint does not exist (any more).')
    }
    live = false
    failures++
    showState()
    // Fallback while the stream is down: the list API still answers, so nothing waits on the stream.
    try {
      await poll()
    } catch (err) {
      if (err.status === 401 || err.status === 404) return connect()
    }
    showState()
    timer = setTimeout(connect, Math.min(POLL_MS * failures, 10_000))
  }

  async function start() {
    clearTimeout(timer)
    stream?.abort()
    if (!key && !csrf) csrf = await consoleSession()
    if (!key && !csrf) return askForKey('Enter your API key to see the requests captured by this endpoint.')
    statusEl.textContent = 'Loading…'
    try {
      endpoint = await getJson('')
      await poll()
    } catch (err) {
      if (err.status === 401) return askForKey(refusedMessage())
      // The console's account is not the one that owns this page's endpoint: its owner's key opens it.
      if (err.status === 404 && !key) return askForKey('This endpoint is not in the account signed in to the console. Enter the API key of the account that owns it.')
      if (err.status === 404) return void (statusEl.textContent = 'This endpoint does not exist (any more).')
    }
    connect()
  }
  start()
})()
