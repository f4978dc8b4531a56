// One GraphQL request over HTTP; a GraphQL error throws. On node:http with a keep-alive agent
// rather than fetch: the load generator must cost the machine as little as it can (fetch spends
// about as much CPU per request as a bare Yoga server answering it, so a fetch-driven floor
// measures the client, not the server).
import http from "node:http";

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

export function post(url: string, token: string | null, query: string, variables: Record<string, unknown>): Promise<any> {
  const body = JSON.stringify({ query, variables });
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: "POST",
        agent,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          try {
            const parsed = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { data?: any; errors?: unknown[] };
            if (parsed.errors) reject(new Error(JSON.stringify(parsed.errors)));
            else resolve(parsed.data);
          } catch (e) {
            reject(new Error(`HTTP ${res.statusCode}: ${(e as Error).message}`));
          }
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}
