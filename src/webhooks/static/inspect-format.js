// The inspection page's body formatters (a classic script served as a file, loaded before
// inspect.js; test/webhooks-inspect-format.test.ts also runs it in Node). JSON and XML are
// re-indented as text by small tokenizers that only add or drop whitespace between tokens: no
// DOMParser, so a capture's DTD is shown as written and its entities are never expanded (one 50 KB
// entity used 15,000 times froze the tab for tens of seconds), nothing in a body can load or run,
// and the work is one pass over the body. Both return null when the body is not well-formed enough
// to format (the page then shows it raw only). docs/webhooks.md, "Inspection page".
'use strict'
globalThis.inspectFormat = (() => {
  /** Deeper levels are not indented further, so the output stays within a constant factor of the
   * body (indenting each of 3,000 nested arrays fully would turn 6 KB into 18 MB). */
  const MAX_INDENT = 16
  const PADS = Array.from({ length: MAX_INDENT + 1 }, (_, d) => '  '.repeat(d))
  const pad = (depth) => PADS[Math.min(depth, MAX_INDENT)]

  const isJsonSpace = (c) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
  const isJsonDelimiter = (c) => isJsonSpace(c) || c === 0x2c || c === 0x3a || c === 0x5d || c === 0x7d

  /** JSON with two-space indentation, laid out as JSON.stringify(v, null, 2) does, but with every
   * string, number and duplicate key kept as written (big integers and escapes stay exact). */
  function json(text) {
    try {
      JSON.parse(text) // validity only: V8's parser is iterative, so depth cannot overflow it
    } catch {
      return null
    }
    const n = text.length
    const out = []
    let depth = 0
    let i = 0
    while (i < n) {
      const c = text.charCodeAt(i)
      if (c === 0x22) {
        let j = i + 1
        while (text.charCodeAt(j) !== 0x22) j += text.charCodeAt(j) === 0x5c ? 2 : 1
        out.push(text.slice(i, j + 1))
        i = j + 1
      } else if (c === 0x7b || c === 0x5b) {
        const close = c === 0x7b ? 0x7d : 0x5d
        let j = i + 1
        while (isJsonSpace(text.charCodeAt(j))) j++
        if (text.charCodeAt(j) === close) {
          out.push(c === 0x7b ? '{}' : '[]')
          i = j + 1
        } else {
          out.push(text[i], '\n', pad(++depth))
          i++
        }
      } else if (c === 0x7d || c === 0x5d) {
        out.push('\n', pad(--depth), text[i])
        i++
      } else if (c === 0x2c) {
        out.push(',\n', pad(depth))
        i++
      } else if (c === 0x3a) {
        out.push(': ')
        i++
      } else if (isJsonSpace(c)) {
        i++
      } else {
        let j = i + 1
        while (j < n && !isJsonDelimiter(text.charCodeAt(j))) j++
        out.push(text.slice(i, j))
        i = j
      }
    }
    return out.join('')
  }

  /** The index just past the '>' closing a tag that starts before `from`, skipping quoted
   * attribute values (they may hold '>'); -1 when the body ends first. */
  function tagEnd(text, from) {
    for (let i = from, quote = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (quote) {
        if (c === quote) quote = 0
      } else if (c === 0x22 || c === 0x27) quote = c
      else if (c === 0x3e) return i + 1
    }
    return -1
  }

  /** The index just past a DOCTYPE declaration starting before `from`: its internal subset ([…],
   * where quoted values, comments and processing instructions may hold ']' or '>') is skipped as
   * text, never read as declarations. -1 when the body ends first. */
  function doctypeEnd(text, from) {
    let subset = false
    for (let i = from, quote = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (quote) {
        if (c === quote) quote = 0
      } else if (c === 0x22 || c === 0x27) quote = c
      else if (subset && (text.startsWith('<!--', i) || text.startsWith('<?', i))) {
        const close = text[i + 1] === '!' ? '-->' : '?>'
        const j = text.indexOf(close, i + 2)
        if (j < 0) return -1
        i = j + close.length - 1
      } else if (c === 0x5b) subset = true
      else if (c === 0x5d) subset = false
      else if (c === 0x3e && !subset) return i + 1
    }
    return -1
  }

  /** An element's name at `from` (up to white space, '/' or '>'); '' when there is none or it
   * cannot start a name. */
  function nameAt(text, from) {
    const m = /[^\s/>]*/y
    m.lastIndex = from
    const name = m.exec(text)[0]
    return /^[^\d\-.\s'"=<>&!?/]/.test(name) ? name : ''
  }

  /** XML with one element, text, comment, CDATA section, processing instruction or DOCTYPE per
   * line, indented by depth; an element holding only text stays on one line. Tags, text and the
   * DOCTYPE are kept as written: entity references are shown, not expanded. */
  function xml(text) {
    const n = text.length
    const lines = []
    const open = [] // names of the elements open, outermost first
    let rootSeen = false
    let rootClosed = false
    const line = (s) => lines.push(pad(open.length) + s)
    const section = (i, start, close, inRootOnly) => {
      if (inRootOnly && !open.length) return -1
      const j = text.indexOf(close, i + start.length)
      if (j < 0) return -1
      line(text.slice(i, j + close.length))
      return j + close.length
    }
    let i = 0
    while (i < n) {
      if (text.charCodeAt(i) !== 0x3c) {
        let j = text.indexOf('<', i)
        if (j < 0) j = n
        const t = text.slice(i, j).trim()
        if (t) {
          if (!open.length) return null // text outside the root element: not XML
          line(t)
        }
        i = j
        continue
      }
      if (text.startsWith('<?', i)) i = section(i, '<?', '?>', false)
      else if (text.startsWith('<!--', i)) i = section(i, '<!--', '-->', false)
      else if (text.startsWith('<![CDATA[', i)) i = section(i, '<![CDATA[', ']]>', true)
      else if (text.startsWith('<!DOCTYPE', i)) {
        if (rootSeen) return null
        const j = doctypeEnd(text, i + 9)
        if (j >= 0) line(text.slice(i, j))
        i = j
      } else if (text.startsWith('</', i)) {
        const j = tagEnd(text, i + 2)
        if (j < 0 || open.pop() !== text.slice(i + 2, j - 1).trim()) return null
        line(text.slice(i, j))
        rootClosed = !open.length
        i = j
      } else {
        const name = nameAt(text, i + 1)
        const j = name && !rootClosed ? tagEnd(text, i + 1) : -1
        if (j < 0) return null
        rootSeen = true
        if (text.charCodeAt(j - 2) === 0x2f) {
          line(text.slice(i, j))
          rootClosed = !open.length
          i = j
          continue
        }
        // An element holding only text (or nothing): start tag, text and end tag on one line.
        const k = text.indexOf('<', j)
        if (k >= 0 && text.startsWith(`</${name}`, k)) {
          const e = tagEnd(text, k + 2)
          if (e >= 0 && text.slice(k + 2, e - 1).trim() === name) {
            line(text.slice(i, j) + text.slice(j, k).trim() + text.slice(k, e))
            rootClosed = !open.length
            i = e
            continue
          }
        }
        line(text.slice(i, j))
        open.push(name)
        i = j
      }
      if (i < 0) return null
    }
    return rootSeen && !open.length ? lines.join('\n') : null
  }

  return Object.freeze({ json, xml, MAX_INDENT })
})()
