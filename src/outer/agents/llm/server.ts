/** Reaching the server beside its chat completions: its root URL and the headers of a JSON request. */

/** The server's root URL (the base URL without its `/v1` suffix), for vLLM's admin endpoints. */
export function serverRoot(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
}

/** The headers of a JSON request to the server, with the API key from `apiKeyEnv` when it is set. */
export function serverHeaders(apiKeyEnv: string): Record<string, string> {
  const key = process.env[apiKeyEnv];
  return { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) };
}
