/** RFC 8693 / RFC 7523 identifiers shared by the third-party exchange and impersonation. */
export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
export const JWT_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
export const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
