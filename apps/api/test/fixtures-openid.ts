// A real OpenID provider (oidc-provider) on loopback for the sign-in tests: its own login and
// consent pages are off, and each interaction is finished at once for the account the test names.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Provider from 'oidc-provider';

/**
 * The provider's request handler: its own routes, and every `/interaction/` finished at once, the
 * login for `accountOf(url)` and the consent for every scope and claim asked.
 */
export function finishingInteractions(provider: Provider, accountOf: (url: URL) => string): (req: IncomingMessage, res: ServerResponse) => void {
  const callbackOf = provider.callback();
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://provider');
    if (!url.pathname.startsWith('/interaction/')) return callbackOf(req, res);
    void (async () => {
      const details = await provider.interactionDetails(req, res);
      if (details.prompt.name === 'login') {
        await provider.interactionFinished(req, res, { login: { accountId: accountOf(url) } }, { mergeWithLastSubmission: false });
        return;
      }
      const grant = new provider.Grant({ accountId: details.session!.accountId, clientId: details.params.client_id as string });
      grant.addOIDCScope(String(details.params.scope));
      const missing = (details.prompt.details.missingOIDCClaims as string[] | undefined) ?? [];
      if (missing.length > 0) grant.addOIDCClaims(missing);
      await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
    })().catch((error: unknown) => res.writeHead(500).end(String(error)));
  };
}
