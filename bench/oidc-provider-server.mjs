// panva's oidc-provider as a reference client_credentials server, in its own process.
// Prints its URL on stdout once listening.
import { createServer } from 'node:http';
import Provider from 'oidc-provider';

const server = createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: 'bench',
        client_secret: 'bench-secret-0123456789',
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    features: { clientCredentials: { enabled: true }, devInteractions: { enabled: false } },
    scopes: ['read'],
  });
  const handler = provider.callback();
  server.on('request', (request, response) => void handler(request, response));
  console.log(JSON.stringify({ url: issuer }));
});
