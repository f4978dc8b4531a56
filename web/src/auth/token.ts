// The operator's bearer token: entered once, kept in this browser's localStorage.
const KEY = "ccp.token";

export function loadToken(): string | null {
  try {
    return localStorage.getItem(KEY) || null;
  } catch {
    return null; // storage disabled: behave as a viewer without a token
  }
}

export function saveToken(token: string | null) {
  if (token) localStorage.setItem(KEY, token.trim());
  else localStorage.removeItem(KEY);
}

export const authHeaders = (token: string | null): Record<string, string> => (token ? { authorization: `Bearer ${token}` } : {});
