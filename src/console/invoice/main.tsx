// Entry of the invoice console's bundle (built by the service: src/platform/http/console-build.ts):
// the shared stylesheet and this console's own, the router, the session check, then the app.
import '../ui/console.css'
import './invoice.css'
import { render } from 'preact'
import { nameService } from '../ui/api.ts'
import { startRouter } from '../ui/router.ts'
import { App } from './app.tsx'
import { loadSession } from './session.ts'

nameService('The invoice service')
startRouter()
render(<App />, document.getElementById('app')!)
loadSession().catch(() => {
  /* the banner says the service cannot be reached; the check runs again when it is back */
})
