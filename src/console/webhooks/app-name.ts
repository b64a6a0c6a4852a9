// The console's name in document titles ("Endpoints · Webhooks console").
export const APP = 'Webhooks console'
