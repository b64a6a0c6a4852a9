// The simulator's hosted checkout page (what `checkout_url` opens): product, plan, price, a Pay
// button that posts back to the simulator, and a cancel link. Everything shown is escaped.
export interface PageSession {
  id: string
  status: string
  product: string
  plan: string
  amount: number
  currency: string
  interval: string | null
  email: string | null
  cancel_url: string | null
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!)

export function formatMoney(minor: number, currency: string): string {
  return new Intl.NumberFormat('en-US', { style: 'currency', currency: currency.toUpperCase() }).format(minor / 100)
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body{font-family:system-ui,sans-serif;background:#f6f9fc;color:#1a1f36;display:flex;justify-content:center;padding:48px 16px}
main{background:#fff;border-radius:8px;box-shadow:0 2px 8px rgba(0,0,0,.08);padding:32px;max-width:420px;width:100%}
.price{font-size:32px;font-weight:600;margin:8px 0}.muted{color:#697386}.banner{background:#fff8e1;padding:8px;border-radius:4px;font-size:13px}
button{background:#635bff;color:#fff;border:0;border-radius:6px;padding:12px;width:100%;font-size:16px;cursor:pointer;margin-top:16px}
</style></head><body><main>${body}</main></body></html>`
}

export function checkoutPage(s: PageSession): string {
  const price = formatMoney(s.amount, s.currency)
  const per = s.interval ? ` per ${escapeHtml(s.interval)}` : ''
  if (s.status !== 'open') {
    const msg = s.status === 'complete' ? 'This checkout session has already been paid.' : 'This checkout session has expired.'
    return layout('Checkout', `<h1>Checkout</h1><p id="status">${msg}</p>`)
  }
  const cancel = s.cancel_url ? `<p><a id="cancel" href="${escapeHtml(s.cancel_url)}">Cancel and go back</a></p>` : ''
  return layout(
    `Subscribe to ${s.product}`,
    `<p class="banner">Stripe simulator: no real payment is made.</p>
<h1 id="product">Subscribe to ${escapeHtml(s.product)}</h1>
<p>Plan: <strong id="plan">${escapeHtml(s.plan)}</strong></p>
<p class="price" id="price">${escapeHtml(price)}<span class="muted">${per}</span></p>
${s.email ? `<p class="muted">Billed to <span id="email">${escapeHtml(s.email)}</span></p>` : ''}
<form method="post" action="/c/pay/${encodeURIComponent(s.id)}"><button type="submit" id="pay">Pay ${escapeHtml(price)}</button></form>
${cancel}`,
  )
}

export function messagePage(title: string, message: string): string {
  return layout(title, `<h1>${escapeHtml(title)}</h1><p id="status">${escapeHtml(message)}</p>`)
}
