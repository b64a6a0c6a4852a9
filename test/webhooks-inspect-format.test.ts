// The inspection page's body formatters (src/webhooks/static/inspect-format.js), run in Node from
// the very file the page loads: exact layouts, DOCTYPEs and entities kept as written, what is
// refused (null: the page shows the body raw), and properties over generated documents — the
// formatter only moves whitespace between tokens, and its output stays within a constant factor of
// the body however deep the nesting. The page itself (bounds, "Format anyway", main-thread time)
// is tested in webhooks-inspect-hostile.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import vm from 'node:vm'
import fc from 'fast-check'

const SOURCE = readFileSync(new URL('../src/webhooks/static/inspect-format.js', import.meta.url), 'utf8')
const sandbox: any = {}
vm.runInNewContext(SOURCE, sandbox)
const fmt: { json(t: string): string | null; xml(t: string): string | null; MAX_INDENT: number } = sandbox.inspectFormat

/** The text without white space: what the formatter must never change. */
const tokens = (s: string) => s.replace(/\s+/g, '')

describe('webhooks: inspection page formatters (inspect-format.js)', () => {
  describe('JSON', () => {
    it('lays out like JSON.stringify(v, null, 2), keeping numbers, escapes and duplicate keys as written', () => {
      const doc = { event: 'push', n: [1, 2], empty: {}, none: [], deep: { a: [{ b: null, c: true }] } }
      assert.equal(fmt.json(JSON.stringify(doc)), JSON.stringify(doc, null, 2))
      assert.equal(fmt.json(' { "a" : [ ] , "b":{ } }\n'), '{\n  "a": [],\n  "b": {}\n}')
      // JSON.parse would round the id, turn 1.0 into 1, decode the escape and drop the first "k".
      assert.equal(fmt.json('{"id":12345678901234567890,"x":1.0,"s":"\\u00e9\\"}","k":1,"k":2}'), '{\n  "id": 12345678901234567890,\n  "x": 1.0,\n  "s": "\\u00e9\\"}",\n  "k": 1,\n  "k": 2\n}')
      assert.equal(fmt.json('"just a string"'), '"just a string"')
      assert.equal(fmt.json('-1.5e3'), '-1.5e3')
    })

    it('refuses what is not JSON (the page shows it raw)', () => {
      for (const bad of ['{', '{"a":1,}', '[1 2]', "{'a':1}", '', 'nul', '{"a":1}}']) assert.equal(fmt.json(bad), null, bad)
    })

    it('indents at most MAX_INDENT levels: 100,000 nested arrays stay within a constant factor of the body', () => {
      const depth = 100_000
      const body = '['.repeat(depth) + '1' + ']'.repeat(depth)
      const out = fmt.json(body)!
      assert.ok(out.length < body.length * (2 * fmt.MAX_INDENT + 2), `${out.length} characters for a ${body.length}-character body`)
      assert.equal(tokens(out), body)
      const widest = out.split('\n').reduce((m, l) => Math.max(m, l.length - l.trimStart().length), 0)
      assert.equal(widest, 2 * fmt.MAX_INDENT)
    })

    it('for any JSON value: only whitespace changes, and within the indent cap it is JSON.stringify(v, null, 2)', () => {
      fc.assert(
        fc.property(fc.jsonValue({ maxDepth: 8 }), (v) => {
          const text = JSON.stringify(v)
          const out = fmt.json(text)!
          assert.equal(out, JSON.stringify(v, null, 2))
        }),
        { numRuns: 500 },
      )
      fc.assert(
        fc.property(fc.jsonValue({ maxDepth: 30 }), (v) => {
          const text = JSON.stringify(v)
          const out = fmt.json(text)!
          assert.deepEqual(JSON.parse(out), JSON.parse(text))
          assert.ok(out.length <= text.length * (2 * fmt.MAX_INDENT + 4) + 2)
        }),
        { numRuns: 300 },
      )
    })
  })

  describe('XML', () => {
    it('one element, text, comment, CDATA or instruction per line; an element holding only text stays on one line', () => {
      const body = '<?xml version="1.0"?>\n<!-- sent by x --><r a="1" b=\'>\'><item id="7">Hello &amp; bye</item><empty/><e></e><n><m x="y"/>tail</n><![CDATA[<raw>]]></r>'
      assert.equal(
        fmt.xml(body),
        [
          '<?xml version="1.0"?>',
          '<!-- sent by x -->',
          `<r a="1" b='>'>`,
          '  <item id="7">Hello &amp; bye</item>',
          '  <empty/>',
          '  <e></e>',
          '  <n>',
          '    <m x="y"/>',
          '    tail',
          '  </n>',
          '  <![CDATA[<raw>]]>',
          '</r>',
        ].join('\n'),
      )
    })

    it('shows a DOCTYPE and its internal subset as written and never expands an entity (one 50 KB entity used 15,000 times)', () => {
      const dtd = `<!DOCTYPE r [<!ENTITY e "${'x'.repeat(50_000)}">]>`
      const body = `<?xml version="1.0"?>${dtd}<r>${'&e;'.repeat(15_000)}</r>`
      const out = fmt.xml(body)!
      assert.equal(out, `<?xml version="1.0"?>\n${dtd}\n<r>${'&e;'.repeat(15_000)}</r>`)
      // ']' and '>' inside quoted values, comments and instructions of the subset do not end it.
      const tricky = `<!DOCTYPE r [\n  <!ENTITY a "]>">\n  <!-- ]> don't -->\n  <?pi ]> ?>\n  <!ENTITY b SYSTEM 'http://127.0.0.1:1/x]>'>\n]>`
      assert.equal(fmt.xml(`${tricky}<r>&a;&b;</r>`), `${tricky}\n<r>&a;&b;</r>`)
    })

    it('keeps markup that would run or load in a document as text (script, handlers, XInclude, stylesheets)', () => {
      const body =
        '<?xml-stylesheet type="text/xsl" href="http://127.0.0.1:1/x.xsl"?><html xmlns="http://www.w3.org/1999/xhtml"><script>window.__pwned=1</script>' +
        '<img src="x" onerror="window.__pwned=2"/><xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="http://127.0.0.1:1/xi"/></html>'
      assert.equal(
        fmt.xml(body),
        [
          '<?xml-stylesheet type="text/xsl" href="http://127.0.0.1:1/x.xsl"?>',
          '<html xmlns="http://www.w3.org/1999/xhtml">',
          '  <script>window.__pwned=1</script>',
          '  <img src="x" onerror="window.__pwned=2"/>',
          '  <xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="http://127.0.0.1:1/xi"/>',
          '</html>',
        ].join('\n'),
      )
    })

    it('refuses what is not well-formed (the page shows it raw)', () => {
      for (const bad of [
        'plain text',
        '<a>',
        '<a></b>',
        '<a><b></a></b>',
        '<a>x</a><b/>',
        '<a/>trailing',
        '<a b="unclosed></a>',
        '<!-- never closed <a/>',
        '<a><![CDATA[ open </a>',
        '<!DOCTYPE r [ <!ENTITY e "x"> <r/>',
        '<a/><!DOCTYPE a>',
        '< a/>',
        '<1a/>',
        '<a>1 < 2</a>',
        '',
      ])
        assert.equal(fmt.xml(bad), null, bad)
    })

    it('indents at most MAX_INDENT levels: 100,000 nested elements stay within a constant factor of the body', () => {
      const depth = 100_000
      const body = '<a>'.repeat(depth) + '<b/>' + '</a>'.repeat(depth)
      const out = fmt.xml(body)!
      assert.equal(tokens(out), body)
      assert.ok(out.length < body.length * (fmt.MAX_INDENT + 2), `${out.length} characters for a ${body.length}-character body`)
    })

    it('for generated documents: only whitespace between tokens changes, never throws on any string', () => {
      const name = fc.stringMatching(/^[a-z][a-z0-9:_-]{0,6}$/)
      const text = fc.stringMatching(/^[a-z &;0-9]{1,12}$/).filter((t) => t.trim() === t && t !== '')
      const attr = fc.tuple(name, fc.stringMatching(/^[a-z<>/ ]{0,6}$/)).map(([k, v]) => ` ${k}="${v}"`)
      const { node } = fc.letrec((tie) => ({
        node: fc.oneof(
          { depthSize: 'small', withCrossShrink: true },
          text,
          fc.constantFrom('<!-- c -->', '<![CDATA[ <x> ]]>', '<?pi data?>'),
          fc.tuple(name, fc.array(attr, { maxLength: 2 }), fc.array(tie('node'), { maxLength: 4 })).map(
            ([n, attrs, kids]) => `<${n}${attrs.join('')}>${kids.join('')}</${n}>`,
          ),
        ),
      }))
      const doc = fc.tuple(name, fc.array(node, { maxLength: 5 })).map(([n, kids]) => `<?xml version="1.0"?><${n}>${kids.join('')}</${n}>`)
      fc.assert(
        fc.property(doc, (body) => {
          const out = fmt.xml(body)
          assert.notEqual(out, null, body)
          // Text runs are trimmed and tokens kept: removing all white space gives the same string.
          assert.equal(tokens(out!), tokens(body))
        }),
        { numRuns: 500 },
      )
      fc.assert(
        fc.property(fc.string({ unit: fc.constantFrom('<', '>', '/', '!', '?', '[', ']', '-', '"', "'", 'a', ' ', '&', ';', 'D') }), (s) => {
          const out = fmt.xml(s)
          assert.ok(out === null || typeof out === 'string')
        }),
        { numRuns: 2000 },
      )
    })
  })
})
