// The account: plan and its limits, today's usage as meters, the upgrade through Stripe Checkout
// (the service's POST /api/v1/checkout answers the hosted page's address; the browser goes there
// and Stripe sends it back to the service's "Payment received" page), and the API key replaced
// with the new one shown once.
import { useEffect, useState } from 'preact/hooks'
import { api, reconnects } from '../ui/api.ts'
import { CopyBlock } from '../ui/copy.tsx'
import { ConfirmDialog } from '../ui/dialog.tsx'
import { FormError, SelectField } from '../ui/fields.tsx'
import { Notice, Page } from '../ui/page.tsx'
import { APP } from './app-name.ts'
import { say } from './say.ts'
import { account, rotateKey } from './session.ts'
import type { AccountUsage, Plan } from './types.ts'

const PLANS: Array<{ plan: Plan; price: number }> = [
  { plan: 'starter', price: 9 },
  { plan: 'pro', price: 19 },
  { plan: 'business', price: 39 },
]
const title = (s: string) => s[0]!.toUpperCase() + s.slice(1)

function Meter(props: { id: string; label: string; value: number; max: number }) {
  const pct = props.max ? Math.min(100, (100 * props.value) / props.max) : 0
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <meter id={props.id} class="usage-meter" min={0} max={props.max} value={props.value} high={props.max * 0.8} optimum={0}>
        {props.value} of {props.max}
      </meter>
      <p class="hint">
        {props.value.toLocaleString('en-US')} of {props.max.toLocaleString('en-US')} ({pct.toFixed(0)} %)
      </p>
    </div>
  )
}

export function AccountPage() {
  const [info, setInfo] = useState<AccountUsage | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [plan, setPlan] = useState<string>('')
  const [upgradeError, setUpgradeError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [confirmRotate, setConfirmRotate] = useState(false)
  const [rotateError, setRotateError] = useState<string | null>(null)
  const [newKey, setNewKey] = useState<string | null>(null)

  const load = () =>
    api<AccountUsage>('GET', '/api/v1/account')
      .then((r) => {
        setInfo(r.data)
        setError(null)
        if (account.value && account.value.plan !== r.data.plan) account.value = { ...account.value, plan: r.data.plan }
      })
      .catch((e) => setError(say(e)))
  useEffect(() => void load(), [reconnects.value])

  const higher = info ? PLANS.filter((p) => p.price > (PLANS.find((x) => x.plan === info.plan)?.price ?? 0)) : []
  const chosen = plan || higher[0]?.plan || ''

  return (
    <Page title="Account" appName={APP}>
      {error && <Notice kind="error">{error}</Notice>}
      {!info && !error && <p>Loading…</p>}
      {info && (
        <>
          <dl class="facts">
            <dt>E-mail</dt>
            <dd>{account.value?.email}</dd>
            <dt>Plan</dt>
            <dd>
              <strong id="plan-name">{title(info.plan)}</strong>
              {info.plan === 'free' && ' (no forwarding, replay or retry; endpoints expire after 7 days)'}
            </dd>
            <dt>Retention</dt>
            <dd>captures are kept {info.limits.retention_hours} hours</dd>
          </dl>
          <h2>Usage today (UTC)</h2>
          <div class="side-by-side">
            <Meter id="meter-requests" label="Requests captured today" value={info.usage.requests_today} max={info.limits.requests_per_day} />
            <Meter id="meter-endpoints" label="Endpoints" value={info.usage.endpoints} max={info.limits.endpoints} />
          </div>
          <h2>Upgrade</h2>
          {higher.length === 0 ? (
            <p>You are on the largest plan.</p>
          ) : (
            <form
              class="card"
              aria-labelledby="upgrade-title"
              onSubmit={async (e) => {
                e.preventDefault()
                setBusy(true)
                setUpgradeError(null)
                try {
                  const r = await api<{ checkout_url: string }>('POST', '/api/v1/checkout', { body: { plan: chosen } })
                  // Stripe's hosted page: pay there; the plan changes when Stripe confirms the payment.
                  location.assign(r.data.checkout_url)
                } catch (err) {
                  setUpgradeError(say(err))
                  setBusy(false)
                }
              }}
            >
              <h3 id="upgrade-title">Choose a plan</h3>
              <SelectField
                id="upgrade-plan"
                label="Plan"
                value={chosen}
                options={higher.map((p) => ({ value: p.plan, label: `${title(p.plan)}: $${p.price} a month` }))}
                onValue={setPlan}
                hint="You pay on Stripe's checkout page; the plan applies as soon as Stripe confirms it (usually seconds). Your API key stays the same."
              />
              <FormError error={upgradeError} />
              <button type="submit" class="primary" disabled={busy}>
                Upgrade with Stripe Checkout
              </button>
            </form>
          )}
        </>
      )}
      <h2>API key</h2>
      {newKey ? (
        <div class="keyshow">
          <p>
            <strong>Your new API key, shown only once.</strong> The old one no longer works: update your scripts, the <code>listen</code> CLI and any inspection page opened with it.
          </p>
          <CopyBlock text={newKey} what="new API key" />
          <button type="button" onClick={() => setNewKey(null)}>
            I have saved it
          </button>
        </div>
      ) : (
        <p>
          <button type="button" class="danger" onClick={() => (setRotateError(null), setConfirmRotate(true))}>
            Replace API key…
          </button>
        </p>
      )}
      <ConfirmDialog
        open={confirmRotate}
        title="Replace the API key?"
        confirmLabel="Replace the key now"
        danger
        busy={busy}
        error={rotateError}
        onClose={() => setConfirmRotate(false)}
        onConfirm={async () => {
          setBusy(true)
          try {
            setNewKey(await rotateKey())
            setConfirmRotate(false)
          } catch (err) {
            setRotateError(say(err))
          } finally {
            setBusy(false)
          }
        }}
      >
        <p>The current key stops working at once: scripts, the listen CLI and inspection pages opened with it get 401 until they use the new key. This console signs in again with the new key by itself.</p>
      </ConfirmDialog>
    </Page>
  )
}
