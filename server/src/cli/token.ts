// npm run token -- create --role spider|admin|viewer [--name N]   (the token alone on the last line)
// npm run token -- list | revoke <id|prefix>
import { Command, InvalidArgumentError } from "commander";
import { createToken, listTokens, parseRole, revokeToken } from "../auth/tokens.ts";
import { fail, openCliDatabase } from "./shared.ts";

const program = new Command("token").description("Manage API bearer tokens (stored hashed; shown once).");

program
  .command("create")
  .description("create a token and print it once, alone on the last line")
  .requiredOption("--role <role>", "spider | admin | viewer", (v) => {
    const role = parseRole(v);
    if (!role) throw new InvalidArgumentError("must be spider, admin or viewer");
    return role;
  })
  .option("--name <name>", "who or what uses it", "")
  .action(async (opts) => {
    const db = await openCliDatabase();
    try {
      const name = (opts.name as string) || `${String(opts.role).toLowerCase()}-${new Date().toISOString().slice(0, 10)}`;
      if (name.length > 100) throw new Error("--name is longer than 100 characters");
      const { token, row } = await createToken(db, opts.role, name);
      console.error(`created token #${row.id} "${row.name}" with role ${row.role}; it is shown only now:`);
      console.log(token);
    } catch (e) {
      fail(e);
    } finally {
      await db.close();
    }
  });

program
  .command("list")
  .description("list tokens (prefix, role, last use); never the tokens themselves")
  .action(async () => {
    const db = await openCliDatabase();
    try {
      const rows = await listTokens(db);
      console.table(
        rows.map((r) => ({
          id: r.id,
          name: r.name,
          role: r.role,
          prefix: r.prefix,
          created: r.createdAt.toISOString(),
          lastUsed: r.lastUsedAt?.toISOString() ?? "",
          revoked: r.revokedAt?.toISOString() ?? "",
        })),
      );
    } finally {
      await db.close();
    }
  });

program
  .command("revoke")
  .argument("<idOrPrefix>", "token id or its printed prefix")
  .description("revoke a token; requests with it get UNAUTHENTICATED from then on")
  .action(async (idOrPrefix: string) => {
    const db = await openCliDatabase();
    try {
      const n = await revokeToken(db, idOrPrefix);
      if (n === 0) fail(new Error(`no live token matches ${idOrPrefix}`));
      console.log(`revoked ${n} token(s)`);
    } finally {
      await db.close();
    }
  });

await program.parseAsync();
