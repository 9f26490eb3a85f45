// A real OpenID Provider for the single sign-on tests: the `oidc-provider` package on
// 127.0.0.1 (a port the system picks), with one confidential client, PKCE required,
// an RSA signing key made now, and its development login page (any login name is an
// account; no password). Each account's claims (`preferred_username`, `groups`) come
// from `accounts`, which the test may change between sign-ins.
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import Provider from 'oidc-provider';

/**
 * Starts the provider. `redirectUris` are the client's registered callbacks;
 * `accounts` maps a login name to `{ groups: [...] }`.
 */
export async function startOidcProvider({ clientId, clientSecret, redirectUris, accounts }) {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'test-1', alg: 'RS256', use: 'sig' };
  const provider = new Provider(issuer, {
    clients: [{
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: redirectUris,
      response_types: ['code'],
      grant_types: ['authorization_code'],
      token_endpoint_auth_method: 'client_secret_basic',
    }],
    jwks: { keys: [jwk] },
    pkce: { required: () => true },
    // The scope's claims in the ID token itself (Corral reads no userinfo).
    conformIdTokenClaims: false,
    claims: { openid: ['sub'], profile: ['preferred_username', 'groups'], email: ['email'] },
    features: { devInteractions: { enabled: true } },
    cookies: { keys: ['corral-e2e-cookie-key'] },
    async findAccount(_ctx, id) {
      if (!accounts[id]) accounts[id] = { groups: [] };
      return {
        accountId: id,
        async claims() {
          return {
            sub: id,
            preferred_username: id,
            email: `${id}@example.test`,
            groups: accounts[id].groups,
          };
        },
      };
    },
  });
  // Its own warnings about development settings are expected here.
  provider.on('server_error', (_ctx, error) => console.error('oidc-provider:', error));
  server.on('request', provider.callback());
  return {
    issuer,
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
