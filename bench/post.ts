// One GraphQL request over HTTP, as a spider sends it; a GraphQL error throws.
export async function post(url: string, token: string | null, query: string, variables: Record<string, unknown>) {
  const r = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await r.json()) as { data?: any; errors?: unknown[] };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}
