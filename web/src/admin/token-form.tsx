// Sign in once with a bearer token (kept in localStorage); the server says what role it has.
import { useState } from "react";
import type { Role } from "../gql/graphql.ts";

export function TokenForm(props: { role: Role | null | undefined; hasToken: boolean; onToken: (token: string | null) => void }) {
  const [open, setOpen] = useState(false);
  const [value, setValue] = useState("");
  if (props.hasToken && !open) {
    return (
      <div className="token">
        <span className="role" data-testid="role">
          {props.role ?? "unknown token"}
        </span>
        <button type="button" className="link" onClick={() => props.onToken(null)}>
          Sign out
        </button>
      </div>
    );
  }
  if (!open) {
    return (
      <div className="token">
        <span className="role" data-testid="role">
          {props.role ?? "viewer (no token)"}
        </span>
        <button type="button" className="link" onClick={() => setOpen(true)}>
          Sign in
        </button>
      </div>
    );
  }
  return (
    <form
      className="token"
      onSubmit={(e) => {
        e.preventDefault();
        if (value.trim()) props.onToken(value.trim());
        setOpen(false);
      }}
    >
      <label>
        Token
        <input type="password" autoComplete="off" value={value} onChange={(e) => setValue(e.target.value)} placeholder="ccp_…" />
      </label>
      <button type="submit">Use token</button>
    </form>
  );
}
