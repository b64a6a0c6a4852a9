// The account: plan, the month's usage as a meter (GET /usage), upgrade through Stripe Checkout
// (POST /checkout answers the hosted page's address; the page goes there), and the API key rotated
// and shown once. Rotation ends every session made with the old key, so the page signs in again
// with the new one at once: the console carries on while the key is on screen.
import { useEffect, useState } from 'preact/hooks'
import { api, reconnects } from '../ui/api.ts'
import { CopyBlock } from '../ui/copy.tsx'
import { ConfirmDialog } from '../ui/dialog.tsx'
import { FormError, SelectField } from '../ui/fields.tsx'
import { Notice, Page } from '../ui/page.tsx'
import { account, signInWithKey } from './session.ts'
import { say } from './say.ts'

export interface Usage {
  plan: string
  invoices_this_month: number
  monthly_limit: number
  remaining: number
}

const PLANS = [
  { value: 'starter', label: 'Starter: 100 invoices a month, $9' },
  { value: 'pro', label: 'Pro: 1,000 invoices a month, $19' },
  { value: 'business', label: 'Business: 10,000 invoices a month, $39' },
]
const RANK: Record<string, number> = { free: 0, starter: 1, pro: 2, business: 3 }

export const APP = 'Invoices'

export function UsageMeter({ usage }: { usage: Usage }) {
  const pct = Math.min(100, Math.round((100 * usage.invoices_this_month) / Math.max(1, usage.monthly_limit)))
  return (
    <div class="usage">
      <label for="usage-meter">
        Invoices this month: <strong>{usage.invoices_this_month}</strong> of {usage.monthly_limit} ({usage.remaining} left)
      </label>
      <meter id="usage-meter" min={0} max={usage.monthly_limit} low={Math.floor(usage.monthly_limit * 0.8)} high={Math.floor(usage.monthly_limit * 0.95)} optimum={0} value={usage.invoices_this_month}>
        {pct} %
      </meter>
      <p class="hint">Months are UTC; previews, the demo and failed renders are not counted. Reading a received e-invoice counts as one.</p>
    </div>
  )
}

export function AccountPage() {
  const [usage, setUsage] = useState<Usage | null>(null)
  const [error, setError] = useState<string | null>(null)
  const upgrades = PLANS.filter((p) => RANK[p.value]! > (RANK[usage?.plan ?? 'free'] ?? 0))
  const [plan, setPlan] = useState('')
  const [busy, setBusy] = useState(false)
  const [upgradeError, setUpgradeError] = useState<string | null>(null)
  const [asking, setAsking] = useState(false)
  const [rotateError, setRotateError] = useState<string | null>(null)
  const [newKey, setNewKey] = useState<string | null>(null)

  useEffect(() => {
    api<Usage>('GET', '/api/v1/usage')
      .then((r) => {
        setUsage(r.data)
        setError(null)
      })
      .catch((e) => setError(say(e)))
  }, [reconnects.value])

  const chosen = plan || upgrades[0]?.value || ''
  const upgrade = async (e: Event) => {
    e.preventDefault()
    setBusy(true)
    setUpgradeError(null)
    try {
      const r = await api<{ checkout_url: string }>('POST', '/api/v1/checkout', { body: { plan: chosen } })
      location.assign(r.data.checkout_url)
    } catch (err) {
      setUpgradeError(say(err))
      setBusy(false)
    }
  }
  const rotate = async () => {
    setBusy(true)
    setRotateError(null)
    try {
      const r = await api<{ api_key: string }>('POST', '/api/v1/account/key/rotate')
      await signInWithKey(r.data.api_key)
      setNewKey(r.data.api_key)
      setAsking(false)
    } catch (err) {
      setRotateError(say(err))
    } finally {
      setBusy(false)
    }
  }

  return (
    <Page title="Account" appName={APP}>
      {error && <Notice kind="error">{error}</Notice>}
      <dl class="facts">
        <dt>E-mail</dt>
        <dd>{account.value?.email}</dd>
        <dt>Plan</dt>
        <dd id="plan-name">{usage?.plan ?? account.value?.plan}</dd>
      </dl>
      {usage ? <UsageMeter usage={usage} /> : !error && <p>Loading…</p>}

      <h2>Upgrade</h2>
      {usage && upgrades.length === 0 ? (
        <p>You are on the largest plan.</p>
      ) : (
        <form onSubmit={upgrade} class="inline-fields" aria-label="Upgrade">
          <SelectField id="plan" label="Plan" value={chosen} options={upgrades} onValue={setPlan} class="grow" />
          <button type="submit" class="primary" disabled={busy || !chosen}>
            Upgrade with Stripe Checkout
          </button>
        </form>
      )}
      <FormError error={upgradeError} />
      <p class="hint">You pay on Stripe's page and come back here; the new plan applies within seconds of the payment.</p>

      <h2>API key</h2>
      {newKey ? (
        <div class="keyshow">
          <p>
            <strong>Your new API key, shown only once.</strong> The old key no longer works; this console already uses the new one.
          </p>
          <CopyBlock text={newKey} what="API key" />
        </div>
      ) : (
        <p>The key is stored only as a hash, so it cannot be shown again. Rotating makes a new one and the old one stops working at once (scripts that use it too).</p>
      )}
      <button type="button" onClick={() => setAsking(true)}>
        Rotate API key
      </button>
      <ConfirmDialog open={asking} title="Rotate the API key?" confirmLabel="Rotate the key" danger busy={busy} error={rotateError} onConfirm={rotate} onClose={() => setAsking(false)}>
        <p>The current key stops working at once, for this console and for every script that uses it. The new key is shown once.</p>
      </ConfirmDialog>
    </Page>
  )
}
