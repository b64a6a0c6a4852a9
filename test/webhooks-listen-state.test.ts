// listen's resume state (scripts/listen/resume-state.ts) is written through a temporary file that
// is created exclusively under a random name: a symlink planted in the state folder — at the
// predictable `<state-file>.<pid>.tmp` an earlier version used, or at the state file itself — is
// never written through, and a kill mid-write still leaves a whole file.
import assert from 'node:assert/strict'
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { recall, remember } from '../scripts/listen/resume-state.ts'

describe('webhooks: listen resume state written safely', () => {
  it('a symlink planted at the old predictable temporary name is left alone; the state is written and nothing outside changes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'qw-listen-state-'))
    const outside = mkdtempSync(join(tmpdir(), 'qw-listen-outside-'))
    const victim = join(outside, 'victim.txt')
    writeFileSync(victim, 'untouched\n')
    const file = join(dir, 'state.json')
    symlinkSync(victim, `${file}.${process.pid}.tmp`)
    remember(file, 'k', 7)
    assert.equal(readFileSync(victim, 'utf8'), 'untouched\n')
    assert.equal(recall(file, 'k')?.last_id, 7)
    assert.equal(lstatSync(file).isSymbolicLink(), false)
    // No temporary file is left behind; the planted link is still there, untouched.
    assert.deepEqual(readdirSync(dir).sort(), ['state.json', `state.json.${process.pid}.tmp`])
  })

  it('a state file that is a symlink is replaced by a file, not written through', () => {
    const dir = mkdtempSync(join(tmpdir(), 'qw-listen-state-'))
    const victim = join(mkdtempSync(join(tmpdir(), 'qw-listen-outside-')), 'victim.json')
    writeFileSync(victim, '{}\n')
    const file = join(dir, 'state.json')
    symlinkSync(victim, file)
    remember(file, 'k', 3)
    assert.equal(readFileSync(victim, 'utf8'), '{}\n')
    assert.equal(lstatSync(file).isSymbolicLink(), false)
    assert.equal(recall(file, 'k')?.last_id, 3)
  })

  it('later ids move the mark forward, earlier ones do not; other keys are kept', () => {
    const dir = mkdtempSync(join(tmpdir(), 'qw-listen-state-'))
    const file = join(dir, 'nested', 'state.json')
    remember(file, 'a', 5)
    remember(file, 'b', 2)
    remember(file, 'a', 4)
    assert.equal(recall(file, 'a')?.last_id, 5)
    assert.equal(recall(file, 'b')?.last_id, 2)
    assert.ok(existsSync(file))
    assert.equal(readdirSync(join(dir, 'nested')).length, 1)
  })
})
